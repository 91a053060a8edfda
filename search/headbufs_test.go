package search

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
)

// TestHeadBufsSameScores: a scorer that keeps its title and prompt postings
// in buffers reused term after term (from the scratch, which a kept one
// hands out holding an earlier query's data) sums every row's score to the
// same bits, touches the rows in the same order, and the session layer
// ranks the same, as with fresh slices per term.
func TestHeadBufsSameScores(t *testing.T) {
	f := sessionMemory(t, 600, 120, 40, 20)
	ix, r, seed, n, vocab := f.ix, f.r, f.seed, f.n, f.vocab
	ctx := context.Background()
	// score sums terms with one scorer; dirty: its arrays come from a
	// scratch that held other data (as a kept one does).
	score := func(terms []string, fresh, dirty bool) *sessionScorer {
		disableHeadBufs = fresh
		defer func() { disableHeadBufs = false }()
		var mem *scratch
		if dirty {
			mem = newScratch(scorerScratch(n, n, n))
			if mem == nil {
				t.Skip("no scratch mapping here")
			}
			t.Cleanup(mem.release)
			for i := range mem.b {
				mem.b[i] = 0x5a
			}
			mem.used = true
		}
		return f.sumTerms(t, terms, mem)
	}
	var queries []string
	for range 30 {
		terms := []string{"error"}
		for range 2 + r.Intn(5) {
			terms = append(terms, vocab[r.Intn(len(vocab))])
		}
		r.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
		want := score(terms, true, false)
		if len(want.touched) == 0 {
			t.Fatalf("%q: no row scored (the test would show nothing)", terms)
		}
		for _, dirty := range []bool{false, true} {
			got := score(terms, false, dirty)
			for row := range n {
				if math.Float64bits(got.scores[row]) != math.Float64bits(want.scores[row]) {
					t.Fatalf("seed %d, %q, dirty %v: row %d scores %v, fresh slices %v", seed, terms, dirty, row, got.scores[row], want.scores[row])
				}
			}
			if !reflect.DeepEqual(got.touched, want.touched) {
				t.Fatalf("seed %d, %q, dirty %v: rows touched in another order", seed, terms, dirty)
			}
		}
		queries = append(queries, fmt.Sprint(terms))
	}
	// The layer: scratch kept from query to query, and the heap.
	rank := func(q string, fresh, heap bool) []cand {
		disableHeadBufs, disableScratch = fresh, heap
		defer func() { disableHeadBufs, disableScratch = false, false }()
		cs, err := ix.sessionBM25Layer(ctx, q, nil, 30, false)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	for _, q := range queries {
		want := rank(q, true, true)
		for _, heap := range []bool{false, true, false} {
			if got := rank(q, false, heap); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, %q, heap %v: ranked %v, fresh slices %v", seed, q, heap, got, want)
			}
		}
	}
}
