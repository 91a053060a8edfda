package gitstore

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestWarmUpReadsWhatThePushWalks: the warm-up during the fetch keeps in
// the sync's memo every tree the push's walk of our new commits reads;
// stopped, it reads nothing; bounded, it stops at its share of the memo.
func TestWarmUpReadsWhatThePushWalks(t *testing.T) {
	cases := []struct {
		name    string
		ours    int  // our commits after the tracking ref
		stopped bool // the fetch ended before the warm-up began
		bound   int  // warmMemoMax, when set
	}{
		{name: "many commits", ours: 30},
		{name: "a hundred commits", ours: 100}, // (fewer than ~28 are written loose, which the memo does not keep)
		{name: "stopped", ours: 30, stopped: true},
		{name: "bounded", ours: 30, bound: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.bound > 0 {
				old := warmMemoMax
				warmMemoMax = c.bound
				t.Cleanup(func() { warmMemoMax = old })
			}
			r, _, err := Init(filepath.Join(t.TempDir(), "mem.git"))
			if err != nil {
				t.Fatal(err)
			}
			appendIDs(t, r, ids("base", 40)...)
			known := mustHead(t, r)
			appendIDs(t, r, ids("o", c.ours)...)
			ours := mustHead(t, r)
			have, err := r.ancestry(known)
			if err != nil {
				t.Fatal(err)
			}
			objs, _, err := r.missingObjects(ours, known, have)
			if err != nil {
				t.Fatal(err)
			}
			s, done, err := r.forSync()
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			var stop atomic.Bool
			stop.Store(c.stopped)
			s.warm(&stop, ours, known, plumbing.ZeroHash, nil)
			var trees, kept int
			for _, h := range objs {
				if _, err := r.st.getTree(h); err != nil {
					continue // a blob or a commit
				}
				trees++
				if s.st.memo.trees[h] != nil {
					kept++
				}
			}
			if trees < 3 {
				t.Fatalf("the push walks %d trees", trees)
			}
			switch {
			case c.stopped:
				if len(s.st.memo.trees) != 0 {
					t.Fatalf("stopped: the memo keeps %d trees", len(s.st.memo.trees))
				}
			case c.bound > 0:
				if kept == 0 || kept >= trees {
					t.Fatalf("bounded: %d of the walk's %d trees kept", kept, trees)
				}
			default:
				if kept != trees {
					t.Fatalf("%d of the walk's %d trees kept", kept, trees)
				}
			}
			if len(s.st.memo.reading) != 0 {
				t.Fatalf("%d reads left claimed", len(s.st.memo.reading))
			}
		})
	}
}

// TestSyncWithWarmUpIsTheSyncWithout: each kind of sync gives the same
// result, the same tree and the same remote with the warm-up as without.
func TestSyncWithWarmUpIsTheSyncWithout(t *testing.T) {
	cases := []struct {
		name string
		// setup returns the memory to sync with the remote at url
		setup func(t *testing.T, url string) *Repo
	}{
		{"merge", func(t *testing.T, url string) *Repo {
			r := memWith(t, url, ids("a", 5)...)
			mustSync(t, r)
			appendIDs(t, memWith(t, url), ids("x", 1)...)
			other := memWith(t, url)
			mustSync(t, other)
			appendIDs(t, other, ids("b", 7)...)
			mustSync(t, other)
			appendIDs(t, r, ids("c", 9)...)
			return r
		}},
		{"push", func(t *testing.T, url string) *Repo {
			r := memWith(t, url, ids("a", 5)...)
			mustSync(t, r)
			appendIDs(t, r, ids("c", 9)...)
			return r
		}},
		{"fast-forward", func(t *testing.T, url string) *Repo {
			r := memWith(t, url, ids("a", 5)...)
			mustSync(t, r)
			other := memWith(t, url)
			mustSync(t, other)
			appendIDs(t, other, ids("b", 7)...)
			mustSync(t, other)
			return r
		}},
		{"first sync", func(t *testing.T, url string) *Repo {
			mustSync(t, memWith(t, url, ids("a", 5)...))
			return memWith(t, url, ids("c", 9)...)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got [2]string
			for i, noWarm := range []bool{false, true} {
				url := bareRemote(t, t.TempDir(), "remote.git")
				r := c.setup(t, url)
				res, err := r.Sync(context.Background(), "origin", SyncOptions{noWarm: noWarm})
				if err != nil {
					t.Fatal(err)
				}
				head := mustHead(t, r)
				tree, err := r.treeOf(head)
				if err != nil {
					t.Fatal(err)
				}
				remote := gitOut(t, "--git-dir", url, "rev-parse", "main")
				if remote[:40] != head.String() || res.RemoteHead != head {
					t.Fatalf("main %s, the remote's %s, report %+v", head, remote, res)
				}
				gitOut(t, "--git-dir", r.Dir(), "fsck", "--strict", "--no-progress")
				gitOut(t, "--git-dir", url, "fsck", "--strict", "--no-progress")
				got[i] = fmt.Sprintf("tree %s fetched %d merged %d pushed %d ff %v merge %v rounds %d exchanges %d",
					tree, res.Fetched, res.Merged, res.Pushed, res.FastForward, !res.MergeCommit.IsZero(), res.Rounds, len(exchangeSet(t, r.Dir())))
			}
			if got[0] != got[1] {
				t.Fatalf("with the warm-up: %s\nwithout: %s", got[0], got[1])
			}
		})
	}
}
