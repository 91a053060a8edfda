package gitstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestEncodeTreeIsGoGits: encodeTree writes go-git's bytes (so the same
// tree ids) and refuses what go-git's Encode refuses.
func TestEncodeTreeIsGoGits(t *testing.T) {
	h := func(i int) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, []byte(fmt.Sprint(i))) }
	var leaf []object.TreeEntry
	for i := range 244 {
		leaf = append(leaf, object.TreeEntry{Name: fmt.Sprintf("%016x.json", uint64(i)*0x9e3779b97f4a7c15), Mode: filemode.Regular, Hash: h(i)})
	}
	sort.Sort(object.TreeEntrySorter(leaf))
	cases := []struct {
		name string
		ents []object.TreeEntry
	}{
		{"empty", nil},
		{"leaf", leaf},
		{"folders", []object.TreeEntry{{Name: "a", Mode: filemode.Dir, Hash: h(1)}, {Name: "b", Mode: filemode.Dir, Hash: h(2)}}},
		{"git order", []object.TreeEntry{{Name: "a-", Mode: filemode.Regular, Hash: h(1)}, {Name: "a.b", Mode: filemode.Regular, Hash: h(2)},
			{Name: "a", Mode: filemode.Dir, Hash: h(3)}, {Name: "a0", Mode: filemode.Regular, Hash: h(4)}}},
		{"modes", []object.TreeEntry{{Name: "l", Mode: filemode.Symlink, Hash: h(1)}, {Name: "s", Mode: filemode.Submodule, Hash: h(2)},
			{Name: "x", Mode: filemode.Executable, Hash: h(3)}}},
		{"unsorted", []object.TreeEntry{{Name: "b", Mode: filemode.Regular, Hash: h(1)}, {Name: "a", Mode: filemode.Regular, Hash: h(2)}}},
		{"nul in name", []object.TreeEntry{{Name: "a\x00b", Mode: filemode.Regular, Hash: h(1)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := &plumbing.MemoryObject{}
			werr := (&object.Tree{Entries: c.ents}).Encode(want)
			got, gerr := encodeTree(c.ents)
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Fatalf("error %v, go-git's %v", gerr, werr)
			}
			if werr != nil {
				return
			}
			if got.Hash() != want.Hash() || got.Size() != want.Size() || got.Type() != plumbing.TreeObject {
				t.Fatalf("tree %s (%d bytes), go-git's %s (%d bytes)", got.Hash(), got.Size(), want.Hash(), want.Size())
			}
		})
	}
}

// TestAppendLookedIsAppend: an append given the trees a HasLooked read
// writes the same trees as one without, also when main moved in between
// (the looked trees are then partly of the old tip) and for entries
// already present; git reads the result.
func TestAppendLookedIsAppend(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	entry := func(i int) Entry {
		id := fmt.Sprintf("x-%d", i)
		e := testEntry(id)
		e.Path = fmt.Sprintf("ex/%x/%x/%s.json", i%3, rng.IntN(4), id)
		return e
	}
	var first, moved, batch []Entry
	for i := range 60 {
		first = append(first, entry(i))
	}
	for i := 60; i < 80; i++ {
		moved = append(moved, entry(i))
	}
	for i := 80; i < 140; i++ {
		batch = append(batch, entry(i))
	}
	batch = append(batch, first[5], moved[3]) // present: the one before, the one that moved main
	paths := func(es []Entry) []string {
		var ps []string
		for _, e := range es {
			ps = append(ps, e.Path)
		}
		return ps
	}
	var trees []string
	for _, useLooked := range []bool{false, true} {
		r := newRepo(t)
		if _, err := r.Append(first, 0); err != nil {
			t.Fatal(err)
		}
		has, looked, err := r.HasLooked(paths(batch))
		if err != nil || len(looked.trees) == 0 {
			t.Fatalf("HasLooked: %d trees, %v", len(looked.trees), err)
		}
		if !has[len(has)-2] || has[len(has)-1] || has[0] {
			t.Fatalf("has %v", has)
		}
		if _, err := r.Append(moved, 0); err != nil { // main moves after the look
			t.Fatal(err)
		}
		if !useLooked {
			looked = nil
		}
		res, err := r.AppendLooked(batch, 0, looked)
		if err != nil || res.Added != 60 || res.Present != 2 {
			t.Fatalf("AppendLooked: %+v %v", res, err)
		}
		fsck(t, r.Dir())
		var ts []string
		err = r.Walk(plumbing.ZeroHash, nil, func(c *object.Commit) error {
			ts = append(ts, c.TreeHash.String())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		trees = append(trees, strings.Join(ts, " "))
	}
	if trees[0] != trees[1] {
		t.Fatalf("trees differ with the looked trees:\n%s\n%s", trees[0], trees[1])
	}
}

// TestLookedOfEmptyMemory: HasLooked of a memory without commits looks
// at nothing, and AppendLooked takes its nil.
func TestLookedOfEmptyMemory(t *testing.T) {
	r := newRepo(t)
	has, looked, err := r.HasLooked([]string{"ex/a/b.json"})
	if err != nil || has[0] || looked != nil {
		t.Fatalf("HasLooked: %v %v %v", has, looked, err)
	}
	if res, err := r.AppendLooked([]Entry{testEntry("a-1")}, 0, looked); err != nil || res.Added != 1 {
		t.Fatalf("AppendLooked: %+v %v", res, err)
	}
	if _, err := encodeTree([]object.TreeEntry{{Name: "b"}, {Name: "a"}}); !errors.Is(err, object.ErrEntriesNotSorted) {
		t.Fatalf("unsorted: %v", err)
	}
}
