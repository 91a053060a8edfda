package search

import (
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// A session search first counts each query term's postings in the fields
// it reads (termCosts: the workers' groups and buffer sizes): a dictionary
// look-up per term, field and segment, ~0.5 ms of a warm search's serial
// start at 1,000,000 exchanges for the 4-word query's eight terms. An index
// kept by a long-lived reader (KeepPostings: the warm search process)
// keeps the counts of the terms it has counted, for the segments they were
// counted in, so a term searched again is not looked up again
// (docs/BENCHMARKS.md, session 30). The counts are the same numbers, so
// are the groups, the buffers and every score. Numbers and terms only (a
// query's words, as the posting cache keys its lists), and they go with
// the Index.

// costFields are the fields termCosts counts, with the weight of a
// posting in each: the talk's counted thrice (each posting also scores the
// row's two neighbours), the card's twice; the plain (verbatim-bm25) layer
// reads the first two.
var costFields = [...]struct {
	name string
	mul  int
}{{fieldVerbatim, 3}, {fieldOutput, 1}, {fieldHead, 1}, {fieldAsked, 1}, {fieldDistilled, 2}}

// maxKeptCounts bounds the terms whose counts an index keeps; a full map
// starts again empty.
const maxKeptCounts = 1 << 14

// termCounts is a kept index's counts by term, for the segments segs.
type termCounts struct {
	mu   sync.Mutex
	segs []*scorch.SegmentSnapshot
	m    map[string][len(costFields)]int
}

// get returns t's counts when they were counted in segs.
func (c *termCounts) get(segs []*scorch.SegmentSnapshot, t string) ([len(costFields)]int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sameSegs(segs) {
		return [len(costFields)]int{}, false
	}
	n, ok := c.m[t]
	return n, ok
}

// put keeps t's counts, counted in segs.
func (c *termCounts) put(segs []*scorch.SegmentSnapshot, t string, n [len(costFields)]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sameSegs(segs) || len(c.m) >= maxKeptCounts {
		c.m, c.segs = nil, segs
	}
	if c.m == nil {
		c.m = map[string][len(costFields)]int{}
	}
	c.m[t] = n
}

// sameSegs reports whether segs are the segments of the kept counts; c.mu
// is held.
func (c *termCounts) sameSegs(segs []*scorch.SegmentSnapshot) bool {
	if len(segs) != len(c.segs) {
		return false
	}
	for i := range segs {
		if segs[i] != c.segs[i] {
			return false
		}
	}
	return true
}

// testCountTerms makes termCosts count every term even in a kept index
// (tests compare).
var testCountTerms = false
