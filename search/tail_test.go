package search

import (
	"math/rand"
	"slices"
	"testing"
	"time"
)

// tailSizes are list lengths around tailSplitMin: served in one piece and
// split in two.
var tailSizes = []int{0, 1, 7, tailSplitMin - 1, tailSplitMin, tailSplitMin + 1, 3*tailSplitMin + 5}

// TestMergeSumsSame checks that mergeSums gives the serial loop's sums,
// rows and order, split or not.
func TestMergeSumsSame(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for _, size := range tailSizes {
		n := size*2 + 10
		// Worker 0 touched some rows, worker 1 the rows of xt (distinct,
		// in a random order), overlapping.
		scores, seen := make([]float64, n), make([]bool, n)
		var touched []int32
		for row := range n {
			if rng.Intn(3) == 0 {
				seen[row], scores[row] = true, rng.Float64()
				touched = append(touched, int32(row))
			}
		}
		xs := make([]float64, n)
		xt := make([]int32, 0, size)
		for _, row := range rng.Perm(n)[:size] {
			xt = append(xt, int32(row))
			xs[row] = rng.Float64() * 1e-3
		}
		// The serial loop it replaces.
		wantScores, wantSeen := slices.Clone(scores), slices.Clone(seen)
		wantTouched := slices.Clone(touched)
		for _, row := range xt {
			if !wantSeen[row] {
				wantSeen[row] = true
				wantTouched = append(wantTouched, row)
			}
			wantScores[row] += xs[row]
		}
		got := mergeSums(scores, seen, slices.Grow(touched, n), xs, slices.Clone(xt))
		if !slices.Equal(got, wantTouched) {
			t.Fatalf("size %d: rows differ (%d against %d)", size, len(got), len(wantTouched))
		}
		if !slices.Equal(seen, wantSeen) {
			t.Fatalf("size %d: seen differs", size)
		}
		for row := range n {
			if scores[row] != wantScores[row] { // bit for bit: one addition each
				t.Fatalf("size %d: row %d: %v, want %v", size, row, scores[row], wantScores[row])
			}
		}
	}
}

// TestCandidatesSame checks candidates against the serial loop, with and
// without a filter.
func TestCandidatesSame(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	filters := map[string]func(int32) bool{
		"none":      nil,
		"odd rows":  func(r int32) bool { return r%2 == 1 },
		"first few": func(r int32) bool { return r < 5 },
		"nothing":   func(int32) bool { return false },
		"all":       func(int32) bool { return true },
	}
	for _, size := range tailSizes {
		n := size + 10
		scores := make([]float64, n)
		for i := range scores {
			scores[i] = rng.Float64()
		}
		touched := make([]int32, 0, size)
		for _, row := range rng.Perm(n)[:size] {
			touched = append(touched, int32(row))
		}
		for name, allowed := range filters {
			var want []cand
			for _, row := range touched {
				if allowed == nil || allowed(row) {
					want = append(want, cand{row: row, score: scores[row]})
				}
			}
			got := candidates(make([]cand, 0, len(touched)), touched, scores, allowed)
			if len(got) != len(want) || len(want) > 0 && !slices.Equal(got, want) {
				t.Fatalf("size %d, filter %s: %d candidates, want %d (or they differ)", size, name, len(got), len(want))
			}
		}
	}
}

// TestSelectTopSplitSame checks selectTopSplit against selectTop: the same
// candidates in the same order, on lists with distinct scores, with ties
// everywhere, and with a tie only at the boundary.
func TestSelectTopSplitSame(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	cases := []struct {
		name  string
		score func(i int) float64
		seq   func(i int) int
	}{
		{"distinct", func(int) float64 { return rng.Float64() }, func(i int) int { return i }},
		{"few scores, distinct seqs", func(int) float64 { return float64(rng.Intn(4)) }, func(i int) int { return i }},
		{"few scores, shared seqs", func(int) float64 { return float64(rng.Intn(4)) }, func(i int) int { return i % 3 }},
		{"all equal", func(int) float64 { return 1 }, func(int) int { return 7 }},
		{"distinct scores, shared seqs", func(int) float64 { return rng.Float64() }, func(i int) int { return i % 2 }},
	}
	for _, c := range cases {
		for _, size := range tailSizes {
			ix := &Index{seqs: make([]int, size)}
			all := make([]cand, size)
			for i := range all {
				ix.seqs[i] = c.seq(i)
				all[i] = cand{row: int32(i), score: c.score(i)}
			}
			rng.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
			for _, n := range []int{1, 10, 40, 160} {
				if n >= size {
					continue
				}
				want := ix.selectTop(slices.Clone(all), n)
				got := ix.selectTopSplit(slices.Clone(all), n)
				if !slices.Equal(got, want) {
					t.Fatalf("%s, size %d, n %d: %v, want %v", c.name, size, n, got[:min(3, len(got))], want[:min(3, len(want))])
				}
			}
		}
	}
	// A tie only between the n-th and the (n+1)-th best, across the halves.
	size, n := 4*tailSplitMin, 10
	ix := &Index{seqs: make([]int, size)}
	all := make([]cand, size)
	for i := range all {
		ix.seqs[i] = i
		all[i] = cand{row: int32(i), score: float64(i%1000) / 1000}
	}
	ix.seqs[size/2+5] = ix.seqs[5]
	all[5].score, all[size/2+5].score = 2, 2
	for i := range n - 1 {
		all[100+i].score = 3 + float64(i)
	}
	if got, want := ix.selectTopSplit(slices.Clone(all), n), ix.selectTop(slices.Clone(all), n); !slices.Equal(got, want) {
		t.Fatalf("boundary tie: %v, want %v", got, want)
	}
}
