package gitstore

import (
	"bytes"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Our own decoder of a tree's entries, for the trees a sync reads: go-git's
// (object.Tree.Decode) reads each entry through a buffered reader,
// allocating its mode and its name as two strings and growing the entry
// slice as it goes. A sync at 1,000,000 exchanges decodes ~5,000 leaf
// trees of ~244 entries (the union merge, the push's walk, the merge's own
// new trees kept for the walk), and that decoding was ~0.4 s of the merge
// side's CPU (docs/BENCHMARKS.md, session 20). Here the entries are
// counted first and their names are substrings of one string: the same
// entries, two allocations. It takes only what go-git takes the same way —
// the five modes git writes, a name, a whole id, entries in git's order —
// and says so; anything else (a malformed or unsorted tree, another mode)
// is left to go-git, which decodes it or refuses it as before.

// decodeTreeEntries returns the entries of a tree's content; ok is false
// when the content is not one it takes (see above).
func decodeTreeEntries(data []byte) (entries []object.TreeEntry, ok bool) {
	n := 0
	for i := 0; i < len(data); {
		z := bytes.IndexByte(data[i:], 0)
		if z < 0 {
			return nil, false
		}
		i += z + 1 + len(plumbing.ZeroHash)
		n++
	}
	entries = make([]object.TreeEntry, 0, n)
	s := string(data) // the names are substrings of this one string
	var prev object.TreeEntry
	for i := 0; i < len(s); {
		sp := -1
		for j := i; j < len(s) && j < i+7; j++ {
			if s[j] == ' ' {
				sp = j
				break
			}
		}
		if sp < 0 {
			return nil, false
		}
		var mode filemode.FileMode
		switch s[i:sp] {
		case "40000":
			mode = filemode.Dir
		case "100644":
			mode = filemode.Regular
		case "100755":
			mode = filemode.Executable
		case "120000":
			mode = filemode.Symlink
		case "160000":
			mode = filemode.Submodule
		default:
			return nil, false
		}
		z := sp + 1 + bytes.IndexByte(data[sp+1:], 0)
		if z <= sp+1 || z+1+len(plumbing.ZeroHash) > len(s) {
			return nil, false // no name, or no terminator or whole id after it
		}
		e := object.TreeEntry{Name: s[sp+1 : z], Mode: mode}
		copy(e.Hash[:], data[z+1:])
		if len(entries) > 0 && !treeOrderLess(prev, e) {
			return nil, false
		}
		entries = append(entries, e)
		prev = e
		i = z + 1 + len(plumbing.ZeroHash)
	}
	return entries, true
}

// treeOrderLess is git's tree order, strict: names compare as if a
// folder's had a trailing slash (go-git's treeEntrySortName, without
// building the string).
func treeOrderLess(a, b object.TreeEntry) bool {
	an, bn := a.Name, b.Name
	k := min(len(an), len(bn))
	if an[:k] != bn[:k] {
		return an[:k] < bn[:k]
	}
	at := func(e object.TreeEntry, i int) int {
		switch {
		case i < len(e.Name):
			return int(e.Name[i])
		case i == len(e.Name) && e.Mode == filemode.Dir:
			return '/'
		}
		return -1 // past the end
	}
	for i := k; ; i++ {
		ca, cb := at(a, i), at(b, i)
		if ca != cb {
			return ca < cb
		}
		if ca == -1 {
			return false // the same sort name
		}
	}
}

// treeFromEntries is the go-git tree h holding entries (decoded by
// decodeTreeEntries, so sorted), reading its subtrees from s as
// object.DecodeTree's would.
func treeFromEntries(s storer.EncodedObjectStorer, h plumbing.Hash, entries []object.TreeEntry) (*object.Tree, bool) {
	// DecodeTree of the empty tree sets what a Tree keeps unexported (its
	// storer, and that its entries are sorted); then its entries are set.
	t, err := object.DecodeTree(s, emptyTreeObject)
	if err != nil {
		return nil, false
	}
	t.Hash, t.Entries = h, entries
	return t, true
}

// emptyTreeObject is the empty tree (read only: DecodeTree reads its
// type, size and id).
var emptyTreeObject = func() plumbing.EncodedObject {
	o := &plumbing.MemoryObject{}
	o.SetType(plumbing.TreeObject)
	o.Hash() // computed now: MemoryObject sets it on first use, and goroutines share this one
	return o
}()
