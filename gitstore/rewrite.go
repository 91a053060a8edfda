package gitstore

import (
	"crypto/rand"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Rewriter rebuilds history without some blob paths: commits that add one
// of them are dropped, and every later tree loses them. It is
// deterministic — the same history and paths give the same commits, byte
// for byte (authors, committers and messages are kept) — so two machines
// that apply the same tombstones to the same history get the same ids, and
// the other exchanges keep their ids and blob paths. New objects collect in
// memory until Flush. What it computed is kept, so a later call on a
// descendant (main moved meanwhile) rewrites only the new commits.
type Rewriter struct {
	r       *Repo
	drop    *pathTrie
	commits map[plumbing.Hash]plumbing.Hash // old → new (zero: dropped root)
	trees   map[treeKey]plumbing.Hash
	b       *batch
	oldTree map[plumbing.Hash]plumbing.Hash // old commit → its tree (parents are rewritten first)
	decoded map[plumbing.Hash]*object.Tree
	// Full walks the whole history even below commits that hold none of
	// the paths (for a history some plain git commit removed a path from).
	Full    bool
	Dropped int // exchange commits dropped
	// Bulk reads (prefetch): after prefetchAfter commits read one by one
	// through go-git, the next ancestors and their trees along the paths
	// come through one git cat-file --batch.
	pre       map[plumbing.Hash]*object.Commit
	preTree   map[plumbing.Hash]*object.Tree
	reads     int
	nextBatch int
	bulkHits  int  // reads the bulk reads served
	noBulk    bool // under the write lock: no bulk read (a writer waits)
	// DroppedMeta counts commits that are not records dropped because they
	// refer to a dropped path (Repo.MetaPaths).
	DroppedMeta int
}

// treeKey memoises a tree's rewrite under one trie node.
type treeKey struct {
	tree plumbing.Hash
	node int
}

type pathTrie struct {
	kids map[string]*pathTrie
	leaf bool
	id   int
}

// NewRewriter drops the given blob paths.
func (r *Repo) NewRewriter(paths []string) *Rewriter {
	root := &pathTrie{kids: map[string]*pathTrie{}}
	n := 0
	for _, p := range paths {
		node := root
		for _, part := range strings.Split(p, "/") {
			k := node.kids[part]
			if k == nil {
				n++
				k = &pathTrie{kids: map[string]*pathTrie{}, id: n}
				node.kids[part] = k
			}
			node = k
		}
		node.leaf = true
	}
	return &Rewriter{r: r, drop: root, commits: map[plumbing.Hash]plumbing.Hash{}, trees: map[treeKey]plumbing.Hash{}, b: newBatch(), oldTree: map[plumbing.Hash]plumbing.Hash{}, decoded: map[plumbing.Hash]*object.Tree{}}
}

func (w *Rewriter) get(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, err := w.b.mem.EncodedObject(t, h); err == nil {
		return o, nil
	}
	return w.r.st.EncodedObject(t, h)
}

// Map returns the rewritten id of an old commit already rewritten.
func (w *Rewriter) Map(old plumbing.Hash) (plumbing.Hash, bool) {
	h, ok := w.commits[old]
	return h, ok
}

// Rewrite rewrites tip's history (what is not rewritten yet) and returns
// the new tip (zero when nothing is left).
func (w *Rewriter) Rewrite(tip plumbing.Hash) (plumbing.Hash, error) {
	if tip.IsZero() {
		return tip, nil
	}
	// Oldest first: an iterative post-order over parents.
	type frame struct {
		h    plumbing.Hash
		c    *object.Commit
		next int
	}
	var stack []frame
	push := func(h plumbing.Hash) error {
		if _, done := w.commits[h]; done {
			return nil
		}
		c, err := w.commit(h)
		if err != nil {
			return err
		}
		if !w.Full {
			// A memory's trees only grow (appends add paths, merges unite,
			// only a rewrite removes): a commit whose tree holds none of the
			// paths has no ancestor that adds one, and stays as it is. A
			// forget of a recent exchange so reads only the commits since.
			if held, err := w.treeHolds(c.TreeHash, w.drop); err != nil {
				return err
			} else if !held {
				w.commits[h] = h
				w.oldTree[h] = c.TreeHash
				return nil
			}
		}
		stack = append(stack, frame{h: h, c: c})
		return nil
	}
	if err := push(tip); err != nil {
		return plumbing.ZeroHash, err
	}
	onStack := map[plumbing.Hash]bool{tip: true}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.c.ParentHashes) {
			p := f.c.ParentHashes[f.next]
			f.next++
			if _, done := w.commits[p]; !done && !onStack[p] {
				onStack[p] = true
				if err := push(p); err != nil {
					return plumbing.ZeroHash, err
				}
			}
			continue
		}
		if err := w.rewriteOne(f.c); err != nil {
			return plumbing.ZeroHash, err
		}
		stack = stack[:len(stack)-1]
	}
	return w.commits[tip], nil
}

func (w *Rewriter) rewriteOne(c *object.Commit) error {
	w.oldTree[c.Hash] = c.TreeHash
	var parents []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	for _, p := range c.ParentHashes {
		np := w.commits[p]
		if !np.IsZero() && !seen[np] {
			seen[np] = true
			parents = append(parents, np)
		}
	}
	meta := len(c.ParentHashes) <= 1 && w.refersDropped(c)
	if len(c.ParentHashes) <= 1 && (meta || w.addsDropped(c)) {
		if meta {
			w.DroppedMeta++
		} else {
			w.Dropped++
		}
		if len(parents) == 1 {
			w.commits[c.Hash] = parents[0]
		} else {
			w.commits[c.Hash] = plumbing.ZeroHash
		}
		return nil
	}
	tree, err := w.tree(c.TreeHash, w.drop)
	if err != nil {
		return err
	}
	if len(c.ParentHashes) > 1 && len(parents) < 2 {
		// Both sides of a merge became one.
		if len(parents) == 1 {
			w.commits[c.Hash] = parents[0]
		} else {
			w.commits[c.Hash] = plumbing.ZeroHash
		}
		return nil
	}
	same := tree == c.TreeHash && len(parents) == len(c.ParentHashes)
	for i := range parents {
		if same && parents[i] != c.ParentHashes[i] {
			same = false
		}
	}
	if same {
		w.commits[c.Hash] = c.Hash
		return nil
	}
	nc := &object.Commit{Author: c.Author, Committer: c.Committer, Message: c.Message, TreeHash: tree, ParentHashes: parents}
	h, err := w.b.commit(nc)
	if err != nil {
		return err
	}
	w.commits[c.Hash] = h
	return nil
}

// refersDropped reports whether c's message names a dropped path through
// Repo.MetaPaths (a pin or link of a forgotten exchange).
func (w *Rewriter) refersDropped(c *object.Commit) bool {
	if w.r.MetaPaths == nil {
		return false
	}
	for _, p := range w.r.MetaPaths(c.Message) {
		node := w.drop
		for _, part := range strings.Split(p, "/") {
			if node = node.kids[part]; node == nil {
				break
			}
		}
		if node != nil && node.leaf {
			return true
		}
	}
	return false
}

// treeHolds reports whether tree t holds one of the paths below node.
func (w *Rewriter) treeHolds(t plumbing.Hash, node *pathTrie) (bool, error) {
	if len(node.kids) == 0 {
		return false, nil
	}
	tr, err := w.treeObj(t)
	if err != nil {
		return false, fmt.Errorf("read tree %s: %w", t, err)
	}
	for _, e := range tr.Entries {
		k := node.kids[e.Name]
		switch {
		case k == nil:
		case k.leaf && e.Mode != filemode.Dir:
			return true, nil
		case e.Mode == filemode.Dir:
			if ok, err := w.treeHolds(e.Hash, k); err != nil || ok {
				return ok, err
			}
		}
	}
	return false, nil
}

// addsDropped reports whether a non-merge commit adds one of the dropped
// paths (its tree has it and its parent's does not, or has another blob).
func (w *Rewriter) addsDropped(c *object.Commit) bool {
	var parentTree plumbing.Hash
	if len(c.ParentHashes) == 1 {
		if t, ok := w.oldTree[c.ParentHashes[0]]; ok {
			parentTree = t
		} else if p, err := w.r.Commit(c.ParentHashes[0]); err == nil {
			parentTree = p.TreeHash
		}
	}
	var walk func(t, pt plumbing.Hash, node *pathTrie) bool
	walk = func(t, pt plumbing.Hash, node *pathTrie) bool {
		if t == pt {
			return false
		}
		tr, err := w.treeObj(t)
		if err != nil {
			return false
		}
		var ptr *object.Tree
		if !pt.IsZero() {
			ptr, _ = w.treeObj(pt)
		}
		for _, e := range tr.Entries {
			k := node.kids[e.Name]
			if k == nil {
				continue
			}
			var pe plumbing.Hash
			if ptr != nil {
				for _, x := range ptr.Entries {
					if x.Name == e.Name {
						pe = x.Hash
					}
				}
			}
			if k.leaf && e.Mode != filemode.Dir {
				if e.Hash != pe {
					return true
				}
				continue
			}
			if e.Mode == filemode.Dir && walk(e.Hash, pe, k) {
				return true
			}
		}
		return false
	}
	return walk(c.TreeHash, parentTree, w.drop)
}

// treeObj decodes a tree, remembering the recent ones: a commit's
// folders are read by addsDropped (with its parent's, which the previous
// commit read) and again by tree — at 100,000 commits decoding trees was a
// third of a forget's CPU.
func (w *Rewriter) treeObj(h plumbing.Hash) (*object.Tree, error) {
	if t, ok := w.decoded[h]; ok {
		return t, nil
	}
	if t, ok := w.preTree[h]; ok {
		delete(w.preTree, h)
		w.bulkHits++
		w.remember(h, t)
		return t, nil
	}
	o, err := w.get(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	t := &object.Tree{}
	if err := t.Decode(o); err != nil {
		return nil, err
	}
	w.remember(h, t)
	return t, nil
}

func (w *Rewriter) remember(h plumbing.Hash, t *object.Tree) {
	if len(w.decoded) >= decodedTrees {
		clear(w.decoded)
	}
	w.decoded[h] = t
}

// prefetchAfter is how many commits a rewrite reads one by one before it
// reads in bulk: a forget of a recent exchange reads a handful, and one of
// an old exchange at 100,000 read 95,000 commits and 190,000 trees through
// go-git (9 s CPU of its rewrite, against about 1 s through git).
var prefetchAfter = 500

func (w *Rewriter) done(h plumbing.Hash) bool { _, ok := w.commits[h]; return ok }

// commit reads a commit the rewrite needs, from the bulk read when it has
// it. Past prefetchAfter single reads, the next ancestors of h are read in
// bulk, twice as many each time (at most twice what is needed).
func (w *Rewriter) commit(h plumbing.Hash) (*object.Commit, error) {
	if c, ok := w.pre[h]; ok {
		delete(w.pre, h)
		w.bulkHits++
		return c, nil
	}
	w.reads++
	if w.reads >= prefetchAfter && !w.noBulk {
		if w.nextBatch == 0 {
			w.nextBatch = 2 * prefetchAfter
		}
		w.reads = 0
		w.prefetch(h, w.nextBatch)
		w.nextBatch *= 2
		if c, ok := w.pre[h]; ok {
			delete(w.pre, h)
			w.bulkHits++
			return c, nil
		}
	}
	return w.r.Commit(h)
}

// prefetch reads up to n ancestors of h (h included), and their trees
// along the dropped paths, in bulk. It is a cache: anything it cannot read
// is read one by one later.
func (w *Rewriter) prefetch(h plumbing.Hash, n int) {
	if !useCatFile || gitCLI() == "" {
		return
	}
	cmd := exec.Command("git", "--git-dir", w.r.dir, "rev-list", "-n", strconv.Itoa(n), h.String())
	cmd.Env = readerEnv()
	out, err := cmd.Output()
	if err != nil {
		return
	}
	var reqs []PathAt
	for _, f := range strings.Fields(string(out)) {
		if plumbing.IsHash(f) {
			if x := plumbing.NewHash(f); !w.done(x) {
				reqs = append(reqs, PathAt{Commit: x})
			}
		}
	}
	raw, ans, err := w.r.batchObjects(reqs)
	if err != nil {
		return
	}
	if w.pre == nil {
		w.pre = map[plumbing.Hash]*object.Commit{}
		w.preTree = map[plumbing.Hash]*object.Tree{}
	}
	type treeReq struct {
		h    plumbing.Hash
		node *pathTrie
	}
	var level []treeReq
	for i, q := range reqs {
		if !ans[i].found || ans[i].typ != "commit" {
			continue
		}
		c, err := decodeCommit(raw[i], q.Commit)
		if err != nil {
			continue // read one by one later
		}
		w.pre[c.Hash] = c
		level = append(level, treeReq{c.TreeHash, w.drop})
	}
	// The trees along the paths, one level at a time.
	for len(level) > 0 {
		reqs = reqs[:0]
		nodes := []*pathTrie{}
		seen := map[plumbing.Hash]bool{}
		for _, t := range level {
			if _, ok := w.decoded[t.h]; ok || seen[t.h] || w.preTree[t.h] != nil {
				continue
			}
			seen[t.h] = true
			reqs = append(reqs, PathAt{Commit: t.h})
			nodes = append(nodes, t.node)
		}
		level = level[:0]
		if len(reqs) == 0 {
			break
		}
		raw, ans, err := w.r.batchObjects(reqs)
		if err != nil {
			return
		}
		for i, q := range reqs {
			if !ans[i].found || ans[i].typ != "tree" {
				continue
			}
			o := &plumbing.MemoryObject{}
			o.SetType(plumbing.TreeObject)
			o.Write(raw[i])
			t := &object.Tree{}
			if t.Decode(o) != nil || o.Hash() != q.Commit {
				continue
			}
			w.preTree[q.Commit] = t
			for _, e := range t.Entries {
				if k := nodes[i].kids[e.Name]; k != nil && e.Mode == filemode.Dir && len(k.kids) > 0 {
					level = append(level, treeReq{e.Hash, k})
				}
			}
		}
	}
}

// decodedTrees bounds the Rewriter's decoded-tree memo (~100 bytes each
// plus entries; the folders of a few thousand commits).
const decodedTrees = 1 << 15

// tree returns t without the dropped paths below node.
func (w *Rewriter) tree(t plumbing.Hash, node *pathTrie) (plumbing.Hash, error) {
	key := treeKey{t, node.id}
	if h, ok := w.trees[key]; ok {
		return h, nil
	}
	tr, err := w.treeObj(t)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read tree %s: %w", t, err)
	}
	changed := false
	ents := make([]object.TreeEntry, 0, len(tr.Entries))
	for _, e := range tr.Entries {
		k := node.kids[e.Name]
		switch {
		case k == nil:
			ents = append(ents, e)
		case k.leaf && e.Mode != filemode.Dir:
			changed = true
		case e.Mode == filemode.Dir:
			nh, err := w.tree(e.Hash, k)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if nh != e.Hash {
				changed = true
				if nh.IsZero() {
					continue
				}
				e.Hash = nh
			}
			ents = append(ents, e)
		default:
			ents = append(ents, e)
		}
	}
	h := t
	if changed {
		if len(ents) == 0 && node != w.drop {
			h = plumbing.ZeroHash
		} else {
			obj := &plumbing.MemoryObject{}
			if err := (&object.Tree{Entries: ents}).Encode(obj); err != nil {
				return plumbing.ZeroHash, err
			}
			if h, err = w.b.put(obj); err != nil {
				return plumbing.ZeroHash, err
			}
		}
	}
	w.trees[key] = h
	return h, nil
}

// Flush writes the new objects into the repo (one pack). The caller holds
// the objects level shared from before the rewrite until main names them.
func (w *Rewriter) Flush() error {
	if len(w.b.order) == 0 {
		return nil
	}
	if err := w.r.writePackOpt(w.b.mem, w.b.order, math.MaxInt64); err != nil {
		return err
	}
	w.b = &batch{mem: w.b.mem} // keep the objects readable, write each once
	return nil
}

// ForgetResult says what Forget changed.
type ForgetResult struct {
	Before, After plumbing.Hash
	Dropped       int // exchange commits removed from main's history
	// Moved maps every commit the rewrite changed to its new id (a dropped
	// commit to what took its place), so that an index can follow.
	Moved map[plumbing.Hash]plumbing.Hash
	Purge PurgeReport
}

// Forget rewrites main (and the remote-tracking refs) without the blobs at
// blobPaths, records their tombstones, then purges every object no ref
// reaches. The rewrite is built without the write lock; under it only the
// commits added meanwhile are rewritten and the refs moved, so an append
// waits for that moment alone. One forget or sync at a time (sync.lock: both
// move the tombstone ref); the objects level is held shared from the first
// new object to the move of the refs (see Purge).
//
// A kill leaves the old state or the new one: the new main and the
// tombstone ref are set in one moment under the write lock, after
// mem/forget.pending says a purge is owed; whatever comes next
// (FinishPending: add, sync, forget, check --repair) completes it.
func (r *Repo) Forget(blobPaths []string, ts []Tombstone, timeout time.Duration) (ForgetResult, error) {
	return r.ForgetThen(blobPaths, ts, timeout, nil)
}

// ForgetThen is Forget that runs then (when not nil) beside the purge,
// once main and the tombstones name the new state: the caller's indexes
// follow the rewrite while git repacks (they read no object), and
// ForgetThen returns when both are done.
func (r *Repo) ForgetThen(blobPaths []string, ts []Tombstone, timeout time.Duration, then func(ForgetResult)) (ForgetResult, error) {
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	res, left, err := r.forgetThen(blobPaths, ts, timeout, then)
	if err == nil && !left && r.Pending() {
		// A sync that learned tombstones after this forget's last look at
		// mem/forget.pending found forget.lock held and left its purge to
		// the holder: it is done now. Should it fail, the file stays and
		// the next add, sync, forget or check --repair finishes it; the
		// forget itself is complete.
		_, _ = r.FinishPending(timeout)
	}
	return res, err
}

// forgetThen is ForgetThen under forget.lock; left says whether
// settlePending gave up (syncs kept marking).
func (r *Repo) forgetThen(blobPaths []string, ts []Tombstone, timeout time.Duration, then func(ForgetResult)) (res ForgetResult, left bool, err error) {
	fl, err := LockFile(filepath.Join(r.MemDir(), forgetLockFile), timeout)
	if err != nil {
		return res, false, err
	}
	defer fl.Unlock()
	l, err := r.syncLock(timeout)
	if err != nil {
		return res, false, err
	}
	res, covered, err := r.forgetLocked(blobPaths, ts, timeout)
	l.Unlock()
	if err != nil {
		return res, false, err
	}
	r.st.refresh()
	if then != nil {
		done := make(chan struct{})
		go func(res ForgetResult) { defer close(done); then(res) }(res)
		defer func() { <-done }()
	}
	if res.Purge, err = r.Purge(timeout); err != nil {
		return res, false, err
	}
	// The proof: no forgotten blob is left. Only a history whose trees did
	// not only grow (a plain git commit removed a path) can fail it; the
	// whole history is then rewritten and purged again.
	if left := r.blobsLeft(ts); left > 0 {
		if err := r.dropDead(true, timeout); err != nil {
			return res, false, err
		}
		if res.Purge, err = r.Purge(timeout); err != nil {
			return res, false, err
		}
		if left := r.blobsLeft(ts); left > 0 {
			return res, false, fmt.Errorf("forget: %d forgotten blob(s) are still reachable after the rewrite; nothing is lost, run `git mem check`", left)
		}
	}
	_, left, err = r.settlePending(covered, timeout)
	return res, left, err
}

// blobsLeft counts the tombstones' blobs the repo still holds.
func (r *Repo) blobsLeft(ts []Tombstone) int {
	n := 0
	for _, t := range ts {
		if !plumbing.IsHash(t.Blob) {
			continue
		}
		if err := r.st.HasEncodedObject(plumbing.NewHash(t.Blob)); err == nil {
			n++
		}
	}
	return n
}

// dropDead rewrites main and the tracking refs without every exchange a
// tombstone names (taking sync.lock; the caller holds forget.lock).
func (r *Repo) dropDead(full bool, timeout time.Duration) error {
	l, err := r.syncLock(timeout)
	if err != nil {
		return err
	}
	defer l.Unlock()
	return r.dropDeadHeld(full, timeout)
}

// dropDeadHeld is dropDead for a caller that holds sync.lock.
func (r *Repo) dropDeadHeld(full bool, timeout time.Duration) error {
	s, done, err := r.forSync()
	if err != nil {
		return err
	}
	defer done()
	tip, err := r.TombstoneTip()
	if err != nil {
		return err
	}
	dead, err := r.deadPaths(tip)
	if err != nil || len(dead) == 0 {
		return err
	}
	w := s.NewRewriter(dead)
	w.Full = full
	_, _, err = r.swapRewritten(w, plumbing.ZeroHash, timeout)
	return err
}

// forgetLocked rewrites and moves the refs (the caller holds sync.lock)
// and returns what mem/forget.pending held once they moved: the purge that
// follows covers those marks (see settlePending).
func (r *Repo) forgetLocked(blobPaths []string, ts []Tombstone, timeout time.Duration) (res ForgetResult, covered []string, err error) {
	// A rewrite reads every commit and many trees: through a storage that
	// keeps the pack files open (the default one opens and closes the pack
	// for each object: 21 s of syscalls for 15,000 commits).
	s, done, err := r.forSync()
	if err != nil {
		return res, nil, err
	}
	defer done()
	w := s.NewRewriter(blobPaths)
	head0, err := r.Head()
	if err != nil {
		return res, nil, err
	}
	if _, err := w.Rewrite(head0); err != nil {
		return res, nil, err
	}
	if err := w.Flush(); err != nil { // the bulk, before the write lock
		return res, nil, err
	}
	tomb, err := r.addTombstones(blobPaths, ts, time.Now())
	if err != nil {
		return res, nil, err
	}
	own, err := r.markPending()
	if err != nil {
		return res, nil, err
	}
	res.Before, res.After, err = r.swapRewritten(w, tomb, timeout)
	res.Dropped = w.Dropped
	res.Moved = map[plumbing.Hash]plumbing.Hash{}
	for old, h := range w.commits {
		if h != old {
			res.Moved[old] = h
		}
	}
	if err != nil {
		return res, nil, err
	}
	if covered, err = r.readPending(); err != nil {
		return res, nil, err
	}
	for _, m := range covered {
		if m != own {
			// A mark of an interrupted forget or sync: what its tombstones
			// name leaves the refs too (nothing, usually), so that this
			// forget's purge covers it.
			if err := r.dropDeadHeld(false, timeout); err != nil {
				return res, nil, err
			}
			break
		}
	}
	return res, covered, nil
}

// swapRewritten moves main and the remote-tracking refs to their rewrites
// by w and the tombstone ref to tomb (unless zero), all in one moment
// under the write lock (a ref that holds none of the paths is its own
// rewrite, at the cost of one tree lookup). The caller holds the objects
// level shared and sync.lock.
func (r *Repo) swapRewritten(w *Rewriter, tomb plumbing.Hash, timeout time.Duration) (before, after plumbing.Hash, err error) {
	err = r.WithWriteLock(timeout, func(cas func(old, new plumbing.Hash) error) error {
		head1, err := r.Head()
		if err != nil {
			return err
		}
		before, after = head1, head1
		w.noBulk = true
		newTip, err := w.Rewrite(head1)
		if err != nil {
			return err
		}
		tracking, err := r.trackingRefs()
		if err != nil {
			return err
		}
		newTracking := map[plumbing.ReferenceName]plumbing.Hash{}
		for name, tip := range tracking {
			if newTracking[name], err = w.Rewrite(tip); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if testHookBeforeSwap != nil {
			testHookBeforeSwap()
		}
		if !tomb.IsZero() {
			if err := r.setRef(TombstoneRef, tomb); err != nil {
				return err
			}
		}
		if newTip.IsZero() {
			if err := r.setRef(MainRef, plumbing.ZeroHash); err != nil {
				return err
			}
		} else if newTip != head1 {
			if err := cas(head1, newTip); err != nil {
				return err
			}
		}
		for name, h := range newTracking {
			if h != tracking[name] {
				if err := r.setRef(name, h); err != nil {
					return err
				}
			}
		}
		after = newTip
		return nil
	})
	return before, after, err
}

// testHookBeforeSwap runs just before a forget's refs move (kill tests).
var testHookBeforeSwap func()

const (
	forgetLockFile = "forget.lock"
	pendingFile    = "forget.pending"
)

// mem/forget.pending holds one line per mark: a purge owed by a forget or
// a sync that learned tombstones. Every mark is appended under sync.lock
// (with the objects level shared) before any ref names the state it owes a
// purge for, and the file is removed only under sync.lock, by the holder of
// forget.lock, and only while it holds exactly the marks that holder's last
// purge covered (settlePending). A sync that marks while a forget (or
// another FinishPending) is purging therefore changes the file, and the
// purger purges again instead of dropping the sync's debt.

// markPending appends a mark that a purge is owed, durably, before any ref
// names the new state; the caller holds sync.lock. It returns the mark (a
// line of its own: time, pid, random).
func (r *Repo) markPending() (string, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	mark := fmt.Sprintf("%s %d %x", time.Now().UTC().Format(time.RFC3339Nano), os.Getpid(), rnd)
	p := filepath.Join(r.MemDir(), pendingFile)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", fmt.Errorf("record the forget: %w", err)
	}
	_, err = f.WriteString(mark + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	syncDir(r.MemDir())
	return mark, err
}

// readPending returns the marks in mem/forget.pending: nil when there is
// no file, empty (not nil) for an empty one.
func (r *Repo) readPending() ([]string, error) {
	b, err := os.ReadFile(filepath.Join(r.MemDir(), pendingFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	marks := []string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line != "" {
			marks = append(marks, line)
		}
	}
	return marks, nil
}

func (r *Repo) clearPending() error {
	if err := os.Remove(filepath.Join(r.MemDir(), pendingFile)); err != nil && !os.IsNotExist(err) {
		return err
	}
	syncDir(r.MemDir())
	return nil
}

// settleRounds bounds the purges settlePending adds for syncs that keep
// marking; past them the file stays for the next command.
const settleRounds = 3

// settlePending removes mem/forget.pending if it holds exactly covered,
// the marks the caller's last purge covers: read under sync.lock, after
// which (under that lock) the refs held nothing a tombstone names, before
// that purge's step 1. Otherwise — a sync marked meanwhile (it found
// forget.lock held and left its purge to the holder), or covered is nil
// — it drops what the tombstones name from the refs and purges again, up
// to settleRounds times, and leaves the file past them. The caller holds
// forget.lock. ran says whether it purged, left whether it gave up.
func (r *Repo) settlePending(covered []string, timeout time.Duration) (ran, left bool, err error) {
	for round := 0; ; round++ {
		l, err := r.syncLock(timeout)
		if err != nil {
			return ran, false, err
		}
		marks, err := r.readPending()
		if err != nil || marks == nil {
			l.Unlock()
			return ran, false, err
		}
		if covered != nil && slices.Equal(marks, covered) {
			err = r.clearPending()
			l.Unlock()
			if testHookPendingCleared != nil {
				testHookPendingCleared(r)
			}
			return ran, false, err
		}
		if round == settleRounds {
			l.Unlock()
			return ran, true, nil
		}
		// Every mark in marks is by a forget or sync that is done (they
		// mark under sync.lock): the refs lose what its tombstones name,
		// then one purge covers them all.
		err = r.dropDeadHeld(false, timeout)
		l.Unlock()
		if err != nil {
			return ran, false, err
		}
		r.st.refresh()
		if _, err := r.Purge(timeout); err != nil {
			return ran, false, err
		}
		ran, covered = true, marks
	}
}

// Pending reports whether a forget (or a sync's) was interrupted before
// it finished: FinishPending completes it.
func (r *Repo) Pending() bool {
	_, err := os.Stat(filepath.Join(r.MemDir(), pendingFile))
	return err == nil
}

// finishTries bounds how often FinishPending looks again after it let
// forget.lock go (a sync may have marked after its last look and found the
// lock held).
const finishTries = 3

// FinishPending completes an interrupted forget: main and the tracking
// refs lose every exchange a tombstone names, and unreachable objects are
// purged. It does nothing when none is owed, or when forget.lock is held
// (its holder looks at mem/forget.pending again after it lets the lock go,
// and finishes what it finds). ran says whether it did the work.
func (r *Repo) FinishPending(timeout time.Duration) (ran bool, err error) {
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	for try := 0; try < finishTries && r.Pending(); try++ {
		fl, ok, err := TryLockFile(filepath.Join(r.MemDir(), forgetLockFile))
		if err != nil || !ok {
			return ran, err
		}
		did, left, err := r.settlePending(nil, timeout)
		fl.Unlock()
		ran = ran || did
		if err != nil {
			if len(r.BadPacks()) > 0 { // git refuses such a pack: mended by check --repair
				return ran, fmt.Errorf("finish the interrupted forget: %w: run `git mem check --repair`", err)
			}
			return ran, fmt.Errorf("finish the interrupted forget: %w", err)
		}
		if left { // syncs kept marking: the next command goes on
			break
		}
	}
	return ran, nil
}

// testHookPendingCleared runs after a forget or FinishPending removed
// mem/forget.pending, while it still holds forget.lock (race tests).
var testHookPendingCleared func(r *Repo)

// trackingRefs lists refs/remotes/*/main.
func (r *Repo) trackingRefs() (map[plumbing.ReferenceName]plumbing.Hash, error) {
	out := map[plumbing.ReferenceName]plumbing.Hash{}
	refs, err := r.repo.References()
	if err != nil {
		return nil, err
	}
	defer refs.Close()
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		n := ref.Name().String()
		if strings.HasPrefix(n, "refs/remotes/") && strings.HasSuffix(n, "/main") && ref.Type() == plumbing.HashReference {
			out[ref.Name()] = ref.Hash()
		}
		return nil
	})
	return out, err
}
