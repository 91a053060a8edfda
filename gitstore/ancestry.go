package gitstore

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
)

// commitSet is a set of commits, the ancestry of one: the cached ancestry
// of an ancestor as a sorted list (read from mem/cache/sync-ancestry.bin,
// shared by every set made from it, never written) and the commits walked
// since in a map. At 1,000,000 exchanges a sync used to copy the cached
// million ids into a map three times (the load, the remote's and our
// ancestry, the merge's union of both): 1.2–1.9 s of CPU of every sync
// (docs/BENCHMARKS.md, session 17); a lookup in the list is a binary search.
type commitSet struct {
	sorted []plumbing.Hash // ascending, no repeats; read-only
	more   map[plumbing.Hash]bool
}

func compareHash(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) }

func (s commitSet) has(h plumbing.Hash) bool {
	if s.more[h] {
		return true
	}
	_, ok := slices.BinarySearchFunc(s.sorted, h, compareHash)
	return ok
}

// all returns the set's commits, ascending, each once.
func (s commitSet) all() []plumbing.Hash {
	return mergeSorted(s.sorted, slices.SortedFunc(maps.Keys(s.more), compareHash))
}

// mergeSorted merges two ascending lists into one, each id once.
func mergeSorted(x, y []plumbing.Hash) []plumbing.Hash {
	if len(x) == 0 {
		return y
	}
	if len(y) == 0 {
		return x
	}
	out := make([]plumbing.Hash, 0, len(x)+len(y))
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch c := compareHash(x[i], y[j]); {
		case c < 0:
			out = append(out, x[i])
			i++
		case c > 0:
			out = append(out, y[j])
			j++
		default:
			out = append(out, x[i])
			i, j = i+1, j+1
		}
	}
	out = append(out, x[i:]...)
	return append(out, y[j:]...)
}

// unionSets is a ∪ b plus extra. Sets made from one cache share its list and
// differ in their maps only; otherwise (a walk of the whole history on one
// side) both are listed afresh.
func unionSets(a, b commitSet, extra plumbing.Hash) commitSet {
	more := map[plumbing.Hash]bool{extra: true}
	if len(a.sorted) == len(b.sorted) && (len(a.sorted) == 0 || &a.sorted[0] == &b.sorted[0]) {
		maps.Copy(more, a.more)
		maps.Copy(more, b.more)
		return commitSet{sorted: a.sorted, more: more}
	}
	return commitSet{sorted: mergeSorted(a.all(), b.all()), more: more}
}

// ancestry returns every commit reachable from start (start included).
func (r *Repo) ancestry(start plumbing.Hash) (commitSet, error) {
	seen := map[plumbing.Hash]bool{}
	if start.IsZero() {
		return commitSet{more: seen}, nil
	}
	stack := []plumbing.Hash{start}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		ps, err := r.parents(h)
		if err != nil {
			return commitSet{}, err
		}
		for _, p := range ps {
			if !seen[p] {
				stack = append(stack, p)
			}
		}
	}
	return commitSet{more: seen}, nil
}

// ancestryCachePath holds the ancestry of main as of the last sync: every
// later sync walks only the commits made since (the remote's and ours
// both descend from it), instead of the whole history. The file is the tip,
// the ancestry's ids (ascending since session 17; any order is read) and
// the SHA-1 of both.
func (r *Repo) ancestryCachePath() string {
	return filepath.Join(r.MemDir(), "cache", "sync-ancestry.bin")
}

// loadAncestry reads the cached ancestry: its tip and set; ok is false when
// there is none or it is damaged (a cache: then the walk is full) or it
// lacks its tip.
func (r *Repo) loadAncestry() (tip plumbing.Hash, set *commitSet, ok bool) {
	b, err := os.ReadFile(r.ancestryCachePath())
	const hl = len(plumbing.ZeroHash)
	if err != nil || len(b) < 2*hl || len(b)%hl != 0 {
		return tip, nil, false
	}
	body, sum := b[:len(b)-hl], b[len(b)-hl:]
	if s := sha1.Sum(body); !bytes.Equal(s[:], sum) {
		return tip, nil, false
	}
	copy(tip[:], body[:hl])
	hs := make([]plumbing.Hash, len(body)/hl-1)
	for i := range hs {
		copy(hs[i][:], body[(i+1)*hl:])
	}
	if !slices.IsSortedFunc(hs, compareHash) { // written by an earlier git mem (a map's order)
		slices.SortFunc(hs, compareHash)
	}
	hs = slices.CompactFunc(hs, func(a, b plumbing.Hash) bool { return a == b })
	set = &commitSet{sorted: hs}
	return tip, set, set.has(tip)
}

// ancestryLoad is loadAncestry on a goroutine (a sync starts it before its
// fetch and waits for it after).
type ancestryLoad struct {
	done chan struct{}
	tip  plumbing.Hash
	set  *commitSet
}

// startLoadAncestry starts loadAncestry; it only reads the cache file.
func (r *Repo) startLoadAncestry() *ancestryLoad {
	l := &ancestryLoad{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.tip, l.set, _ = r.loadAncestry()
	}()
	return l
}

// wait returns what loadAncestry returned (its ok is not used: the set is
// a cache the walks check for themselves).
func (l *ancestryLoad) wait() (plumbing.Hash, *commitSet) {
	<-l.done
	return l.tip, l.set
}

// saveAncestry writes the cache for tip (best effort).
func (r *Repo) saveAncestry(tip plumbing.Hash, set commitSet) {
	const hl = len(plumbing.ZeroHash)
	hs := set.all()
	body := make([]byte, 0, (len(hs)+1)*hl+hl)
	body = append(body, tip[:]...)
	for _, h := range hs {
		body = append(body, h[:]...)
	}
	s := sha1.Sum(body)
	body = append(body, s[:]...)
	p := r.ancestryCachePath()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
	if err := os.WriteFile(tmp, body, 0o644); err != nil {
		return
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
	}
}

// ancestryFrom is ancestry(start) using the cache of an ancestor: the walk
// stops at commits the cache holds. It is exact only when the cached tip
// is an ancestor of start — the walk then meets it — else the full walk runs.
func (r *Repo) ancestryFrom(start, cachedTip plumbing.Hash, cached *commitSet) (commitSet, error) {
	if cached == nil || start.IsZero() {
		return r.ancestry(start)
	}
	walked, boundary, err := r.only(start, *cached)
	if err != nil {
		return commitSet{}, err
	}
	met := false
	for _, b := range boundary {
		if b == cachedTip {
			met = true
		}
	}
	if !met {
		return r.ancestry(start)
	}
	more := make(map[plumbing.Hash]bool, len(cached.more)+len(walked))
	maps.Copy(more, cached.more)
	for _, h := range walked {
		more[h] = true
	}
	return commitSet{sorted: cached.sorted, more: more}, nil
}
