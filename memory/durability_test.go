package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
)

func fsckStrict(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// mustCheck runs `git mem check` and fails on any problem.
func mustCheck(t *testing.T, m *Memory) *CheckReport {
	t.Helper()
	rep, err := m.Check(context.Background(), false)
	if err != nil {
		t.Fatalf("check: %v: %+v", err, rep)
	}
	return rep
}

// bleveDocs opens the current generation and counts what Bleve itself
// holds (Verify compares Bleve's count with the table's).
func bleveDocs(t *testing.T, m *Memory) map[string]string {
	t.Helper()
	ix, release, err := m.OpenIndex(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	docs, err := ix.Docs()
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// Eight writers, each with its own Memory (its own lock files: flock is per
// open file, as between processes), add with indexing while two searchers
// search: no search fails, and the index ends holding exactly main's
// exchanges (the lost-documents bug: 3,040 of 3,099 with "up to date").
func TestConcurrentAddsIndexExactlyMain(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	mustAdd(t, m, ex("seed", "s", "2026-01-01T00:00:00Z", "seed exchange about the zebra gateway", "ok"))
	const writers, batches, per = 8, 6, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches+100)
	stop := make(chan struct{})
	for s := 0; s < 2; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Open(m.Repo.Dir())
			if err != nil {
				errs <- err
				return
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := r.Search(ctx, SearchQuery{Text: "zebra gateway retries"}); err != nil {
					errs <- fmt.Errorf("search beside writers: %w", err)
					return
				}
			}
		}()
	}
	var wwg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wwg.Add(1)
		go func(w int) {
			defer wwg.Done()
			r, err := Open(m.Repo.Dir())
			if err != nil {
				errs <- err
				return
			}
			for b := 0; b < batches; b++ {
				var exs []*exchange.Exchange
				for i := 0; i < per; i++ {
					id := fmt.Sprintf("w%d-b%d-%d", w, b, i)
					exs = append(exs, ex(id, fmt.Sprintf("s%d", w), "2026-02-01T00:00:00Z",
						"zebra gateway retries in "+id, "fixed the retry loop of "+id))
				}
				rep, err := r.Add(ctx, exs, AddOptions{})
				if err != nil {
					errs <- err
					return
				}
				if rep.IndexErr != "" {
					errs <- fmt.Errorf("index: %s", rep.IndexErr)
					return
				}
			}
		}(w)
	}
	wwg.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := 1 + writers*batches*per
	docs := bleveDocs(t, m)
	if len(docs) != want {
		t.Fatalf("index holds %d documents, main %d", len(docs), want)
	}
	st, err := m.Status()
	if err != nil || !st.UpToDate || st.Exchanges != want {
		t.Fatalf("status: %+v %v", st, err)
	}
	mustCheck(t, m)
	fsckStrict(t, m.Repo.Dir())
}

func searchJSON(t *testing.T, m *Memory, q string) string {
	t.Helper()
	res, _, err := m.Search(context.Background(), SearchQuery{Text: q, K: 5})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	b, _ := json.Marshal(res)
	return string(b)
}

// Every index file, one at a time, truncated, zeroed in the middle or
// deleted: the next search rebuilds and answers exactly as before, and
// check is clean after.
func TestDamagedIndexFilesAreRebuilt(t *testing.T) {
	m := newMemory(t)
	var exs []*exchange.Exchange
	for i := 0; i < 60; i++ {
		exs = append(exs, ex(fmt.Sprintf("e%d", i), fmt.Sprintf("s%d", i%7), fmt.Sprintf("2026-03-%02dT10:00:00Z", 1+i%28),
			fmt.Sprintf("the webhook retry timeout %d fails in payment %d", i, i*7), fmt.Sprintf("raised the timeout to %ds in config %d", i, i)))
	}
	mustAdd(t, m, exs...)
	const q = "webhook retry timeout payment"
	before := searchJSON(t, m, q)
	gen := m.currentGen()
	var files []string
	filepath.WalkDir(gen, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(gen, p)
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	if len(files) < 6 {
		t.Fatalf("index files: %v", files)
	}
	damage := map[string]func(p string) error{
		"truncated": func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, fi.Size()/2)
		},
		"zeroed": func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n := min(4096, len(b)/2)
			copy(b[len(b)/4:], make([]byte, n))
			return os.WriteFile(p, b, 0o644)
		},
		"deleted": os.Remove,
		// A writer killed while appending to a table leaves part of a
		// row past the committed length (search's append-only tables).
		"tail": func(p string) error {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			_, err = f.Write([]byte("part of a row of a killed writer"))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		},
	}
	for _, f := range files {
		for _, how := range []string{"truncated", "zeroed", "deleted", "tail"} {
			t.Run(how+" "+f, func(t *testing.T) {
				gen := m.currentGen()
				if err := damage[how](filepath.Join(gen, f)); err != nil {
					t.Fatal(err)
				}
				if got := searchJSON(t, m, q); got != before {
					t.Fatalf("after %s %s:\n got %s\nwant %s", how, f, got, before)
				}
				mustCheck(t, m)
			})
		}
	}
}

// A rewound main and a rewritten main: search, show, log, stats, status
// and check all agree with main.
func TestRewoundAndRewrittenMainAgreeEverywhere(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	mustAdd(t, m, ex("a", "s", "2026-01-01T00:00:00Z", "alpha heron migration", "done"))
	mustAdd(t, m, ex("b", "s", "2026-01-02T00:00:00Z", "bravo heron cache", "done"))
	mustAdd(t, m, ex("c", "s", "2026-01-03T00:00:00Z", "charlie heron dropped", "done"))
	if got := searchIDs(t, m, "charlie heron"); strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("before: %v", got)
	}
	agree := func(want []string) {
		t.Helper()
		sort.Strings(want)
		got := searchIDs(t, m, "heron")
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("search %v, main %v", got, want)
		}
		logged := logIDs(t, m)
		sort.Strings(logged)
		if strings.Join(logged, ",") != strings.Join(want, ",") {
			t.Fatalf("log %v, main %v", logged, want)
		}
		st, err := m.Stats()
		if err != nil || st.Exchanges != len(want) {
			t.Fatalf("stats %+v %v", st, err)
		}
		s, err := m.Status()
		if err != nil || !s.UpToDate || s.IndexDocs != len(want) || s.Exchanges != len(want) {
			t.Fatalf("status %+v %v", s, err)
		}
		mustCheck(t, m)
	}
	// Rewound, as `git update-ref refs/heads/main main~1` does.
	syncGit(t, "--git-dir", m.Repo.Dir(), "update-ref", "refs/heads/main", "main~1")
	agree([]string{"a", "b"})
	if _, _, err := m.Show("c"); err == nil {
		t.Fatal("show finds the exchange that left main")
	}
	// Rewritten: b replaced by d on top of a.
	syncGit(t, "--git-dir", m.Repo.Dir(), "update-ref", "refs/heads/main", "main~1")
	mustAdd(t, m, ex("d", "s", "2026-01-04T00:00:00Z", "delta heron rewrite", "done"))
	agree([]string{"a", "d"})
	_ = ctx
}

// Exchanges whose text holds NUL and other control characters: every
// commit passes `git fsck --strict`, and a sync to a bare remote that
// checks objects (receive.fsckObjects, what hosted remotes run) works.
func TestControlCharactersPassFsckAndSync(t *testing.T) {
	remote := syncRemote(t)
	syncGit(t, "--git-dir", remote, "config", "receive.fsckObjects", "true")
	m := memoryOn(t, remote)
	mustAdd(t, m,
		ex("nul", "s", "2026-01-01T00:00:00Z", "a NUL \x00 in the middle of the prompt", "and \x01\x02\x1b[31m escapes\x7f in the reply"),
		ex("cr", "s", "2026-01-02T00:00:00Z", "carriage\rreturn and form\ffeed \u0085 next line", "tab\tseparated"),
	)
	fsckStrict(t, m.Repo.Dir())
	mustSyncMem(t, m)
	fsckStrict(t, remote)
	_, blob, err := m.Verbatim("nul")
	if err != nil || !bytes.Contains(blob, []byte(`\u0000`)) {
		t.Fatalf("the blob keeps the exchange's own text: %s %v", blob, err)
	}
}

// Ids a trailer cannot carry exactly are refused with the reason.
func TestIDsATrailerCannotCarryAreRefused(t *testing.T) {
	for _, id := range []string{"   ", "x  y", " lead", "trail ", "new\nline", "tab\tid", "nul\x00"} {
		e := ex(id, "s", "", "hello", "world")
		if err := e.Validate(); err == nil || !strings.Contains(err.Error(), `"id"`) {
			t.Errorf("id %q: err = %v", id, err)
		}
	}
	for _, id := range []string{"a", "sess/uuid-1", "aider:proj:2026-01-01/3", "x y"} {
		if err := ex(id, "s", "", "hello", "world").Validate(); err != nil {
			t.Errorf("id %q refused: %v", id, err)
		}
	}
}

// An add never waits for another process's index rebuild (that one catches
// up with main when it switches).
func TestAddDoesNotWaitForARebuild(t *testing.T) {
	m := newMemory(t)
	mustAdd(t, m, ex("a", "s", "2026-01-01T00:00:00Z", "alpha heron", "done"), ex("b", "s", "2026-01-02T00:00:00Z", "bravo heron", "done"))
	syncGit(t, "--git-dir", m.Repo.Dir(), "update-ref", "refs/heads/main", "main~1") // the index now needs a rebuild
	bl, err := gitstore.LockFile(filepath.Join(m.Repo.MemDir(), buildLockFile), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := m.Add(context.Background(), []*exchange.Exchange{ex("c", "s", "2026-01-03T00:00:00Z", "charlie heron", "done")}, AddOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("add waited for the rebuild lock")
	}
	bl.Unlock()
	if got := searchIDs(t, m, "heron"); strings.Join(got, ",") != "a,c" {
		t.Fatalf("search after the rebuild: %v", got)
	}
	fsckStrict(t, m.Repo.Dir())
}
