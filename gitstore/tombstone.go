package gitstore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TombstoneRef holds what forget removed: a commit per forget whose tree
// has one small JSON blob per exchange at t/… (the exchange's blob path
// with ex/ replaced), never its content. Sync unions it like main.
const TombstoneRef = plumbing.ReferenceName("refs/mem/tombstones")

// Tombstone records one forgotten exchange.
type Tombstone struct {
	Exchange string    `json:"exchange"`
	Blob     string    `json:"blob"` // the forgotten blob's id
	Time     time.Time `json:"time"`
	Reason   string    `json:"reason,omitempty"`
}

// TombstonePath is where the tombstone of the exchange stored at blobPath
// lives in the tombstone tree.
func TombstonePath(blobPath string) string { return "t/" + strings.TrimPrefix(blobPath, "ex/") }

// Tombstoned reports, per blob path, whether a tombstone names it.
func (r *Repo) Tombstoned(blobPaths []string) ([]bool, error) {
	out := make([]bool, len(blobPaths))
	tip, err := readRef(r.dir, TombstoneRef)
	if err != nil || tip.IsZero() {
		return out, err
	}
	c, err := r.Commit(tip)
	if err != nil {
		return out, err
	}
	ed := newTreeEditor(r.st, nil, c.TreeHash)
	for i, p := range blobPaths {
		if out[i], err = ed.has(TombstonePath(p)); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Tombstones lists every tombstone (with its tree path).
func (r *Repo) Tombstones() (map[string]Tombstone, error) {
	out := map[string]Tombstone{}
	tip, err := readRef(r.dir, TombstoneRef)
	if err != nil || tip.IsZero() {
		return out, err
	}
	c, err := r.Commit(tip)
	if err != nil {
		return out, err
	}
	t, err := c.Tree()
	if err != nil {
		return out, err
	}
	err = t.Files().ForEach(func(f *object.File) error {
		s, err := f.Contents()
		if err != nil {
			return err
		}
		var ts Tombstone
		if err := json.Unmarshal([]byte(s), &ts); err != nil {
			return fmt.Errorf("tombstone %s: %w", f.Name, err)
		}
		out[f.Name] = ts
		return nil
	})
	return out, err
}

// TombstoneTip is the tombstone ref's commit (zero when none).
func (r *Repo) TombstoneTip() (plumbing.Hash, error) { return readRef(r.dir, TombstoneRef) }

// addTombstones writes a tombstone commit on top of the ref's tip (or of
// parent when not zero) and returns it; the caller moves the ref.
func (r *Repo) addTombstones(blobPaths []string, ts []Tombstone, when time.Time) (plumbing.Hash, error) {
	tip, err := readRef(r.dir, TombstoneRef)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var root plumbing.Hash
	if !tip.IsZero() {
		c, err := r.Commit(tip)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		root = c.TreeHash
	}
	b := newBatch()
	put := b.put
	ed := newTreeEditor(overlay{mem: b.mem, disk: r}, put, root)
	tree := root
	for i, p := range blobPaths {
		b, _ := json.Marshal(ts[i])
		bh, err := put(blobObject(b))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if tree, err = ed.put(TombstonePath(p), bh); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	sig := Author
	sig.When = when
	c := &object.Commit{Author: sig, Committer: sig, TreeHash: tree,
		Message: fmt.Sprintf("Forget %d exchange(s)\n\nTombstones: %d\n", len(blobPaths), len(blobPaths))}
	if !tip.IsZero() {
		c.ParentHashes = []plumbing.Hash{tip}
	}
	h, err := b.commit(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return h, b.writeTo(r)
}

// setRef points a ref other than main at h (zero deletes it), atomically;
// the caller holds the write lock.
func (r *Repo) setRef(name plumbing.ReferenceName, h plumbing.Hash) error {
	p := filepath.Join(r.dir, filepath.FromSlash(string(name)))
	if h.IsZero() {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
		return r.dropPackedRef(name)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".gitmem-tmp"
	if err := os.WriteFile(tmp, []byte(h.String()+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// dropPackedRef removes name from packed-refs, if it is there.
func (r *Repo) dropPackedRef(name plumbing.ReferenceName) error {
	p := filepath.Join(r.dir, "packed-refs")
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var keep []string
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) == 2 && f[1] == string(name) {
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "^") {
				i++
			}
			continue
		}
		keep = append(keep, lines[i])
	}
	tmp := p + ".gitmem-tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(keep, "\n")), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// tombstonedIn counts the tombstoned exchanges that commit's tree holds.
func (r *Repo) tombstonedIn(commit plumbing.Hash) (int, error) {
	ts, err := r.Tombstones()
	if err != nil || len(ts) == 0 {
		return 0, err
	}
	c, err := r.Commit(commit)
	if err != nil {
		return 0, err
	}
	ed := newTreeEditor(r.st, nil, c.TreeHash)
	n := 0
	for p := range ts {
		ok, err := ed.has("ex/" + strings.TrimPrefix(p, "t/"))
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}
