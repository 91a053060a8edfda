package search

import (
	"errors"
	"reflect"
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// TestScratch: the scratch hands out zeroed, aligned, disjoint arrays while
// it has room, and the heap's after; a nil scratch is the heap.
func TestScratch(t *testing.T) {
	s := newScratch(1000)
	if runtime.GOOS == "linux" && s == nil {
		t.Fatal("no scratch mapping on Linux")
	}
	if s == nil {
		t.Skip("no scratch off Linux")
	}
	defer s.release()
	if uintptrOf(s.b)%hugePage != 0 || len(s.b) != hugePage {
		t.Errorf("scratch at %#x, %d bytes: want one whole huge page", uintptrOf(s.b), len(s.b))
	}
	inside := func(p unsafe.Pointer) bool {
		a := uintptr(p)
		return a >= uintptrOf(s.b) && a < uintptrOf(s.b)+uintptr(len(s.b))
	}
	flags := scratchSlice[bool](s, 3, 3)
	fs := scratchSlice[float64](s, 10, 12)
	rows := scratchSlice[int32](s, 0, 5)
	if len(fs) != 10 || cap(fs) != 12 || len(rows) != 0 || cap(rows) != 5 {
		t.Errorf("len/cap: floats %d/%d, rows %d/%d", len(fs), cap(fs), len(rows), cap(rows))
	}
	if uintptr(unsafe.Pointer(&fs[0]))%8 != 0 || !inside(unsafe.Pointer(&fs[0])) || !inside(unsafe.Pointer(&flags[0])) {
		t.Error("floats not aligned, or not from the scratch")
	}
	for i := range fs {
		if fs[i] != 0 {
			t.Fatalf("floats[%d] = %v, want zero memory", i, fs[i])
		}
		fs[i] = float64(i)
	}
	flags[2] = true
	rows = append(rows, 7, 8)
	// Disjoint: writing one array left the others as they were.
	if fs[0] != 0 || fs[9] != 9 || flags[0] || !flags[2] || rows[1] != 8 {
		t.Errorf("arrays overlap: %v %v %v", fs, flags, rows)
	}
	sub := s.sub(64)
	if sub == nil || !inside(unsafe.Pointer(&sub.b[0])) {
		t.Fatal("sub: no room carved")
	}
	// More than it holds: from the heap, same length and capacity.
	big := scratchSlice[float64](sub, 100, 100)
	if len(big) != 100 || inside(unsafe.Pointer(&big[0])) {
		t.Error("an array larger than the sub-scratch came from it")
	}
	if s.sub(len(s.b)) != nil {
		t.Error("sub carved more than was left")
	}
	if h := scratchSlice[float64](nil, 2, 4); len(h) != 2 || cap(h) != 4 {
		t.Errorf("nil scratch: len %d cap %d", len(h), cap(h))
	}
	s.release()
	s.release() // twice: nothing left to unmap
}

// TestSessionScratchSameScores: the session layer ranks the same, scores
// included, whether its arrays come from the scratch or the heap, with
// searches running concurrently on one index.
func TestSessionScratchSameScores(t *testing.T) {
	ro := readOnlyContextIndex(t)
	queries := []Query{
		{Text: "dinosaur museum kids", Mode: ModeSessionBM25},
		{Text: "what did I think of the aquarium?", Mode: ModeSessionBM25},
		{Text: "museum", Mode: ModeVerbatimBM25},
	}
	run := func(heap bool) [][]Hit {
		disableScratch = heap
		defer func() { disableScratch = false }()
		var out [][]Hit
		for _, q := range queries {
			hs, err := ro.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) == 0 {
				t.Fatalf("%q: no hits (the test would show nothing)", q.Text)
			}
			out = append(out, hs)
		}
		return out
	}
	want := run(true)
	if got := run(false); !reflect.DeepEqual(got, want) {
		t.Errorf("scratch %v, heap %v", got, want)
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i, q := range queries {
				hs, err := ro.Search(q)
				if err == nil && !reflect.DeepEqual(hs, want[i]) {
					err = errors.New("concurrent search: " + q.Text + ": results differ")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestSessionCtxUnmapped: the neighbour table's arrays are unmapped once the
// table is unreachable (a long-lived process opens many indexes), never
// while a scorer can still read them.
func TestSessionCtxUnmapped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no scratch off Linux")
	}
	rows := []ctxRow{{-1, 1, 3, 1, 0, 2}, {0, -1, 4, 2, 1, 0}}
	c := newSessionCtx(rows, nil)
	m := c.mem
	if m == nil {
		t.Fatal("the arrays are not in a mapping")
	}
	runtime.GC()
	runtime.GC()
	// c is still used below: its arrays must still be there.
	if m.released.Load() || c.dl[0] == 0 || c.weight[1] == 0 {
		t.Fatalf("released while reachable: dl %v weight %v", c.dl, c.weight)
	}
	c = nil
	for i := 0; i < 100 && !m.released.Load(); i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if !m.released.Load() {
		t.Error("an unreachable neighbour table's arrays were never unmapped")
	}
}

// TestScratchKept: a scratch given back is handed to the next query whose
// arrays fit, with every array's length zeroed again; the larger of two
// given back stays; an idle one is unmapped.
func TestScratchKept(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no scratch off Linux")
	}
	dropKept(kept.gen) // whatever an earlier test left
	a := reuseScratch(1000)
	fs := scratchSlice[float64](a, 10, 10)
	rows := scratchSlice[int32](a, 0, 4)
	for i := range fs {
		fs[i] = 1
	}
	rows = append(rows, 5, 6)
	a.keep()
	b := reuseScratch(2000)
	if b != a || a.released.Load() {
		t.Fatal("the kept scratch was not reused")
	}
	fs = scratchSlice[float64](b, 8, 10)
	for i, f := range fs {
		if f != 0 {
			t.Fatalf("reused floats[%d] = %v, want zero", i, f)
		}
	}
	if fs[:10][9] != 1 {
		t.Error("cleared beyond the length asked for (the test does not see what it means to)")
	}
	if got := scratchSlice[int32](b, 2, 4); got[0] != 0 || got[1] != 0 {
		t.Errorf("reused rows %v, want zeros", got)
	}
	if sub := b.sub(64); sub == nil || !sub.used || scratchSlice[int64](sub, 8, 8)[7] != 0 {
		t.Error("a sub-scratch of a reused scratch is not cleared")
	}
	// Too small for the next query: a fresh one; given back, the larger stays.
	b.keep()
	big := reuseScratch(3 * hugePage)
	if big == b || big.used {
		t.Fatal("a scratch too small was reused")
	}
	big.keep()
	if kept.s != big || !b.released.Load() {
		t.Error("the larger scratch was not the one kept")
	}
	small := newScratch(1000)
	small.keep()
	if kept.s != big || !small.released.Load() {
		t.Error("a smaller scratch given back replaced the larger")
	}
	dropKept(kept.gen)
	if kept.s != nil || !big.released.Load() {
		t.Error("an idle kept scratch was not unmapped")
	}
	again := reuseScratch(1000)
	again.keep()
	DropScratch()
	if kept.s != nil || !again.released.Load() {
		t.Error("DropScratch left the kept scratch mapped")
	}
	var none *scratch
	none.keep() // the heap: nothing to keep
}
