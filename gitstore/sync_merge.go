package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// parents reads only the parent ids of a commit (no full decode: a sync
// walks whole histories).
func (r *Repo) parents(h plumbing.Hash) ([]plumbing.Hash, error) {
	var o plumbing.EncodedObject
	err := r.retry(func() (err error) {
		o, err = r.st.EncodedObject(plumbing.CommitObject, h)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	buf := make([]byte, 0, 512)
	tmp := make([]byte, 512)
	var out []plumbing.Hash
	for {
		n, err := rd.Read(tmp)
		buf = append(buf, tmp[:n]...)
		// The header ends at the first blank line; parents come right after "tree".
		if i := bytes.Index(buf, []byte("\n\n")); i >= 0 {
			buf = buf[:i+1]
			break
		}
		if err != nil {
			break
		}
	}
	for _, line := range bytes.Split(buf, []byte("\n")) {
		if p, ok := bytes.CutPrefix(line, []byte("parent ")); ok && plumbing.IsHash(string(p)) {
			out = append(out, plumbing.NewHash(string(p)))
		}
	}
	return out, nil
}

// only returns the commits reachable from start but not in have, and the
// boundary: commits in have that are parents of those (what the other side
// already holds at the edge).
func (r *Repo) only(start plumbing.Hash, have commitSet) (only []plumbing.Hash, boundary []plumbing.Hash, err error) {
	if start.IsZero() || have.has(start) {
		if have.has(start) {
			boundary = append(boundary, start)
		}
		return nil, boundary, nil
	}
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{start}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		if have.has(h) {
			boundary = append(boundary, h)
			continue
		}
		only = append(only, h)
		ps, err := r.parents(h)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range ps {
			if !seen[p] {
				stack = append(stack, p)
			}
		}
	}
	return only, boundary, nil
}

// wins says whether record entry b wins over a at one path: the smaller
// key of its blob (key nil: none), then the smaller hash.
func (r *Repo) wins(b, a object.TreeEntry, key func([]byte) []byte) (bool, error) {
	if key != nil && a.Hash != b.Hash {
		ba, err := r.Blob(a.Hash)
		if err != nil {
			return false, err
		}
		bb, err := r.Blob(b.Hash)
		if err != nil {
			return false, err
		}
		if c := bytes.Compare(key(bb), key(ba)); c != 0 {
			return c < 0, nil
		}
	}
	return bytes.Compare(b.Hash[:], a.Hash[:]) < 0 || (b.Hash == a.Hash && b.Mode < a.Mode), nil
}

// errPathConflict means a path is a file on one side and a folder on the
// other: never the case in a memory (paths are unique per record).
var errPathConflict = errors.New("path is a file on one side and a folder on the other")

// unionTree writes the union of trees a and b: entries on one side only are
// kept, folders on both sides are merged recursively, and where both sides
// hold a different blob at one path the one with the smaller key wins (key
// nil: no key), then the one with the smaller hash: a total order, the same
// on every machine, so every merge order gives one tree.
// New trees go through put; entries keep git's tree order.
//
// With par > 1, the first folder level holding two or more folders to merge
// is merged on par goroutines (each subtree on one): at 1,000,000 exchanges
// a sync's merge inflates ~3,000 leaf trees of ~23 KB, and the second core
// is idle until the merge is written. The result, and the order the new
// trees reach put, are those of the serial merge: each subtree's new trees
// are collected and handed to put in entry order once all are done.
func (r *Repo) unionTree(read func(plumbing.Hash) (*object.Tree, error), put func(plumbing.EncodedObject) (plumbing.Hash, error), a, b plumbing.Hash, at string, par int, key func([]byte) []byte) (plumbing.Hash, error) {
	switch {
	case a == b || b.IsZero():
		return a, nil
	case a.IsZero():
		return b, nil
	}
	ta, err := read(a)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tb, err := read(b)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	byName := make(map[string]object.TreeEntry, len(ta.Entries))
	for _, e := range ta.Entries {
		byName[e.Name] = e
	}
	out := make([]object.TreeEntry, 0, len(ta.Entries)+len(tb.Entries))
	out = append(out, ta.Entries...)
	idx := make(map[string]int, len(out))
	for i, e := range out {
		idx[e.Name] = i
	}
	changed := false
	type sub struct {
		i    int // in out
		a, b plumbing.Hash
		p    string
		h    plumbing.Hash
		objs []plumbing.EncodedObject // its new trees, in the order written
		err  error
	}
	var subs []sub
	for _, eb := range tb.Entries {
		ea, ok := byName[eb.Name]
		if !ok {
			out = append(out, eb)
			changed = true
			continue
		}
		if ea.Hash == eb.Hash && ea.Mode == eb.Mode {
			continue
		}
		p := at + ea.Name
		aDir, bDir := ea.Mode == filemode.Dir, eb.Mode == filemode.Dir
		switch {
		case aDir && bDir:
			subs = append(subs, sub{i: idx[ea.Name], a: ea.Hash, b: eb.Hash, p: p + "/"})
		case aDir != bDir:
			return plumbing.ZeroHash, fmt.Errorf("merge %s: %w", p, errPathConflict)
		default:
			// Two versions of one record: the smaller key, then the
			// smaller blob hash.
			win, err := r.wins(eb, ea, key)
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("merge %s: %w", p, err)
			}
			if win {
				out[idx[ea.Name]] = eb
				changed = true
			}
		}
	}
	if par > 1 && len(subs) > 1 {
		var wg sync.WaitGroup
		next := make(chan int)
		for range min(par, len(subs)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range next {
					s := &subs[k]
					keep := func(o plumbing.EncodedObject) (plumbing.Hash, error) {
						s.objs = append(s.objs, o)
						return o.Hash(), nil
					}
					s.h, s.err = r.unionTree(read, keep, s.a, s.b, s.p, 1, key)
				}
			}()
		}
		for k := range subs {
			next <- k
		}
		close(next)
		wg.Wait()
		for k := range subs {
			if subs[k].err != nil {
				return plumbing.ZeroHash, subs[k].err
			}
		}
		for k := range subs {
			for _, o := range subs[k].objs {
				if _, err := put(o); err != nil {
					return plumbing.ZeroHash, err
				}
			}
		}
	} else {
		for k := range subs {
			s := &subs[k]
			if s.h, s.err = r.unionTree(read, put, s.a, s.b, s.p, par, key); s.err != nil {
				return plumbing.ZeroHash, s.err
			}
		}
	}
	for _, s := range subs {
		if s.h != s.a {
			out[s.i].Hash = s.h
			changed = true
		}
	}
	if !changed {
		return a, nil
	}
	SortTreeEntries(out)
	// encodeTree: Encode's bytes without its fmt.Fprintf per entry (a
	// fifth of the merge's CPU at 1,000,000 exchanges, where ~2,000 leaf
	// trees of ~244 entries are merged).
	obj, err := encodeTree(out)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if h := obj.Hash(); h == b {
		// The union is b itself (b held all of a: a folder only the other
		// side changed since): b is in the repo already, as read, and is
		// not written again (~800 leaf trees of ~23 KB at 1,000,000).
		return b, nil
	}
	h, err := put(obj)
	if err == nil {
		r.st.keepTree(h, out, int(obj.Size()))
	}
	return h, err
}

// mergeCommit writes the union merge of ours and theirs (ours first:
// `git log --first-parent` follows this machine) and returns it.
func (r *Repo) mergeCommit(ours, theirs plumbing.Hash, message string) (plumbing.Hash, error) {
	co, err := r.Commit(ours)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ct, err := r.Commit(theirs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	b := newBatch()
	tree, err := r.unionTree(r.tree, b.put, co.TreeHash, ct.TreeHash, "", runtime.GOMAXPROCS(0), r.RecordKey)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	now := time.Now()
	sig := Author
	sig.When = now
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree,
		ParentHashes: []plumbing.Hash{ours, theirs}}
	h, err := b.commit(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return h, b.writeTo(r)
}

// countNewPaths counts the blob paths in the tree of commit after that are
// not in the tree of commit before (records a merge brought in).
func (r *Repo) countNewPaths(before, after plumbing.Hash) (int, error) {
	if before == after {
		return 0, nil
	}
	ta, err := r.treeOf(before)
	if err != nil {
		return 0, err
	}
	tb, err := r.treeOf(after)
	if err != nil {
		return 0, err
	}
	return r.diffCount(ta, tb)
}

func (r *Repo) treeOf(commit plumbing.Hash) (plumbing.Hash, error) {
	if commit.IsZero() {
		return plumbing.ZeroHash, nil
	}
	c, err := r.Commit(commit)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.TreeHash, nil
}

func (r *Repo) diffCount(a, b plumbing.Hash) (int, error) {
	if a == b || b.IsZero() {
		return 0, nil
	}
	tb, err := r.tree(b)
	if err != nil {
		return 0, err
	}
	have := map[string]object.TreeEntry{}
	if !a.IsZero() {
		ta, err := r.tree(a)
		if err != nil {
			return 0, err
		}
		for _, e := range ta.Entries {
			have[e.Name] = e
		}
	}
	n := 0
	for _, e := range tb.Entries {
		old, ok := have[e.Name]
		switch {
		case e.Mode == filemode.Dir:
			var from plumbing.Hash
			if ok && old.Mode == filemode.Dir {
				from = old.Hash
			}
			k, err := r.diffCount(from, e.Hash)
			if err != nil {
				return 0, err
			}
			n += k
		case !ok:
			n++
		}
	}
	return n, nil
}

// tree reads a tree, retrying while a background repack replaces the packs.
func (r *Repo) tree(h plumbing.Hash) (t *object.Tree, err error) {
	err = r.retry(func() (err error) {
		t, err = r.st.getTree(h)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	return t, nil
}
