package search

import (
	"container/list"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// A process that keeps an index open for many searches (the warm search
// process) keeps the decoded postings of its longest lists: the rows and
// frequencies a scan (postingReader.start, next; startNorm, nextNorm) gives,
// in the scan's order. At 1,000,000 exchanges decoding was a third of a
// search's CPU, and nearly all of it was the few words held by a large share
// of the exchanges ("error": 833,162 postings in each of three fields);
// those are the words that come back query after query, while a rare word's
// list costs little to decode again. A scan served from the cache gives the
// same postings in the same order (in one batch), so every score is the same
// float (TestPostingCacheSame).
//
// The cache belongs to one Index, whose snapshot never changes while it is
// open read-only (a writer's changes come as another Index: memory.View
// opens one when the seal or the head moved); entries are also keyed by the
// segments they were read from, so a snapshot that did change is never
// served another's postings. It holds rows and counts, no text, and goes
// with the Index when it is closed (a forget closes the kept one).
type postingCache struct {
	mu      sync.Mutex
	budget  int64 // bytes of postings kept at most
	used    int64
	segs    []*scorch.SegmentSnapshot // the snapshot the entries were read from
	entries map[postingKey]*list.Element
	lru     list.List            // of *postingEntry, most recent first
	seen    map[postingKey]int32 // reads of lists not kept (admit)
	retired []*postingEntry      // let go of, freed by the next search (reclaim)
	reads   int64                // lists read, kept or not (aging)
	hits    int64                // scans served (tests)
}

type postingKey struct {
	field, term string
	norm        bool // cardPostings (startNorm) rather than rowFreqs
}

type postingEntry struct {
	key   postingKey
	rows  []rowFreq
	cards []cardPosting
	mem   *scratch // where rows or cards are, nil: the heap
	n     int      // the postings the lists counted (startNorm's n)
	bytes int64
	uses  int32 // reads, halved with the others' (admit)
}

// minCachedPostings is the shortest list kept: below it decoding costs
// less than a few microseconds.
var minCachedPostings = 4096

// DefaultPostingCacheBytes is the postings a kept index holds by default:
// the lists of a 4-word query at 1,000,000 exchanges take ~56 MB; a
// rotation of 20 queries gained 4–6 % of CPU at 64 MB on a quiet machine
// (12 % under load, 18 % at 128 MB), for as many MB of RSS
// (docs/BENCHMARKS.md, session 28).
const DefaultPostingCacheBytes = 64 << 20

// KeepPostings makes ix keep up to budget bytes of decoded postings for
// its later searches (0 or less: none), for an index opened read-only by a
// long-lived process. It is called before the Index's searches, never
// beside one.
func (ix *Index) KeepPostings(budget int64) {
	var pc *postingCache
	var gr *groupRows
	var tc *termCounts
	if budget > 0 && ix.readOnly {
		pc = &postingCache{budget: budget, entries: map[postingKey]*list.Element{}}
		// and the rows of shared groups (members.go), the terms' counts
		// (termcounts.go)
		gr, tc = &groupRows{}, &termCounts{}
	}
	ix.grows.Store(gr)
	ix.tcounts.Store(tc)
	if old := ix.pcache.Swap(pc); old != nil {
		old.close()
	}
}

// sameSegs reports whether segs are the segments the entries were read
// from; when not, it lets go of them all and takes segs as the segments
// of the entries to come. c.mu is held.
func (c *postingCache) sameSegs(segs []*scorch.SegmentSnapshot) bool {
	same := len(segs) == len(c.segs)
	for i := 0; same && i < len(segs); i++ {
		same = segs[i] == c.segs[i]
	}
	if !same {
		for el := c.lru.Front(); el != nil; el = el.Next() {
			c.retired = append(c.retired, el.Value.(*postingEntry))
		}
		c.entries, c.used, c.segs, c.seen = map[postingKey]*list.Element{}, 0, segs, nil
		c.lru.Init()
	}
	return same
}

// get returns the entry of k read from segs, nil for none.
func (c *postingCache) get(segs []*scorch.SegmentSnapshot, k postingKey) *postingEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sameSegs(segs) {
		return nil
	}
	el, ok := c.entries[k]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(el)
	c.hits++
	e := el.Value.(*postingEntry)
	e.uses++
	return e
}

// admit reports whether the list k of n postings of size bytes each,
// just decoded, is one to keep: a list read once is only counted (a word
// of one query is not worth the copy); one read again is kept when it
// fits, or when the lists it would displace have been read fewer times
// than it (none is read over and over in turn with another: a rotation of
// queries whose lists do not all fit keeps the ones it has). The counts
// halve every agingReads reads, so what was read often long ago gives way.
func (c *postingCache) admit(k postingKey, n int, size int64) bool {
	if n < minCachedPostings {
		return false
	}
	bytes := int64(n) * size
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes > c.budget/2 {
		return false
	}
	if c.seen == nil || len(c.seen) >= maxSeenLists {
		c.seen = map[postingKey]int32{}
	}
	c.reads++
	if c.reads%agingReads == 0 {
		for key, v := range c.seen {
			c.seen[key] = v / 2
		}
		for el := c.lru.Front(); el != nil; el = el.Next() {
			el.Value.(*postingEntry).uses /= 2
		}
	}
	c.seen[k]++
	reads := c.seen[k]
	if reads < 2 {
		return false
	}
	ok, _ := c.room(bytes, reads, false)
	return ok
}

// room reports whether bytes fit in the budget once the least recently
// used lists read fewer than uses times are let go of, and, when collect,
// which lists those are. c.mu is held.
func (c *postingCache) room(bytes int64, uses int32, collect bool) (ok bool, victims []*list.Element) {
	free := c.budget - c.used
	for el := c.lru.Back(); el != nil && free < bytes; el = el.Prev() {
		if e := el.Value.(*postingEntry); e.uses < uses {
			free += e.bytes
			if collect {
				victims = append(victims, el)
			}
		}
	}
	return free >= bytes, victims
}

// maxSeenLists bounds the counts of lists read and not kept.
const maxSeenLists = 1 << 16

// agingReads is how often the counts halve.
const agingReads = 1 << 12

// put keeps e, read from segs, letting go of the least recently used
// entries read fewer times than it to stay within the budget (none when
// they are not enough).
func (c *postingCache) put(segs []*scorch.SegmentSnapshot, e *postingEntry) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sameSegs(segs) // the entries are now segs' (none if they were not)
	if _, ok := c.entries[e.key]; ok {
		return false // the other worker read it too
	}
	e.uses = c.seen[e.key]
	ok, victims := c.room(e.bytes, e.uses, true)
	if !ok {
		return false
	}
	for _, el := range victims {
		oe := el.Value.(*postingEntry)
		c.lru.Remove(el)
		delete(c.entries, oe.key)
		c.used -= oe.bytes
		c.retired = append(c.retired, oe)
	}
	delete(c.seen, e.key)
	c.entries[e.key] = c.lru.PushFront(e)
	c.used += e.bytes
	return true
}

// Lists of 64 KB or more are kept outside the Go heap, in mappings of their
// own (newPlainScratch): on the heap the collector lets the heap grow to
// twice what is live, so a 64 MB cache took ~130 MB more RSS
// (docs/BENCHMARKS.md, session 28). A mapping is unmapped only when no scan
// can be reading it: a list let go of during a search is retired and freed
// by the next search (reclaim: the searches of a read-only Index take turns
// under its cacheMu, and every scan runs inside one), or when the Index is
// closed.
const offHeapBytes = 64 << 10

func newRowsEntry(k postingKey, n int) *postingEntry {
	e := &postingEntry{key: k, n: n}
	e.rows = entrySlice[rowFreq](e, n)
	return e
}

func newCardsEntry(k postingKey, n int) *postingEntry {
	e := &postingEntry{key: k, n: n}
	e.cards = entrySlice[cardPosting](e, n)
	return e
}

// entrySlice is room for n postings of e, mapped when they take
// offHeapBytes or more.
func entrySlice[T any](e *postingEntry, n int) []T {
	var zero T
	e.bytes = int64(n) * int64(unsafe.Sizeof(zero))
	if e.bytes >= offHeapBytes {
		e.mem = newPlainScratch(int(e.bytes))
	}
	return scratchSlice[T](e.mem, 0, n)
}

// free gives back e's mapping; nothing may read e after.
func (e *postingEntry) free() {
	e.rows, e.cards = nil, nil
	e.mem.release()
	e.mem = nil
}

// reclaim frees the lists let go of by earlier searches. Called by a
// search of the Index before any of its scans (rowCacheFor).
func (c *postingCache) reclaim() {
	c.mu.Lock()
	r := c.retired
	c.retired = nil
	c.mu.Unlock()
	for _, e := range r {
		e.free()
	}
}

// close frees every list; the Index is being closed, no search runs.
func (c *postingCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; el = el.Next() {
		el.Value.(*postingEntry).free()
	}
	for _, e := range c.retired {
		e.free()
	}
	c.entries, c.retired, c.used = nil, nil, 0
	c.lru.Init()
}
