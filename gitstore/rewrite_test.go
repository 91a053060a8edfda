package gitstore

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
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
		// The same through the bulk reads (git cat-file), from the first
		// commit on.
		saved := prefetchAfter
		prefetchAfter = 1
		w := r.NewRewriter(all)
		bulk, err := w.Rewrite(tip)
		prefetchAfter = saved
		if err != nil {
			t.Fatal(err)
		}
		if bulk != once || (len(all) > 0 && w.bulkHits == 0) {
			t.Fatalf("round %d: with bulk reads (%d served) %s, without %s", round, w.bulkHits, bulk, once)
		}
		if got := rewrite(nil, tip); got != tip {
			t.Fatalf("round %d: a rewrite dropping nothing changed the history", round)
		}
	}
}

// A history whose trees did not only grow (a plain git commit removed the
// path after it was added) defeats the rewrite's shortcut; forget notices
// the blob is still there and rewrites the whole history.
func TestForgetAfterAPlainDeletionRewritesAll(t *testing.T) {
	r := newRepo(t)
	a, b := testEntry("keep-1"), testEntry("gone-2")
	if _, err := r.Append([]Entry{a, b}, time.Minute); err != nil {
		t.Fatal(err)
	}
	head, _ := r.Head()
	blob, _, err := r.BlobHashAt(head, b.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Someone removes the file with plain git.
	w := r.NewRewriter([]string{b.Path})
	hc, _ := r.Commit(head)
	tree, err := w.tree(hc.TreeHash, w.drop)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	bt := newBatch()
	c, err := bt.commit(&object.Commit{Author: Author, Committer: Author, TreeHash: tree, ParentHashes: []plumbing.Hash{head}, Message: "remove by hand\n\nExchange: none\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bt.writeTo(r); err != nil {
		t.Fatal(err)
	}
	if err := r.setRef(MainRef, c); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Append([]Entry{testEntry("later-3")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Forget([]string{b.Path}, []Tombstone{{Exchange: "gone-2", Blob: blob.String(), Time: time.Now()}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	r.st.refresh()
	if err := r.st.HasEncodedObject(blob); err == nil {
		t.Fatal("the forgotten blob is still in the repo")
	}
	ids := countCommits(t, r)
	if ids["keep-1"] != 1 || ids["later-3"] != 1 || ids["gone-2"] != 0 {
		t.Fatalf("after forget: %v", ids)
	}
	fsck(t, r.Dir())
}

// An append that comes after a forget ended stores nothing the forget
// named, though its caller looked before the forget (an add's batch looked
// up while the batch before it was stored): the tombstones are read again
// under the write lock. Without that check the forgotten exchange is back
// in main.
func TestAppendAfterForgetStoresNoTombstoned(t *testing.T) {
	r := newRepo(t)
	gone, keep := testEntry("gone-1"), testEntry("keep-2")
	if _, err := r.Append([]Entry{gone, keep}, time.Minute); err != nil {
		t.Fatal(err)
	}
	head, _ := r.Head()
	blob, ok, err := r.BlobHashAt(head, gone.Path)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if dead, err := r.Tombstoned([]string{gone.Path}); err != nil || dead[0] {
		t.Fatalf("tombstoned before the forget: %v %v", dead, err)
	}
	// The caller has looked (not tombstoned); now the forget runs.
	if _, err := r.Forget([]string{gone.Path}, []Tombstone{{Exchange: "gone-1", Blob: blob.String(), Time: time.Now()}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	res, err := r.Append([]Entry{gone, testEntry("new-3")}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 1 || res.Forgotten != 1 || !res.Commits[0].IsZero() || res.Commits[1].IsZero() {
		t.Fatalf("append after the forget: %+v", res)
	}
	ids := countCommits(t, r)
	if ids["gone-1"] != 0 || ids["keep-2"] != 1 || ids["new-3"] != 1 {
		t.Fatalf("after the append: %v", ids)
	}
	head, _ = r.Head()
	if _, ok, err := r.BlobHashAt(head, gone.Path); err != nil || ok {
		t.Fatalf("the forgotten exchange is in main again (%v)", err)
	}
	fsck(t, r.Dir())
}

// A rewrite can make the same tree more than once: here the folder ex/1
// holds {keep-1, gone-1} and later {keep-1, gone-1, gone2-1}, and both
// become {keep-1} once the two are dropped. Its pack must hold that tree
// once: a pack that lists an object twice is refused by git ("claims to
// have N objects while index indicates M", "the same object appears twice
// in the pack"), so the purge's git pack-objects failed, the forget stayed
// unfinished and git could read nothing of the pack (fsck: main's commit
// missing). A sync that learned three tombstones of one folder did it.
func TestForgetWritesEachObjectOnce(t *testing.T) {
	r := newRepo(t)
	for _, id := range []string{"keep-1", "gone-1", "other-2", "gone2-1", "other-3", "other2-3"} {
		if _, err := r.Append([]Entry{testEntry(id)}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	head, _ := r.Head()
	var paths []string
	var ts []Tombstone
	for _, id := range []string{"gone-1", "gone2-1"} {
		e := testEntry(id)
		blob, _, err := r.BlobHashAt(head, e.Path)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, e.Path)
		ts = append(ts, Tombstone{Exchange: id, Blob: blob.String(), Time: time.Now()})
	}
	if _, err := r.Forget(paths, ts, time.Minute); err != nil {
		t.Fatal(err)
	}
	ids := countCommits(t, r)
	if ids["keep-1"] != 1 || ids["other-2"] != 1 || ids["other-3"] != 1 || ids["other2-3"] != 1 || ids["gone-1"] != 0 || ids["gone2-1"] != 0 {
		t.Fatalf("after forget: %v", ids)
	}
	fsck(t, r.Dir())
}

// The rewriter's batch takes an object put twice once (the pack writer
// lists each object of the order it is given).
func TestRewriterBatchPutsOnce(t *testing.T) {
	b := newBatch()
	for i := 0; i < 3; i++ {
		if _, err := b.put(blobObject([]byte("same"))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.put(blobObject([]byte("other"))); err != nil {
		t.Fatal(err)
	}
	if len(b.order) != 2 {
		t.Fatalf("a batch given one object three times and another once lists %d objects, want 2", len(b.order))
	}
}

// The pack writer never installs a pack that lists an object twice.
func TestWritePackRefusesAnObjectTwice(t *testing.T) {
	r := newRepo(t)
	b := newBatch()
	h, err := b.put(blobObject([]byte("twice")))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.writePackOpt(b.mem, []plumbing.Hash{h, h}, 0); err == nil {
		t.Fatal("a pack of one object listed twice was written")
	}
	if err := r.writePackOpt(b.mem, []plumbing.Hash{h}, 0); err != nil {
		t.Fatal(err)
	}
	fsck(t, r.Dir())
}
