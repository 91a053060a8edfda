package search

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// TestPrefetchRows: prefetching rows in range, at the ends, far outside
// the arrays and negative reads the rows and changes nothing, for rows as
// postings (8 bytes apart) and as a list of rows (4 bytes apart); a count
// of 0 or less reads nothing.
func TestPrefetchRows(t *testing.T) {
	const n = 1000
	w8, v8 := make([]float64, n), make([]float64, n)
	b1, i4 := make([]bool, n), make([]int32, n)
	for i := range n {
		w8[i], v8[i], b1[i], i4[i] = float64(i)+0.5, -float64(i), i%3 == 0, int32(i*7)
	}
	want := [4]any{slices.Clone(w8), slices.Clone(v8), slices.Clone(b1), slices.Clone(i4)}
	pf := newPrefetchSet(w8, v8, b1, i4)
	for _, tc := range []struct {
		name string
		rows []int32
		n    int
	}{
		{"in range", []int32{0, 1, 500, 998, 999}, 5},
		{"past the end", []int32{n, n + 4096, math.MaxInt32}, 3},
		{"negative", []int32{-1, -4096, math.MinInt32}, 3},
		{"none", []int32{7}, 0},
		{"a negative count", []int32{7}, -3},
	} {
		ps := make([]rowFreq, len(tc.rows))
		for i, r := range tc.rows {
			ps[i] = rowFreq{row: r, freq: uint32(i + 1)}
		}
		before := slices.Clone(ps)
		prefetchRows(&ps[0].row, tc.n, 8, &pf)
		prefetchRows(&tc.rows[0], tc.n, 4, &pf)
		got := [4]any{w8, v8, b1, i4}
		for k := range got {
			if !equalAny(got[k], want[k]) {
				t.Fatalf("%s: array %d changed", tc.name, k)
			}
		}
		if !slices.Equal(ps, before) {
			t.Fatalf("%s: the postings changed", tc.name)
		}
	}
	// nil arrays: a prefetch of any address is no fault.
	var none prefetchSet
	prefetchRows(&i4[0], n, 4, &none)
}

func equalAny(a, b any) bool {
	switch a := a.(type) {
	case []float64:
		return slices.EqualFunc(a, b.([]float64), func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	case []bool:
		return slices.Equal(a, b.([]bool))
	case []int32:
		return slices.Equal(a, b.([]int32))
	}
	return false
}

// TestPrefetchPostingsEnds: prefetchPostings at every position of lists
// around the lookahead and chunk sizes stays within the list (a slice
// past it panics) and leaves the list as it was.
func TestPrefetchPostingsEnds(t *testing.T) {
	w8 := make([]float64, 64)
	pf := newPrefetchSet(w8, w8, nil, nil)
	for _, ln := range []int{0, 1, prefetchChunk, prefetchAhead - 1, prefetchAhead, prefetchAhead + 1,
		prefetchAhead + prefetchChunk - 1, prefetchAhead + prefetchChunk, prefetchAhead + prefetchChunk + 1, 200} {
		ps := make([]rowFreq, ln, ln) // no room past len: a read past it is caught
		for i := range ps {
			ps[i] = rowFreq{row: int32(i % 64), freq: 1}
		}
		before := slices.Clone(ps)
		for i := range ps {
			prefetchPostings(ps, i, &pf)
		}
		if !slices.Equal(ps, before) {
			t.Fatalf("%d postings: changed", ln)
		}
	}
}

// TestTitlePrefetchSame: the title part with its prefetch and without
// gives every row the same score bit for bit and touches the rows in the
// same order, on a memory of runs where "error" heads more sessions than
// the prefetch looks ahead (so it prefetches), into the sums and into a
// record.
func TestTitlePrefetchSame(t *testing.T) {
	f := runMemory(t, 4000, 20)
	ctx := context.Background()
	heads, err := f.ix.postings(ctx, f.rd, map[uint64]int32{}, fieldHead, "error", nil)
	if err != nil {
		t.Fatal(err)
	}
	titles := 0
	for _, p := range heads {
		if f.sc.links[p.row].prev < 0 {
			titles++
		}
	}
	t.Logf("%d titles of error", titles)
	if titles <= prefetchAhead+prefetchChunk {
		t.Fatalf("seed %d: %d titles of error, the prefetch never runs", f.seed, titles)
	}
	distAvg := float64(f.ix.man.BM25.FieldLen[fieldDistilled]) / float64(f.n)
	r := rand.New(rand.NewSource(f.seed))
	defer func() { disablePrefetch = false }()
	for q := range 20 {
		terms := []string{"error"}
		for range 1 + r.Intn(5) {
			terms = append(terms, f.vocab[r.Intn(len(f.vocab))])
		}
		r.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
		var ss [2]*sessionScorer
		for k := range ss {
			ss[k] = &sessionScorer{ix: f.ix, r: f.rd, sc: f.sc, cache: map[uint64]int32{}, n: f.n, distAvg: distAvg}
		}
		for k, term := range terms {
			var recs [2]*termRecord
			if (q+k)%3 == 2 {
				recs = [2]*termRecord{{}, {}}
			}
			for i, s := range ss {
				s.k, s.tw, s.rec = int32(k+1), 1, recs[i]
				disablePrefetch = i == 1
				if err := s.term(ctx, term); err != nil {
					t.Fatal(err)
				}
				s.rec = nil
				if recs[i] != nil {
					s.apply(recs[i])
				}
			}
			if recs[0] != nil && !slices.Equal(recs[0].adds, recs[1].adds) {
				t.Fatalf("seed %d, %q, term %q: the records differ", f.seed, terms, term)
			}
			if d := sameScorer(ss[0], ss[1]); d != "" {
				t.Fatalf("seed %d, %q, after %q: %s differs with the prefetch off", f.seed, terms, term, d)
			}
		}
	}
}
