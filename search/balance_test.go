package search

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// TestBalancedWorkersSameScores: with the workers helping each other
// (help, apply), every row's summed score is bit for bit the former
// path's (each group on its own worker), the rows touched come in the same
// order, the exact-match counts and the ranking are the same; both as
// scheduled and with every worker helping first (most terms moved), for
// queries of 2 to 9 words, plain and not.
func TestBalancedWorkersSameScores(t *testing.T) {
	seed := postingsSeed(t)
	r := rand.New(rand.NewSource(seed))
	docs := synthDocs(600, seed)
	sessions := 1 + r.Intn(120)
	for i := range docs {
		if r.Intn(8) > 0 {
			docs[i].Session = fmt.Sprintf("s%03d", r.Intn(sessions))
		}
		docs[i].Seq = r.Intn(40)
	}
	ix := buildIndex(t, t.TempDir(), docs)
	ctx := context.Background()
	vocab := vocabulary(docs)
	type state struct {
		scores  []uint64
		touched []int32
		matched []int
		ranked  []cand
	}
	run := func(q string, plain, off, first bool) state {
		disableBalance, testStealFirst = off, first
		defer func() { disableBalance, testStealFirst, testSummed = false, false, nil }()
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
	var helped atomic.Int64
	testHelped = func() { helped.Add(1) }
	defer func() { testHelped = nil }()
	scored := 0
	for i := range 60 {
		words := make([]string, 2+r.Intn(8))
		for j := range words {
			words[j] = vocab[r.Intn(len(vocab))]
		}
		if i%3 == 0 {
			words = append(words, "TypeError") // a code-like word: the exact tier
		}
		q := strings.Join(words, " ")
		for _, plain := range []bool{false, true} {
			want := run(q, plain, true, false)
			if len(want.touched) == 0 {
				continue
			}
			scored++
			for _, first := range []bool{false, true} {
				got := run(q, plain, false, first)
				if !reflect.DeepEqual(got.scores, want.scores) {
					t.Fatalf("seed %d, %q plain %v first %v: scores differ from the former path's", seed, q, plain, first)
				}
				if !reflect.DeepEqual(got.touched, want.touched) {
					t.Fatalf("seed %d, %q plain %v first %v: rows touched in another order", seed, q, plain, first)
				}
				if !reflect.DeepEqual(got.matched, want.matched) {
					t.Fatalf("seed %d, %q plain %v first %v: exact-match counts differ", seed, q, plain, first)
				}
				if !reflect.DeepEqual(got.ranked, want.ranked) {
					t.Fatalf("seed %d, %q plain %v first %v: ranked %v, former %v", seed, q, plain, first, got.ranked, want.ranked)
				}
			}
		}
	}
	if scored == 0 || helped.Load() == 0 {
		t.Fatalf("seed %d: %d queries scored, %d terms helped: nothing compared", seed, scored, helped.Load())
	}
}
