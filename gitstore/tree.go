package gitstore

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// treeEditor applies blob insertions to a tree and writes only the trees on
// the changed paths. It keeps decoded trees of the current state across a
// batch so that a run of commits rewrites each level once per commit without
// re-reading it.
type treeEditor struct {
	read  storer.EncodedObjectStorer // where existing trees are read from
	write func(plumbing.EncodedObject) (plumbing.Hash, error)
	dirs  map[string][]object.TreeEntry // dir path ("" = root) → entries of the current state
	root  plumbing.Hash
	// fast, when set, reads a tree straight from the packs (objectStore.tree);
	// when it cannot, the tree is read from read.
	fast func(plumbing.Hash) ([]object.TreeEntry, bool)
}

func newTreeEditor(read storer.EncodedObjectStorer, write func(plumbing.EncodedObject) (plumbing.Hash, error), root plumbing.Hash) *treeEditor {
	return &treeEditor{read: read, write: write, dirs: map[string][]object.TreeEntry{}, root: root}
}

// entries returns the entries of dir in the current state.
func (e *treeEditor) entries(dir string) ([]object.TreeEntry, error) {
	if ents, ok := e.dirs[dir]; ok {
		return ents, nil
	}
	var h plumbing.Hash
	if dir == "" {
		h = e.root
	} else {
		parent, name := path.Split(dir)
		parent = strings.TrimSuffix(parent, "/")
		pents, err := e.entries(parent)
		if err != nil {
			return nil, err
		}
		for _, en := range pents {
			if en.Name == name {
				if en.Mode != filemode.Dir {
					return nil, fmt.Errorf("tree path %s is a file, not a folder", dir)
				}
				h = en.Hash
			}
		}
	}
	var ents []object.TreeEntry
	if !h.IsZero() {
		if fe, ok := e.fastTree(h); ok {
			ents = fe
		} else {
			t, err := object.GetTree(e.read, h)
			if err != nil {
				return nil, fmt.Errorf("read tree %s (%s): %w", dir, h, err)
			}
			ents = append(ents, t.Entries...)
		}
	}
	e.dirs[dir] = ents
	return ents, nil
}

func (e *treeEditor) fastTree(h plumbing.Hash) ([]object.TreeEntry, bool) {
	if e.fast == nil {
		return nil, false
	}
	return e.fast(h)
}

// has reports whether a file exists at p in the current state.
func (e *treeEditor) has(p string) (bool, error) {
	_, ok, err := e.hash(p)
	return ok, err
}

// hash returns the id of the entry at p (a blob for an exchange's path).
func (e *treeEditor) hash(p string) (plumbing.Hash, bool, error) {
	dir, name := path.Split(p)
	ents, err := e.entries(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	for _, en := range ents {
		if en.Name == name {
			return en.Hash, true, nil
		}
	}
	return plumbing.ZeroHash, false, nil
}

// put sets the file at p to blob and writes the changed trees, returning
// the new root tree.
func (e *treeEditor) put(p string, blob plumbing.Hash) (plumbing.Hash, error) {
	dir, name := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	h, mode := blob, filemode.Regular
	for {
		ents, err := e.entries(dir)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		ents = setEntry(ents, object.TreeEntry{Name: name, Mode: mode, Hash: h})
		e.dirs[dir] = ents
		if h, err = e.writeTree(ents); err != nil {
			return plumbing.ZeroHash, err
		}
		if dir == "" {
			e.root = h
			return h, nil
		}
		parent, base := path.Split(dir)
		dir, name, mode = strings.TrimSuffix(parent, "/"), base, filemode.Dir
	}
}

// current returns the root tree of the current state (the empty tree,
// written, when there is none yet).
func (e *treeEditor) current() (plumbing.Hash, error) {
	if !e.root.IsZero() {
		return e.root, nil
	}
	h, err := e.writeTree(nil)
	if err == nil {
		e.root = h
	}
	return h, err
}

// setEntry inserts or replaces en, keeping git's tree order.
func setEntry(ents []object.TreeEntry, en object.TreeEntry) []object.TreeEntry {
	for i := range ents {
		if ents[i].Name == en.Name {
			out := append([]object.TreeEntry(nil), ents...)
			out[i] = en
			return out
		}
	}
	out := append(append([]object.TreeEntry(nil), ents...), en)
	sort.Slice(out, func(i, j int) bool { return treeLess(out[i], out[j]) })
	return out
}

// treeLess is git's tree order: names compared bytewise, a folder's name as
// if it ended in "/".
func treeLess(a, b object.TreeEntry) bool {
	an, bn := a.Name, b.Name
	if a.Mode == filemode.Dir {
		an += "/"
	}
	if b.Mode == filemode.Dir {
		bn += "/"
	}
	return an < bn
}

// SortTreeEntries puts entries in git's tree order (for hand-built trees,
// e.g. a union merge).
func SortTreeEntries(ents []object.TreeEntry) {
	sort.Slice(ents, func(i, j int) bool { return treeLess(ents[i], ents[j]) })
}

func (e *treeEditor) writeTree(ents []object.TreeEntry) (plumbing.Hash, error) {
	obj, err := encodeTree(ents)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return e.write(obj)
}

// encodeTree is go-git's object.Tree.Encode into a new object, the same
// bytes and the same refusals, built in one buffer: Encode writes each
// entry with fmt.Fprintf into a growing object, and an add of 1,000 at
// 1,000,000 exchanges rewrites ~1,000 leaf trees of ~244 entries
// (docs/BENCHMARKS.md, session 23).
func encodeTree(ents []object.TreeEntry) (*plumbing.MemoryObject, error) {
	n := 0
	for i, en := range ents {
		if i > 0 && treeOrderLess(en, ents[i-1]) {
			return nil, object.ErrEntriesNotSorted
		}
		if strings.IndexByte(en.Name, 0) != -1 {
			return nil, fmt.Errorf("malformed filename %q", en.Name)
		}
		n += 7 + len(en.Name) + 1 + len(en.Hash)
	}
	buf := make([]byte, 0, n)
	for _, en := range ents {
		buf = strconv.AppendUint(buf, uint64(en.Mode), 8)
		buf = append(buf, ' ')
		buf = append(buf, en.Name...)
		buf = append(buf, 0)
		buf = append(buf, en.Hash[:]...)
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TreeObject)
	if _, err := obj.Write(buf); err != nil {
		return nil, err
	}
	return obj, nil
}

// blobObject makes an in-memory blob object.
func blobObject(data []byte) plumbing.EncodedObject {
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, _ := obj.Writer()
	_, _ = w.Write(data)
	_ = w.Close()
	return obj
}
