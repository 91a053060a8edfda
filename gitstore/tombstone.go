package gitstore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	ed, err := r.tombstoneTree()
	if err != nil || ed == nil {
		return out, err
	}
	for i, p := range blobPaths {
		if out[i], err = ed.has(TombstonePath(p)); err != nil {
			return out, err
		}
	}
	return out, nil
}

// tombstoneTree reads the tombstone tree at the ref's tip (nil: none yet).
func (r *Repo) tombstoneTree() (*treeEditor, error) {
	tip, err := readRef(r.dir, TombstoneRef)
	if err != nil || tip.IsZero() {
		return nil, err
	}
	c, err := r.Commit(tip)
	if err != nil {
		return nil, err
	}
	return newTreeEditor(r.st, nil, c.TreeHash), nil
}

// Tombstones lists every tombstone (with its tree path).
func (r *Repo) Tombstones() (map[string]Tombstone, error) {
	tip, err := readRef(r.dir, TombstoneRef)
	if err != nil {
		return map[string]Tombstone{}, err
	}
	return r.tombstonesAt(tip)
}

// tombstonesAt lists the tombstones of a tombstone commit (none for zero).
func (r *Repo) tombstonesAt(tip plumbing.Hash) (map[string]Tombstone, error) {
	out := map[string]Tombstone{}
	if tip.IsZero() {
		return out, nil
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

// deadPaths are the blob paths (ex/…) the tombstones of tip name, sorted.
func (r *Repo) deadPaths(tip plumbing.Hash) ([]string, error) {
	ts, err := r.tombstonesAt(tip)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ts))
	for p := range ts {
		out = append(out, "ex/"+strings.TrimPrefix(p, "t/"))
	}
	sort.Strings(out)
	return out, nil
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
	return writeLooseRef(r.dir, name, h)
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

// TombstoneTrackingRef is where a sync keeps the remote's tombstone ref.
// Not under refs/remotes/: it is no branch, and `git branch -r` should not
// list it.
func TombstoneTrackingRef(remote string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/mem/remotes/" + remote + "/tombstones")
}

// unionTombstones returns a tombstone commit holding every tombstone of
// ours and theirs: one of them when it already holds the other's, else a
// merge commit (written to the repo; the caller holds the objects level
// shared). learned counts the tombstones theirs adds to ours.
func (r *Repo) unionTombstones(ours, theirs plumbing.Hash, remote string) (tip plumbing.Hash, learned int, err error) {
	if theirs.IsZero() || theirs == ours {
		return ours, 0, nil
	}
	if ours.IsZero() {
		ts, err := r.tombstonesAt(theirs)
		return theirs, len(ts), err
	}
	anc, err := r.ancestry(ours)
	if err != nil {
		return ours, 0, err
	}
	if anc.has(theirs) {
		return ours, 0, nil
	}
	mine, err := r.tombstonesAt(ours)
	if err != nil {
		return ours, 0, err
	}
	all, err := r.tombstonesAt(theirs)
	if err != nil {
		return ours, 0, err
	}
	for p := range all {
		if _, ok := mine[p]; !ok {
			learned++
		}
	}
	if tanc, err := r.ancestry(theirs); err != nil {
		return ours, 0, err
	} else if tanc.has(ours) {
		return theirs, learned, nil // a fast-forward
	}
	co, err := r.Commit(ours)
	if err != nil {
		return ours, 0, err
	}
	ct, err := r.Commit(theirs)
	if err != nil {
		return ours, 0, err
	}
	b := newBatch()
	tree, err := r.unionTree(r.tree, b.put, co.TreeHash, ct.TreeHash, "", 1, nil)
	if err != nil {
		return ours, 0, err
	}
	sig := Author
	sig.When = time.Now()
	c := &object.Commit{Author: sig, Committer: sig, TreeHash: tree, ParentHashes: []plumbing.Hash{ours, theirs},
		Message: fmt.Sprintf("Merge tombstones from %s\n\nTombstones: %d\n", remote, len(mine)+learned)}
	h, err := b.commit(c)
	if err != nil {
		return ours, 0, err
	}
	return h, learned, b.writeTo(r)
}

// tombLearn is what a sync round learned from the remote's tombstones.
type tombLearn struct {
	remoteTomb plumbing.Hash // the remote's tombstone ref
	union      plumbing.Hash // every tombstone of both sides
	learned    int           // tombstones new to this memory
	theirs     plumbing.Hash // the remote's main without them
	rw         *Rewriter     // drops what the union names (nil: nothing)
	swap       bool          // this memory's refs must change
}

// learnTombstones unions the fetched tombstones with ours and works out
// the remote's main without what they name (with the same deterministic
// Rewriter a forget uses, so it is the main the forgetting machine
// pushed, when it did). head is this main. The caller holds the objects level shared and
// sync.lock.
func (r *Repo) learnTombstones(remote string, remoteTip, head plumbing.Hash) (tombLearn, error) {
	tl := tombLearn{theirs: remoteTip}
	var err error
	if tl.remoteTomb, err = readRef(r.dir, TombstoneTrackingRef(remote)); err != nil {
		return tl, err
	}
	ours, err := r.TombstoneTip()
	if err != nil {
		return tl, err
	}
	if tl.union, tl.learned, err = r.unionTombstones(ours, tl.remoteTomb, remote); err != nil {
		return tl, fmt.Errorf("union the tombstones of %s: %w", remote, err)
	}
	dead, err := r.deadPaths(tl.union)
	if err != nil || len(dead) == 0 {
		return tl, err
	}
	// A main that holds none of them costs one tree lookup (the
	// Rewriter's shortcut); this side's rewrite is done here, before the
	// write lock, like a forget's.
	w := r.NewRewriter(dead)
	tl.rw = w
	if tl.theirs, err = w.Rewrite(remoteTip); err != nil {
		return tl, err
	}
	mine, err := w.Rewrite(head)
	if err != nil {
		return tl, err
	}
	if err := w.Flush(); err != nil {
		return tl, err
	}
	if mine != head || tl.union != ours || tl.theirs != remoteTip {
		tl.swap = true
	}
	return tl, nil
}

// explains reports whether the tombstones account for the remote's main
// no longer holding known (its main at the last sync): known without
// what they name is in theirs's history (theirsAnc).
func (tl *tombLearn) explains(known plumbing.Hash, theirsAnc commitSet) (bool, error) {
	if tl.rw == nil {
		return false, nil
	}
	k, err := tl.rw.Rewrite(known)
	if err != nil {
		return false, err
	}
	return k.IsZero() || theirsAnc.has(k), nil
}
