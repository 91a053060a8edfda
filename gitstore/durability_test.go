package gitstore

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// A maintenance repack that runs after a writer put its objects in place
// and before main names them must not delete them: `git repack -a -d`
// (the old background job) kept only what the refs reached and lost whole
// batches ("read commit …: object not found"). Here the repack runs exactly
// in that window, for loose batches and for pack batches.
func TestRepackInTheWritersWindowLosesNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		repack func(r *Repo) error
	}{
		{"maintenance", func(r *Repo) error { return r.Repack() }},
		{"purge", func(r *Repo) error { _, err := r.Purge(time.Minute); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			var hookErr error
			var inHook bool
			testHookBeforeCAS = func(r *Repo) {
				if inHook || tc.name == "purge" {
					// Purge waits for the writer (it holds the objects
					// level shared); run it beside the next batch instead.
					return
				}
				inHook = true
				hookErr = tc.repack(r)
				inHook = false
			}
			defer func() { testHookBeforeCAS = nil }()
			var wg sync.WaitGroup
			stop := make(chan struct{})
			if tc.name == "purge" {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := r.Purge(time.Minute); err != nil {
							hookErr = err
							return
						}
						// A purge follows a forget's rewrite, never another
						// purge at once: back to back on an empty memory
						// they left a polling writer no gap for 30 s
						// (flock does not queue).
						time.Sleep(50 * time.Millisecond)
					}
				}()
			}
			n := 0
			for b, size := range []int{1, 3, 8 * packThreshold, 2, 8 * packThreshold, 1} {
				var es []Entry
				for i := 0; i < size; i++ {
					es = append(es, testEntry(fmt.Sprintf("w%d-%d", b, i)))
				}
				if _, err := r.Append(es, 0); err != nil {
					t.Fatalf("batch %d: %v", b, err)
				}
				n += size
			}
			close(stop)
			wg.Wait()
			if hookErr != nil {
				t.Fatal(hookErr)
			}
			if got := len(countCommits(t, r)); got != n {
				t.Fatalf("%d of %d commits readable", got, n)
			}
			fsck(t, r.Dir())
		})
	}
}

// Purge removes what no ref reaches, in packs and loose, and the reflogs;
// what main holds stays.
func TestPurgeRemovesUnreachable(t *testing.T) {
	r := newRepo(t)
	var es []Entry
	for i := 0; i < 2*packThreshold; i++ {
		es = append(es, testEntry(fmt.Sprintf("p-%d", i)))
	}
	if _, err := r.Append(es, 0); err != nil { // one pack
		t.Fatal(err)
	}
	keep, _ := r.Head()
	gone := Entry{Path: "ex/z/secret.json", Blob: []byte(`{"secret":"hunter2-purge-me"}`), Message: "secret\n\nExchange: secret\n"}
	res, err := r.Append([]Entry{gone}, 0) // loose
	if err != nil {
		t.Fatal(err)
	}
	blob := plumbing.ComputeHash(plumbing.BlobObject, gone.Blob)
	// Main moves back, as forget (or `git update-ref`) does.
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "update-ref", "refs/heads/main", keep.String()).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	os.MkdirAll(filepath.Join(r.Dir(), "logs", "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(r.Dir(), "logs", "refs", "heads", "main"), []byte(res.Commits[0].String()+"\n"), 0o644)
	if _, err := r.Purge(time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, h := range []plumbing.Hash{blob, res.Commits[0]} {
		if err := exec.Command("git", "--git-dir", r.Dir(), "cat-file", "-e", h.String()).Run(); err == nil {
			t.Fatalf("object %s survived the purge", h)
		}
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "logs")); !os.IsNotExist(err) {
		t.Fatalf("reflogs survived: %v", err)
	}
	if got := len(countCommits(t, r)); got != 2*packThreshold {
		t.Fatalf("%d commits after purge", got)
	}
	fsck(t, r.Dir())
}

// Appends running beside purges and background repacks: every append that
// returned is readable, exactly once, and fsck is clean. The seed is logged.
func TestAppendsBesidePurgesAndRepacks(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	r := newRepo(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bgErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			if i%2 == 0 {
				err = r.Repack()
			} else {
				_, err = r.Purge(time.Minute)
			}
			if err != nil {
				mu.Lock()
				bgErr = err
				mu.Unlock()
				return
			}
		}
	}()
	n := 0
	for b := 0; b < 30; b++ {
		size := 1 + rng.Intn(3*packThreshold)
		var es []Entry
		for i := 0; i < size; i++ {
			es = append(es, testEntry(fmt.Sprintf("m%d-%d", b, i)))
		}
		if _, err := r.Append(es, 0); err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		n += size
	}
	close(stop)
	wg.Wait()
	if bgErr != nil {
		t.Fatal(bgErr)
	}
	ids := countCommits(t, r)
	if len(ids) != n {
		t.Fatalf("%d of %d exchanges", len(ids), n)
	}
	for id, c := range ids {
		if c != 1 {
			t.Fatalf("%s stored %d times", id, c)
		}
	}
	fsck(t, r.Dir())
}

func TestLeftoversOfKilledWritersAreRemoved(t *testing.T) {
	r := newRepo(t)
	dir := filepath.Join(r.Dir(), "objects", "pack")
	os.MkdirAll(dir, 0o755)
	old := filepath.Join(dir, "tmp_gitmem_pack_123")
	fresh := filepath.Join(dir, "tmp_gitmem_pack_456")
	os.WriteFile(old, make([]byte, 1<<20), 0o644)
	os.WriteFile(fresh, []byte("x"), 0o644)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	if got := r.Leftovers(); len(got) != 1 || got[0] != old {
		t.Fatalf("leftovers %v", got)
	}
	// A writer holds the objects level: nothing is removed.
	l, err := r.ObjectsShared(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.RemoveLeftovers(); n != 0 {
		t.Fatalf("removed %d while a writer was writing", n)
	}
	l.Unlock()
	if n := r.RemoveLeftovers(); n != 1 {
		t.Fatalf("removed %d", n)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a fresh temporary file went: %v", err)
	}
}

// Packs are written read-only, as git writes them.
func TestPacksAreReadOnly(t *testing.T) {
	r := newRepo(t)
	var es []Entry
	for i := 0; i < 8*packThreshold; i++ {
		es = append(es, testEntry(fmt.Sprintf("ro-%d", i)))
	}
	if _, err := r.Append(es, 0); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "pack-*"))
	if len(packs) < 2 {
		t.Fatalf("packs: %v", packs)
	}
	for _, p := range packs {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o444 {
			t.Errorf("%s is %v, want -r--r--r--", p, fi.Mode().Perm())
		}
	}
}

// A .pack whose .idx is not there yet (git renames the .pack first; a
// repack killed between the two renames leaves it so) does not stop reads:
// git ignores such a pack, and so does the memory.
func TestPackWithoutIdxIsIgnored(t *testing.T) {
	r := newRepo(t)
	var es []Entry
	for i := 0; i < 8*packThreshold; i++ {
		es = append(es, testEntry(fmt.Sprintf("oi-%d", i)))
	}
	if _, err := r.Append(es, 0); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "pack-*.pack"))
	// A fresh copy of the pack under another name, without its .idx.
	b, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(r.Dir(), "objects", "pack", "pack-0123456789abcdef0123456789abcdef01234567.pack")
	if err := os.WriteFile(orphan, b, 0o444); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(countCommits(t, r2)); got != len(es) {
		t.Fatalf("%d of %d commits readable beside a pack without its index", got, len(es))
	}
	if _, ok, err := r2.ReadPath(plumbing.ZeroHash, es[3].Path); err != nil || !ok {
		t.Fatalf("read: %v %v", ok, err)
	}
}

// A pack left under git's temporary name by a killed `git repack` (git
// reads it as a pack, and a later `repack -d` prunes the loose copies of
// its objects) is read as a pack here too.
func TestTemporaryPackOfKilledRepackIsRead(t *testing.T) {
	r := newRepo(t)
	var es []Entry
	for i := 0; i < 8*packThreshold; i++ {
		es = append(es, testEntry(fmt.Sprintf("tp-%d", i)))
	}
	if _, err := r.Append(es, 0); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs %v", packs)
	}
	base := strings.TrimSuffix(packs[0], ".pack")
	hash := strings.TrimPrefix(filepath.Base(base), "pack-")
	tmp := filepath.Join(filepath.Dir(base), ".tmp-4242-pack-"+hash)
	for _, ext := range []string{".pack", ".idx"} {
		if err := os.Rename(base+ext, tmp+ext); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec.Command("git", "--git-dir", r.Dir(), "cat-file", "-e", "HEAD~3").Run(); err != nil {
		t.Fatalf("git does not read the temporary pack either: %v", err)
	}
	r2, err := Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(countCommits(t, r2)); got != len(es) {
		t.Fatalf("%d of %d commits readable from the temporary pack", got, len(es))
	}
	if len(r2.Leftovers()) != 0 {
		t.Fatalf("the temporary pack is taken for a leftover: %v", r2.Leftovers())
	}
}
