package gitstore

import (
	"errors"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
)

// warmUp reads, while a sync's fetch waits on the remote, the trees of our
// own commits the remote lacked at the last sync (main's new commits
// against the tracking ref as it was before this fetch) into the sync's
// read memo: the walk the push makes of them (walkMissing), which also
// reads the tracking ref's trees on the same paths. At 1,000,000
// exchanges the union merge and the push's walk read ~1,900 such leaf
// trees of ~23 KB (inflate, hash, decode) after the fetch, while during
// the fetch our process idles: the remote's pack-objects takes ~0.7 s
// before its first byte (docs/BENCHMARKS.md, sessions 20–21).
//
// It only reads; what it keeps is what the merge and the walk read next
// (objects are immutable by id, nothing kept goes stale). It stops at
// once when the fetch ends, and before it takes more than warmMemoMax of
// the memo, so that it cannot crowd out what the merge itself keeps.
type warmUp struct {
	stop atomic.Bool
	done chan struct{}
}

// warmMemoMax bounds what the warm-up keeps: the merge of 1,000 new
// exchanges on each side at 1,000,000 keeps ~276 MB of readMemoMax's
// 384, most of it the same trees.
var warmMemoMax = readMemoMax / 2 // a variable for tests

// warmMaxCommits: more new commits than this (a first sync of a large
// memory, a long time offline) are not read ahead.
const warmMaxCommits = 20000

var errWarmStopped = errors.New("warm-up stopped")

// startWarm starts the warm-up of ours against known (the tracking ref
// before the fetch); nil when there is nothing to read ahead (no memo, a
// first sync).
func (r *Repo) startWarm(ours, known plumbing.Hash, loading *ancestryLoad) *warmUp {
	if r.st.memo == nil || ours.IsZero() || known.IsZero() || ours == known {
		return nil
	}
	w := &warmUp{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		cacheTip, cache := loading.wait()
		if w.stop.Load() {
			return
		}
		r.warm(&w.stop, ours, known, cacheTip, cache)
	}()
	return w
}

// warm is the warm-up's reading, until stop is set. Any error ends it:
// the sync reads the same objects again and reports what fails.
func (r *Repo) warm(stop *atomic.Bool, ours, known plumbing.Hash, cacheTip plumbing.Hash, cache *commitSet) {
	m := r.st.memo
	have, err := r.ancestryFrom(known, cacheTip, cache)
	if err != nil || stop.Load() {
		return
	}
	commits, ok := r.warmCommits(ours, have, stop)
	if !ok || len(commits) == 0 {
		return
	}
	base, err := r.treeOf(known)
	if err != nil {
		return
	}
	tw := r.newTreeWalker()
	tw.stop = func() bool { return stop.Load() || m.used() > warmMemoMax }
	// Newest first: the tip's trees are the ones the merge reads.
	for _, c := range commits {
		t, err := r.treeOf(c)
		if err != nil || tw.markNew(t, []plumbing.Hash{base}) != nil {
			return
		}
	}
}

// end stops the warm-up: it reads no tree after the one under way, which
// no other read waits for (readUnclaimed).
func (w *warmUp) end() {
	if w != nil {
		w.stop.Store(true)
	}
}

// wait returns once the warm-up is over (the sync does not close its store
// while the warm-up reads it).
func (w *warmUp) wait() {
	if w != nil {
		w.stop.Store(true)
		<-w.done
	}
}

// warmCommits is only(ours, have) without its boundary, given up (ok
// false) once stop is set or past warmMaxCommits commits: the fetch may
// end before the walk of our commits does (nothing new on the remote).
func (r *Repo) warmCommits(ours plumbing.Hash, have commitSet, stop *atomic.Bool) (out []plumbing.Hash, ok bool) {
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{ours}
	for len(stack) > 0 {
		if stop.Load() || len(out) > warmMaxCommits {
			return nil, false
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] || have.has(h) {
			continue
		}
		seen[h] = true
		out = append(out, h)
		ps, err := r.parents(h)
		if err != nil {
			return nil, false
		}
		for _, p := range ps {
			if !seen[p] {
				stack = append(stack, p)
			}
		}
	}
	return out, true
}
