package search

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// scratch hands out the per-row arrays of one session-bm25 query (scores,
// frequencies, row lists, posting buffers) from one anonymous mapping
// that the kernel may back with transparent huge pages (scratch_linux.go).
// Taken from the Go heap, a query at 100,000 exchanges touched about
// 3,000 fresh 4 KB pages in those arrays, each a page fault (2–3 µs in a
// virtual machine: ~9 ms of a 75 ms search process; docs/BENCHMARKS.md,
// session 13); in 2 MB pages they are a few faults. Nothing stored in it
// is a Go pointer, and nothing taken from it may be used after free.
// A nil *scratch (no mapping) allocates from the heap.
//
// A long-lived process (the warm search process) keeps the last query's
// scratch for the next one (reuseScratch, keep): mapped afresh, each
// search paid the kernel for zeroing and faulting in its huge pages, 6.6 %
// of the warm process's time at 100,000 exchanges (docs/BENCHMARKS.md,
// session 15). A kept scratch holds the last query's data; take clears
// what its callers are promised to find zero (scratchSlice).
type scratch struct {
	b        []byte
	off      int
	free     func()
	used     bool        // handed out before: not zero memory
	released atomic.Bool // tests: the mapping was given back
}

// kept is the scratch of the last finished query, waiting for the next
// one; it is unmapped after keptIdle without a query that took it.
var kept struct {
	sync.Mutex
	s   *scratch
	gen uint64 // counts keeps, so an old timer leaves a newer scratch alone
}

// maxKept bounds the scratch kept between queries (1,000,000 exchanges
// take ~150 MB); a larger one is unmapped as before.
const maxKept = 512 << 20

// keptIdle is how long a kept scratch waits for the next query.
const keptIdle = time.Minute

// reuseScratch returns the kept scratch when it has size bytes, else a
// fresh one (newScratch).
func reuseScratch(size int) *scratch {
	if testScratchSize != nil {
		testScratchSize(size)
	}
	kept.Lock()
	s := kept.s
	if s != nil && len(s.b) >= size {
		kept.s = nil
	} else {
		s = nil
	}
	kept.Unlock()
	if s == nil {
		return newScratch(size)
	}
	s.off, s.used = 0, true
	return s
}

// testScratchSize, when set, is told the size of every scratch a query
// asks reuseScratch for (tests).
var testScratchSize func(size int)

// keep gives s back for the next query (reuseScratch) instead of
// unmapping it: the larger of s and the scratch already kept stays, the
// other is unmapped. Nothing taken from s may be used after.
func (s *scratch) keep() {
	if s == nil {
		return
	}
	if s.free == nil || len(s.b) > maxKept {
		s.release()
		return
	}
	kept.Lock()
	drop := s
	if kept.s == nil || len(kept.s.b) <= len(s.b) {
		drop, kept.s = kept.s, s
	}
	kept.gen++
	gen := kept.gen
	kept.Unlock()
	drop.release()
	time.AfterFunc(keptIdle, func() { dropKept(gen) })
}

// dropKept unmaps the kept scratch if no query kept one since gen.
func dropKept(gen uint64) {
	kept.Lock()
	s := kept.s
	if kept.gen != gen {
		s = nil
	} else {
		kept.s = nil
	}
	kept.Unlock()
	s.release()
}

// hugePage is the size of a transparent huge page on amd64 and arm64
// (scratch_linux.go aligns the mapping to it).
const hugePage = 2 << 20

// disableScratch makes the session layer take its arrays from the heap
// (tests compare the two).
var disableScratch = false

// take returns size bytes of the scratch, 8-byte aligned, or nil when it
// has no room left (the caller then allocates from the heap).
func (s *scratch) take(size int) unsafe.Pointer {
	if s == nil || size <= 0 {
		return nil
	}
	off := (s.off + 7) &^ 7
	if off+size > len(s.b) {
		return nil
	}
	s.off = off + size
	return unsafe.Pointer(&s.b[off])
}

// scratchSlice returns a slice of ln zero elements and capacity n from s,
// or from the heap. The capacity beyond ln is zero in a fresh scratch and
// holds an earlier query's data in a kept one: only append to it.
func scratchSlice[T any](s *scratch, ln, n int) []T {
	var zero T
	if p := s.take(n * int(unsafe.Sizeof(zero))); p != nil {
		a := unsafe.Slice((*T)(p), n)[:ln]
		if s.used {
			clear(a)
		}
		return a
	}
	return make([]T, ln, n)
}

// sub carves size bytes off s as a scratch of its own (for one goroutine),
// nil when s has no room left.
func (s *scratch) sub(size int) *scratch {
	p := s.take(size)
	if p == nil {
		return nil
	}
	return &scratch{b: unsafe.Slice((*byte)(p), size), used: s.used}
}

// release unmaps the scratch; nothing taken from it may be used after.
func (s *scratch) release() {
	if s != nil && s.free != nil {
		s.free()
		s.free, s.b = nil, nil
		s.released.Store(true)
	}
}

// uintptrOf is the address of b's first byte.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// DropScratch unmaps the scratch kept for the next query, if any (the
// warm search process gives back the memory of an index it let go of).
func DropScratch() {
	kept.Lock()
	s := kept.s
	kept.s = nil
	kept.Unlock()
	s.release()
}
