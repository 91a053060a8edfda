package search

import "unsafe"

// prefetchSet is the per-row arrays a loop over rows far apart is about
// to touch, for prefetchRows: two of 8-byte elements, one of 1-byte and
// one of 4-byte elements (prefetch_amd64.s reads them in this order).
type prefetchSet struct {
	w8, v8 unsafe.Pointer
	b1     unsafe.Pointer
	i4     unsafe.Pointer
}

// newPrefetchSet is the prefetchSet of the arrays' first elements.
func newPrefetchSet(w8, v8 []float64, b1 []bool, i4 []int32) prefetchSet {
	return prefetchSet{unsafe.Pointer(unsafe.SliceData(w8)), unsafe.Pointer(unsafe.SliceData(v8)),
		unsafe.Pointer(unsafe.SliceData(b1)), unsafe.Pointer(unsafe.SliceData(i4))}
}

// disablePrefetch turns prefetchPostings off (tests and measurements
// compare).
var disablePrefetch = false

// A loop that prefetches does so every prefetchChunk postings (a power of
// two), for the prefetchChunk postings prefetchAhead further on.
const (
	prefetchAhead = 32
	prefetchChunk = 16
)

// prefetchPostings prefetches pf's elements for the rows of ps[i+ahead,
// i+ahead+chunk) when i is a multiple of prefetchChunk; a no-op otherwise
// and past the end.
// It is inlined: the test costs no call.
func prefetchPostings(ps []rowFreq, i int, pf *prefetchSet) {
	if i&(prefetchChunk-1) == 0 && !disablePrefetch {
		prefetchChunkAt(ps, i+prefetchAhead, pf)
	}
}

// prefetchChunkAt prefetches pf's elements for the rows of ps[j,
// j+prefetchChunk), as many of them as there are (not inlined, so that
// prefetchPostings is).
//
//go:noinline
func prefetchChunkAt(ps []rowFreq, j int, pf *prefetchSet) {
	if j < len(ps) {
		prefetchRows(&ps[j].row, min(prefetchChunk, len(ps)-j), int(unsafe.Sizeof(rowFreq{})), pf)
	}
}
