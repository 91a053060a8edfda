package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/search/vector"
)

// exchangeFile writes n exchanges (ids prefix0…) as a JSONL file.
func exchangeFile(t *testing.T, prefix string, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s%d", prefix, i)
		fmt.Fprintf(&b, `{"id":%q,"session":"s%d","time":"2026-03-%02dT00:%02d:00Z","turns":[{"role":"user","text":"the heron gateway retries %s in step %d"},{"role":"assistant","text":"fixed the retry loop of %s"}]}`+"\n",
			id, i%3, 1+i%28, i%60, id, i, id)
	}
	file := filepath.Join(t.TempDir(), prefix+".jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// genFiles reads the current generation's tables that do not depend on
// commit ids or Bleve's merges.
func genFiles(t *testing.T, m *Memory) map[string][]byte {
	t.Helper()
	l, err := m.lockIndex(true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	gen := m.currentGen()
	if gen == "" {
		t.Fatal("no current generation")
	}
	out := map[string][]byte{}
	for _, f := range []string{"minhash.bin", "vectors.f32", "context.bin", "links.bin", "events.json"} {
		b, err := os.ReadFile(filepath.Join(gen, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	// The vectors' rows, whatever the file's layout (a catch-up appends or
	// writes whole by how many rows it adds: search.worthAppending).
	var man struct {
		Vecs vector.State `json:"vectors"`
	}
	b, err := os.ReadFile(filepath.Join(gen, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(b, &man)
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := vector.ReadFlatState(filepath.Join(gen, "vectors.f32"), man.Vecs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows bytes.Buffer
	for i := 0; i < f.Len(); i++ {
		for _, x := range f.Row(i) {
			rows.WriteString(strconv.FormatUint(uint64(math.Float32bits(x)), 16) + " ")
		}
		rows.WriteString("\n")
	}
	out["vector rows"] = rows.Bytes()
	return out
}

// mainIDs lists the exchange ids in main, sorted.
func mainIDs(t *testing.T, m *Memory) []string {
	t.Helper()
	out := syncGit(t, "--git-dir", m.Repo.Dir(), "log", "--format=%(trailers:key=Exchange,valueonly)", "main")
	var ids []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ids = append(ids, l)
		}
	}
	sort.Strings(ids)
	return ids
}

// indexedIDs lists the exchange ids the index holds, sorted.
func indexedIDs(t *testing.T, m *Memory) []string {
	t.Helper()
	var ids []string
	for id := range bleveDocs(t, m) {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// generations counts the index folders (mem/index/g-…).
func generations(t *testing.T, m *Memory) int {
	t.Helper()
	ents, err := os.ReadDir(m.IndexDir())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "g-") {
			n++
		}
	}
	return n
}

// TestAddFilesIndexesWhileItAdds: AddFiles indexes each stored batch while
// the next is added — feeding a rebuild when the memory has no usable
// index, catching up in place when it has — and ends with the index equal
// to main: the ids Bleve holds are main's, status is up to date, check is
// clean, one generation is left, and the tables that do not depend on
// commit ids or Bleve's merges are byte for byte those of the same add
// indexed once after it (as before session 18).
func TestAddFilesIndexesWhileItAdds(t *testing.T) {
	seed := exchangeFile(t, "seed", 4)
	file := exchangeFile(t, "x", 11)
	cases := []struct {
		name   string
		before func(t *testing.T, m *Memory) // what the memory holds first
		// rebuilds: the passes feed a rebuild (no usable index), whose
		// vectors.f32 is then written once, as by a rebuild after the add;
		// catch-ups in place append or write whole by how many rows each
		// adds, so there only the rows are compared.
		rebuilds bool
	}{
		{"fresh memory", func(t *testing.T, m *Memory) {}, true},
		{"index current", func(t *testing.T, m *Memory) {
			if _, err := m.AddFiles(context.Background(), []string{seed}, nil, "exchange", AddOptions{}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"index damaged", func(t *testing.T, m *Memory) {
			if _, err := m.AddFiles(context.Background(), []string{seed}, nil, "exchange", AddOptions{}); err != nil {
				t.Fatal(err)
			}
			l, err := m.lockIndex(true)
			if err != nil {
				t.Fatal(err)
			}
			gen := m.currentGen()
			l.Unlock()
			if err := os.WriteFile(filepath.Join(gen, "minhash.bin"), []byte("damaged"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"main rewound", func(t *testing.T, m *Memory) {
			if _, err := m.AddFiles(context.Background(), []string{seed}, nil, "exchange", AddOptions{}); err != nil {
				t.Fatal(err)
			}
			syncGit(t, "--git-dir", m.Repo.Dir(), "update-ref", "refs/heads/main", "main~1")
		}, true},
	}
	defer func(b int) { addBatch = b }(addBatch)
	defer func() { aheadPassed = nil }()
	for _, c := range cases {
		for _, batch := range []int{1, 3, 1000} {
			t.Run(fmt.Sprintf("%s/batches of %d", c.name, batch), func(t *testing.T) {
				ctx := context.Background()
				addBatch = batch
				// The reference: the same add, indexed once after it.
				ref := newMemory(t)
				c.before(t, ref)
				aheadPassed = func(bool, error) { t.Error("a pass ran for an add with NoIndex") }
				if _, err := ref.AddFiles(ctx, []string{file}, nil, "exchange", AddOptions{NoIndex: true}); err != nil {
					t.Fatal(err)
				}
				if _, err := ref.UpdateIndex(ctx); err != nil {
					t.Fatal(err)
				}

				aheadPassed = nil
				m := newMemory(t)
				c.before(t, m)
				var mu sync.Mutex
				passes, fed := 0, 0
				aheadPassed = func(rebuilding bool, err error) {
					mu.Lock()
					defer mu.Unlock()
					passes++
					if rebuilding {
						fed++
					}
					if err != nil {
						t.Errorf("pass: %v", err)
					}
				}
				rep, err := m.AddFiles(ctx, []string{file}, nil, "exchange", AddOptions{})
				aheadPassed = nil
				if err != nil || !rep.Indexed || rep.IndexErr != "" || rep.Added != 11 {
					t.Fatalf("add: %+v %v", rep, err)
				}
				if passes == 0 || (fed > 0) != c.rebuilds {
					t.Fatalf("%d passes, %d fed a rebuild; want a rebuild: %v", passes, fed, c.rebuilds)
				}
				// Status first: a search (indexedIDs) would catch up on its own.
				st, err := m.Status()
				if err != nil || !st.UpToDate || st.Exchanges != len(mainIDs(t, m)) {
					t.Fatalf("status: %+v %v", st, err)
				}
				if got, want := indexedIDs(t, m), mainIDs(t, m); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("index holds %v\nmain holds %v", got, want)
				}
				if n := generations(t, m); n != 1 {
					t.Fatalf("%d generations left", n)
				}
				got, want := genFiles(t, m), genFiles(t, ref)
				for f := range want {
					if f == "vectors.f32" && !c.rebuilds {
						continue
					}
					if !bytes.Equal(got[f], want[f]) {
						at := 0
						for at < min(len(got[f]), len(want[f])) && got[f][at] == want[f][at] {
							at++
						}
						t.Errorf("%s differs from the add indexed after it (%d and %d bytes, from byte %d)", f, len(got[f]), len(want[f]), at)
					}
				}
				mustCheck(t, m)
			})
		}
	}
}

// TestIndexAheadKilledMidRebuild: an add killed while its passes feed a
// rebuild (the build lock dropped with the process, the new generation
// half-built and never named by CURRENT) leaves nothing a later add or
// search trusts: the next add rebuilds, indexes exactly main, and deletes
// the half-built folder.
func TestIndexAheadKilledMidRebuild(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t)
	if _, err := m.AddFiles(ctx, []string{exchangeFile(t, "a", 5)}, nil, "exchange", AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	a := &indexAhead{ctx: ctx, m: m}
	if err := a.pass(); err != nil || a.b == nil {
		t.Fatalf("first pass: %v, rebuilding %v", err, a.b != nil)
	}
	killed := a.b.gen
	defer a.b.ix.Close()
	a.b.bl.Unlock() // the kernel drops a dead process's flock
	if st, err := m.Status(); err != nil || st.UpToDate {
		t.Fatalf("status during the killed rebuild: %+v %v", st, err)
	}

	r, err := Open(m.Repo.Dir())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.AddFiles(ctx, []string{exchangeFile(t, "b", 4)}, nil, "exchange", AddOptions{})
	if err != nil || !rep.Indexed {
		t.Fatalf("add after the kill: %+v %v", rep, err)
	}
	if st, err := r.Status(); err != nil || !st.UpToDate || st.IndexDocs != 9 {
		t.Fatalf("status after the add: %+v %v", st, err)
	}
	if got, want := indexedIDs(t, r), mainIDs(t, r); len(want) != 9 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("index holds %v\nmain holds %v", got, want)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Fatalf("the killed rebuild's folder is still there: %v", err)
	}
	if n := generations(t, r); n != 1 {
		t.Fatalf("%d generations left", n)
	}
	mustCheck(t, r)
}

// TestAddFilesDoesNotWaitForARebuild: while another process holds the
// build lock, an add's passes leave the index to it (it catches up with
// main when it switches) and the add returns; the next search has every
// exchange.
func TestAddFilesDoesNotWaitForARebuild(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t)
	bl, err := gitstore.LockFile(filepath.Join(m.Repo.MemDir(), buildLockFile), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		rep, err := m.AddFiles(ctx, []string{exchangeFile(t, "c", 3)}, nil, "exchange", AddOptions{})
		if err == nil && (!rep.Indexed || rep.Added != 3) {
			err = fmt.Errorf("report %+v", rep)
		}
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
	if got := searchIDs(t, m, "heron gateway"); len(got) != 3 {
		t.Fatalf("search after the rebuild: %v", got)
	}
}

// TestConcurrentAddFilesIndexExactlyMain: writers, each with its own
// Memory (its own lock files, as processes), add files in small batches
// into a memory with no index yet, so that their passes race to begin,
// feed and switch rebuilds and then catch up in place, while two searchers
// search: no search or add fails, and the index ends holding exactly
// main's exchanges.
func TestConcurrentAddFilesIndexExactlyMain(t *testing.T) {
	defer func(b int) { addBatch = b }(addBatch)
	addBatch = 2
	m := newMemory(t)
	ctx := context.Background()
	const writers, files, per = 4, 3, 5
	var paths [writers][files]string
	for w := range writers {
		for f := range files {
			paths[w][f] = exchangeFile(t, fmt.Sprintf("w%d-f%d-", w, f), per)
		}
	}
	errs := make(chan error, writers*files+10)
	stop := make(chan struct{})
	var swg sync.WaitGroup
	for range 2 {
		swg.Add(1)
		go func() {
			defer swg.Done()
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
				if _, _, err := r.Search(ctx, SearchQuery{Text: "heron gateway retries"}); err != nil {
					errs <- fmt.Errorf("search beside writers: %w", err)
					return
				}
			}
		}()
	}
	var wwg sync.WaitGroup
	for w := range writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			r, err := Open(m.Repo.Dir())
			if err != nil {
				errs <- err
				return
			}
			for f := range files {
				rep, err := r.AddFiles(ctx, []string{paths[w][f]}, nil, "exchange", AddOptions{})
				if err == nil && rep.IndexErr != "" {
					err = fmt.Errorf("index: %s", rep.IndexErr)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wwg.Wait()
	close(stop)
	swg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := mainIDs(t, m)
	if len(want) != writers*files*per {
		t.Fatalf("main holds %d exchanges", len(want))
	}
	// Status first: a search (indexedIDs) would catch up on its own.
	st, err := m.Status()
	if err != nil || !st.UpToDate || st.Exchanges != len(want) || st.IndexDocs != len(want) {
		t.Fatalf("status: %+v %v", st, err)
	}
	if got := indexedIDs(t, m); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("index holds %d, main %d", len(got), len(want))
	}
	mustCheck(t, m)
	fsckStrict(t, m.Repo.Dir())
}

// TestIndexAheadSwitchCatchesUp: what another writer stores while an add's
// passes feed a rebuild (its own pass finds the build lock held and leaves
// the index to this one) is indexed when the add switches: the index ends
// holding exactly main.
func TestIndexAheadSwitchCatchesUp(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t)
	if _, err := m.AddFiles(ctx, []string{exchangeFile(t, "a", 5)}, nil, "exchange", AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	finish := m.startIndexAhead(ctx)
	a := m.ahead.Load()
	if err := a.pass(); err != nil || a.b == nil {
		t.Fatalf("first pass: %v, rebuilding %v", err, a.b != nil)
	}
	r, err := Open(m.Repo.Dir())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.AddFiles(ctx, []string{exchangeFile(t, "b", 4)}, nil, "exchange", AddOptions{})
	if err != nil || !rep.Indexed || rep.Added != 4 {
		t.Fatalf("the other writer: %+v %v", rep, err)
	}
	if ran, err := finish(); !ran || err != nil {
		t.Fatalf("finish: %v %v", ran, err)
	}
	// Status first: a search (indexedIDs) would catch up on its own.
	if st, err := m.Status(); err != nil || !st.UpToDate || st.IndexDocs != 9 {
		t.Fatalf("status after the switch: %+v %v", st, err)
	}
	if got, want := indexedIDs(t, m), mainIDs(t, m); len(want) != 9 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("index holds %v\nmain holds %v", got, want)
	}
	mustCheck(t, m)
}
