package gitstore

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Sync relies on this: rewriting a history already rewritten for some
// tombstones, with more of them, gives the same commits as rewriting the
// original with all of them at once — so two machines that learned the
// same tombstones in different orders (or the forgetting machine and one
// that rewrote the remote's main on its own) agree commit for commit, and
// a rewrite is recognised as explained by the tombstones. Random histories
// with union merges (side branches merged back), seed logged.
func TestRewriteComposes(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for round := 0; round < 6; round++ {
		r := newRepo(t)
		var paths []string
		n := 0
		appendSome := func(k int) {
			var es []Entry
			for i := 0; i < k; i++ {
				e := testEntry(fmt.Sprintf("r%d-%d", round, n))
				n++
				paths = append(paths, e.Path)
				es = append(es, e)
			}
			if _, err := r.Append(es, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		for step := 0; step < 12; step++ {
			if rng.Intn(3) > 0 {
				appendSome(1 + rng.Intn(3))
				continue
			}
			// A side branch: commits on an older main, merged back.
			base, _ := r.Head()
			appendSome(1 + rng.Intn(2))
			mine, _ := r.Head()
			if err := r.setRef(MainRef, base); err != nil {
				t.Fatal(err)
			}
			appendSome(1 + rng.Intn(2))
			theirs, _ := r.Head()
			m, err := r.mergeCommit(mine, theirs, "Merge memory from side\n")
			if err != nil {
				t.Fatal(err)
			}
			if err := r.setRef(MainRef, m); err != nil {
				t.Fatal(err)
			}
		}
		tip, _ := r.Head()
		var p1, all []string
		for _, p := range paths {
			switch rng.Intn(4) {
			case 0:
				p1 = append(p1, p)
				all = append(all, p)
			case 1:
				all = append(all, p)
			}
		}
		rewrite := func(paths []string, from plumbing.Hash) plumbing.Hash {
			w := r.NewRewriter(paths)
			h, err := w.Rewrite(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			return h
		}
		once := rewrite(all, tip)
		twice := rewrite(all, rewrite(p1, tip))
		if once != twice {
			t.Fatalf("round %d: rewriting for %d paths then for %d gives %s, at once %s", round, len(p1), len(all), twice, once)
		}
		if again := rewrite(all, once); again != once {
			t.Fatalf("round %d: a rewritten history rewritten again changed: %s → %s", round, once, again)
		}
		if got := rewrite(nil, tip); got != tip {
			t.Fatalf("round %d: a rewrite dropping nothing changed the history", round)
		}
	}
}
