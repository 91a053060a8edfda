package gitstore

import (
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A commit that is not a record (a pin, a link) adds nothing: its tree is
// its parent's, the empty tree as a root; every commit passes fsck, and
// the sync check takes it for part of a memory.
func TestAppendCommitThatAddsNothing(t *testing.T) {
	r := newRepo(t)
	pin := Entry{Message: "a rule\n\nMem-Kind: pin\nPinned: note:0011\n", When: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	res, err := r.Append([]Entry{pin}, 0)
	if err != nil || res.Added != 1 {
		t.Fatalf("append to an empty memory: %+v %v", res, err)
	}
	root, err := r.Commit(res.Commits[0])
	if err != nil {
		t.Fatal(err)
	}
	if root.TreeHash != plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904") {
		t.Fatalf("root pin's tree %s, want the empty tree", root.TreeHash)
	}
	res, err = r.Append([]Entry{testEntry("e1"), pin, testEntry("e2")}, 0)
	if err != nil || res.Added != 3 {
		t.Fatalf("append: %+v %v", res, err)
	}
	mid, _ := r.Commit(res.Commits[1])
	before, _ := r.Commit(res.Commits[0])
	if mid.TreeHash != before.TreeHash {
		t.Fatalf("the pin changed the tree: %s → %s", before.TreeHash, mid.TreeHash)
	}
	fsck(t, r.Dir())
	opt := SyncOptions{}
	opt.defaults()
	head, _ := r.Head()
	var all []plumbing.Hash
	_ = r.Walk(head, nil, func(c *object.Commit) error { all = append(all, c.Hash); return nil })
	if err := r.checkMemory("origin", head, all, opt); err != nil {
		t.Fatalf("sync check refuses pins: %v", err)
	}
	// A commit with the trailer that changes the tree is not a pin.
	bad := Entry{Path: "ex/x/y.json", Blob: []byte("{}"), Message: "x\n\nMem-Kind: pin\nPinned: a\n"}
	res, err = r.Append([]Entry{bad}, 0)
	if err != nil {
		t.Fatal(err)
	}
	head, _ = r.Head()
	if err := r.checkMemory("origin", head, []plumbing.Hash{res.Commits[0]}, opt); err == nil {
		t.Fatal("a commit that adds a blob without an Exchange trailer was taken")
	}
}

// A rewrite drops the commits that are not records and name a dropped path
// (Repo.MetaPaths), and keeps the others byte for byte.
func TestRewriteDropsMetaCommitsOfDroppedPaths(t *testing.T) {
	r := newRepo(t)
	e1, e2 := testEntry("e1"), testEntry("e2")
	r.MetaPaths = func(msg string) []string {
		var out []string
		for _, line := range strings.Split(msg, "\n") {
			if v, ok := strings.CutPrefix(line, "Pinned: "); ok {
				out = append(out, "ex/"+v[len(v)-1:]+"/"+v+".json")
			}
		}
		return out
	}
	pin := func(id string) Entry {
		return Entry{Message: "pin\n\nMem-Kind: pin\nPinned: " + id + "\n", When: e1.When}
	}
	if _, err := r.Append([]Entry{e1, e2, pin("e1"), pin("e2")}, 0); err != nil {
		t.Fatal(err)
	}
	head, _ := r.Head()
	w := r.NewRewriter([]string{e1.Path})
	tip, err := w.Rewrite(head)
	if err != nil {
		t.Fatal(err)
	}
	if w.Dropped != 1 || w.DroppedMeta != 1 {
		t.Fatalf("dropped %d records and %d others, want 1 and 1", w.Dropped, w.DroppedMeta)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	_ = r.Walk(tip, nil, func(c *object.Commit) error { msgs = append(msgs, c.Message); return nil })
	joined := strings.Join(msgs, "|")
	if strings.Contains(joined, "Pinned: e1") || !strings.Contains(joined, "Pinned: e2") || len(msgs) != 2 {
		t.Fatalf("rewritten history: %q", msgs)
	}
}
