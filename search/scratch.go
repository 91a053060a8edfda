package search

import (
	"sync/atomic"
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
type scratch struct {
	b        []byte
	off      int
	free     func()
	released atomic.Bool // tests: the mapping was given back
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

// scratchSlice returns a slice of n zero elements (length ln, capacity n)
// from s, or from the heap.
func scratchSlice[T any](s *scratch, ln, n int) []T {
	var zero T
	if p := s.take(n * int(unsafe.Sizeof(zero))); p != nil {
		return unsafe.Slice((*T)(p), n)[:ln]
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
	return &scratch{b: unsafe.Slice((*byte)(p), size)}
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
