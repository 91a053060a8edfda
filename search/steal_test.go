package search

import (
	"context"
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// TestStolenTermSameScores: a term computed into a record by another
// scorer (help) and applied by the owner after its earlier terms gives
// every row the same bits, the rows touched in the same order and the same
// held count as the owner scoring the term itself, for random 2–7-term
// queries with a dense word and term weights 1 and 0.5.
func TestStolenTermSameScores(t *testing.T) {
	f := sessionMemory(t, 700, 120, 40, 30)
	r, seed, n, vocab := f.r, f.seed, f.n, f.vocab
	ctx := context.Background()
	for q := range 40 {
		terms := []string{"error"}
		for range 1 + r.Intn(6) {
			terms = append(terms, vocab[r.Intn(len(vocab))])
		}
		r.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
		want := f.sumTerms(t, terms, nil)
		// The owner scores all but a suffix; a helper (its own arrays,
		// having scored other terms first) records the suffix's terms.
		cut := r.Intn(len(terms))
		owner := f.sumTerms(t, terms[:cut], nil)
		helper := f.sumTerms(t, []string{vocab[r.Intn(len(vocab))], "error"}, nil)
		// Every fifth query: a record changed (by 1e-9 of a value) first,
		// which the comparison must see.
		tamper := q%5 == 0
		var held int
		for k := cut; k < len(terms); k++ {
			rec := &termRecord{}
			helper.k, helper.tw, helper.rec = int32(k+1), []float64{1, 0.5}[k%2], rec
			if err := helper.term(ctx, terms[k]); err != nil {
				t.Fatal(err)
			}
			helper.rec, held = nil, helper.held
			if tamper && len(rec.adds) > 0 {
				tamper = false
				rec.adds[len(rec.adds)-1].v *= 1 + 1e-9
				bad := f.sumTerms(t, terms[:k], nil)
				bad.apply(rec)
				if k == len(terms)-1 && same(bad, want, n) {
					t.Fatalf("seed %d, %q: a changed record went unnoticed", seed, terms)
				}
				k-- // record it again, unchanged
				continue
			}
			owner.apply(rec)
		}
		if !same(owner, want, n) {
			t.Fatalf("seed %d, %q, cut %d: scores differ from the serial ones", seed, terms, cut)
		}
		if !reflect.DeepEqual(owner.touched, want.touched) {
			t.Fatalf("seed %d, %q, cut %d: rows touched in another order", seed, terms, cut)
		}
		if cut < len(terms) && held != want.held { // the last term's
			t.Fatalf("seed %d, %q: held %d, serial %d", seed, terms, held, want.held)
		}
	}
}

// same says whether a's and b's scores are the same bits on every row.
func same(a, b *sessionScorer, n int) bool {
	for row := range n {
		if math.Float64bits(a.scores[row]) != math.Float64bits(b.scores[row]) {
			return false
		}
	}
	return true
}

// TestStealSameLayer: the session layer with the workers stealing (as
// scheduled, and with each worker helping first, so most terms move; the
// records in the scratch, outgrowing their room, or on the heap) sums
// every row to the same bits, touches the rows in the same order, counts
// the same exact matches and ranks the same as each group on its own
// worker; queries of 1–9 words, a third with a code-like word (the exact
// tier), first-person ones (the prompt part), misspelt ones (the typo
// pass), plain and not. It fails unless terms were stolen.
func TestStealSameLayer(t *testing.T) {
	f := sessionMemory(t, 800, 120, 40, 20)
	ix, r, seed, vocab := f.ix, f.r, f.seed, f.vocab
	ctx := context.Background()
	type state struct {
		scores  []uint64
		touched []int32
		matched []int
		ranked  []cand
	}
	var stolen atomic.Int64
	testStolen = func(int, int) { stolen.Add(1) }
	defer func() { testStolen = nil }()
	room := recordRoom
	defer func() { recordRoom = room }()
	run := func(q string, plain, off, first bool, heap bool) state {
		disableSteal, testStealFirst, disableScratch = off, first, heap
		defer func() { disableSteal, testStealFirst, disableScratch, testSummed = false, false, false, nil }()
		var st state
		testSummed = func(ws []*sessionScorer, scores []float64, touched []int32) {
			for _, v := range scores {
				st.scores = append(st.scores, math.Float64bits(v))
			}
			st.touched = append([]int32(nil), touched...)
			st.matched = make([]int, len(scores))
			for _, w := range ws {
				for row, m := range w.matched {
					st.matched[row] += int(m)
				}
			}
		}
		cs, err := ix.sessionBM25Layer(ctx, q, nil, 40, plain)
		if err != nil {
			t.Fatal(err)
		}
		st.ranked = cs
		return st
	}
	scored := 0
	for i := range 60 {
		words := make([]string, 1+r.Intn(9))
		for j := range words {
			words[j] = vocab[r.Intn(len(vocab))]
		}
		switch i % 6 {
		case 0, 3:
			words = append(words, "TypeError") // code-like: the exact tier
		case 1:
			words = append(words, "my", "error") // first person: the prompt part
		case 2:
			w := words[0]
			if len(w) > 4 {
				words[0] = w[:2] + w[3:] // a letter dropped: the typo pass
			}
		}
		q := strings.Join(words, " ")
		for _, plain := range []bool{false, true} {
			want := run(q, plain, true, false, false)
			if len(want.touched) == 0 {
				continue
			}
			scored++
			// Records in the scratch, outgrowing a room of 7 additions,
			// on the heap; as scheduled and each worker helping first.
			for v, first := range []bool{false, true, true, true, false} {
				recordRoom = room
				if v == 2 {
					recordRoom = func(int) int { return 7 }
				}
				got := run(q, plain, false, first, v == 3)
				if !reflect.DeepEqual(got.scores, want.scores) {
					t.Fatalf("seed %d, %q plain %v first %v: scores differ from each group on its worker", seed, q, plain, first)
				}
				if !reflect.DeepEqual(got.touched, want.touched) {
					t.Fatalf("seed %d, %q plain %v first %v: rows touched in another order", seed, q, plain, first)
				}
				if !reflect.DeepEqual(got.matched, want.matched) {
					t.Fatalf("seed %d, %q plain %v first %v: exact-match counts differ", seed, q, plain, first)
				}
				if !reflect.DeepEqual(got.ranked, want.ranked) {
					t.Fatalf("seed %d, %q plain %v first %v: ranked %v, alone %v", seed, q, plain, first, got.ranked, want.ranked)
				}
			}
		}
	}
	t.Logf("seed %d: %d queries scored, %d terms stolen", seed, scored, stolen.Load())
	if scored == 0 || stolen.Load() == 0 {
		t.Fatalf("seed %d: %d queries scored, %d terms stolen: nothing compared", seed, scored, stolen.Load())
	}
}
