package gitstore

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrStop ends a walk early without an error.
var ErrStop = errors.New("stop walk")

// Walk visits the commits reachable from start (zero = main), each once,
// children before their parents along first parents (newest first on a
// linear history). A commit for which skip returns true is not visited and
// its ancestors are not followed through it (e.g. "already indexed").
// fn returning ErrStop ends the walk cleanly.
func (r *Repo) Walk(start plumbing.Hash, skip func(plumbing.Hash) bool, fn func(*object.Commit) error) error {
	if start.IsZero() {
		h, err := r.Head()
		if err != nil {
			return err
		}
		start = h
	}
	if start.IsZero() {
		return nil
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
		if skip != nil && skip(h) {
			continue
		}
		c, err := r.Commit(h)
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
		// Push later parents first so the first parent is walked next.
		for i := len(c.ParentHashes) - 1; i >= 0; i-- {
			if p := c.ParentHashes[i]; !seen[p] {
				stack = append(stack, p)
			}
		}
	}
	return nil
}

// Blob reads a blob by hash.
func (r *Repo) Blob(h plumbing.Hash) (data []byte, err error) {
	err = r.retry(func() (err error) {
		data, err = r.blob(h)
		return err
	})
	return data, err
}

func (r *Repo) blob(h plumbing.Hash) ([]byte, error) {
	b, err := object.GetBlob(r.st, h)
	if err != nil {
		return nil, err
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// Has reports, for each path, whether main's tree holds a file there.
// Like every read, it retries with a fresh list of packs while a background
// repack replaces them (found at 96,000 of a 100,000-exchange add: "read
// tree …: packfile not found").
func (r *Repo) Has(paths []string) (out []bool, err error) {
	out, _, err = r.HasLooked(paths)
	return out, err
}

// HasLooked is Has that also returns the trees it read, for an
// AppendLooked of the same paths (which then does not read them again).
func (r *Repo) HasLooked(paths []string) (out []bool, looked *Looked, err error) {
	ids, looked, err := r.StoredLooked(paths)
	out = make([]bool, len(ids))
	for i, h := range ids {
		out[i] = !h.IsZero()
	}
	return out, looked, err
}

// StoredLooked is HasLooked returning, for each path, the id of the blob
// main's tree holds there (zero: none), read from the leaf trees it
// decodes anyway (no blob is read).
func (r *Repo) StoredLooked(paths []string) (ids []plumbing.Hash, looked *Looked, err error) {
	err = r.retry(func() (err error) {
		ids, looked, err = r.has(paths)
		return err
	})
	return ids, looked, err
}

// Looked holds the trees a HasLooked decoded, by id. memory.lookupItems
// asks which exchanges are stored, then Append walks the same folders:
// at 1,000,000 exchanges an add of 1,000 read and decoded ~1,000 leaf
// trees of ~244 entries twice, about a fifth of its CPU (docs/BENCHMARKS.md,
// session 23). A tree is named by its id, so what Looked holds is never
// stale: when main moved in between, AppendLooked reads the trees it
// lacks. Read only once made (goroutines may share it).
type Looked struct {
	trees map[plumbing.Hash][]object.TreeEntry
}

// tree returns the entries of tree h if l holds them (l may be nil).
func (l *Looked) tree(h plumbing.Hash) ([]object.TreeEntry, bool) {
	if l == nil {
		return nil, false
	}
	es, ok := l.trees[h]
	return es, ok
}

func (r *Repo) has(paths []string) ([]plumbing.Hash, *Looked, error) {
	out := make([]plumbing.Hash, len(paths))
	head, err := r.Head()
	if err != nil || head.IsZero() {
		return out, nil, err
	}
	c, err := object.GetCommit(r.st, head) // Has retries; no second layer
	if err != nil {
		return out, nil, fmt.Errorf("read commit %s: %w", head, err)
	}
	looked := &Looked{trees: map[plumbing.Hash][]object.TreeEntry{}}
	ed := newTreeEditor(r.st, nil, c.TreeHash)
	ed.fast = func(h plumbing.Hash) ([]object.TreeEntry, bool) {
		es, ok := r.st.tree(h)
		if ok {
			looked.trees[h] = es
		}
		return es, ok
	}
	for i, p := range paths {
		if out[i], _, err = ed.hash(p); err != nil {
			return out, nil, err
		}
	}
	return out, looked, nil
}

// BlobHashAt returns the id of the blob at path in the tree of commit; ok
// is false when there is none.
func (r *Repo) BlobHashAt(commit plumbing.Hash, path string) (h plumbing.Hash, ok bool, err error) {
	err = r.retry(func() error {
		c, err := object.GetCommit(r.st, commit)
		if err != nil {
			return err
		}
		t, err := r.st.getTree(c.TreeHash)
		if err != nil {
			return err
		}
		e, err := t.FindEntry(path)
		if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
			h, ok = plumbing.ZeroHash, false
			return nil
		}
		if err != nil {
			return err
		}
		h, ok = e.Hash, e.Mode.IsFile()
		return nil
	})
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("read %s at %s: %w", path, commit, err)
	}
	return h, ok, nil
}
