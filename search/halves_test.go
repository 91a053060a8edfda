package search

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// halvesMemory is a memory of n generated exchanges in sessions of
// consecutive rows (a run interleaving two sessions, exchanges without a
// session), added in three batches (three segments) with rows forgotten,
// opened read-only as a search process does.
func halvesMemory(t *testing.T, n int, seed int64, forget bool) (*Index, []string) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	docs := synthDocs(n, seed)
	s := 0
	for i := 0; i < n; {
		k := 1 + r.Intn(15)
		for j := i; j < min(i+k, n); j++ {
			docs[j].Session = fmt.Sprintf("s%05d", s)
			if r.Intn(12) == 0 {
				docs[j].Session = ""
			}
		}
		i += k
		s++
	}
	// Two sessions interleaved row by row, a tenth of the way in.
	for j := n / 10; j < n/10+40 && j < n; j++ {
		docs[j].Session = fmt.Sprintf("mix%d", j%2)
	}
	dir := t.TempDir()
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range [][]Doc{docs[:n/3], docs[n/3 : 2*n/3], docs[2*n/3:]} {
		if err := ix.Add(part); err != nil {
			t.Fatal(err)
		}
	}
	last := docs[len(docs)-1]
	var gone []string
	for range n / 40 * btoi(forget) {
		gone = append(gone, docs[r.Intn(len(docs))].ID)
	}
	if _, err := ix.ForgetDocs(gone, nil); err != nil {
		t.Fatal(err)
	}
	if err := ix.SetLastCommit(last.Commit, last.Seq); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return ro, vocabulary(docs)
}

// TestHalvesSameScores: the session layer with the rows split in halves
// sums every row's score to the same bits as with the terms split in
// groups, touches the same rows, and ranks the same, for random queries
// (a dense term, misspelt words, first-person ones, one word), with the
// title's b default and set, titleScore on and off, a filter, and limits.
func TestHalvesSameScores(t *testing.T) {
	seed := postingsSeed(t)
	for _, forget := range []bool{false, true} {
		t.Run(fmt.Sprintf("forget=%v", forget), func(t *testing.T) { halvesSameScores(t, seed, forget) })
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func halvesSameScores(t *testing.T, seed int64, forget bool) {
	ix, vocab := halvesMemory(t, 2400, seed, forget)
	r := rand.New(rand.NewSource(seed))
	oldMin := halvesMinRows
	halvesMinRows = 0
	defer func() { halvesMinRows = oldMin }()
	ctx := context.Background()
	type sums struct {
		bits map[int32]uint64
		cs   []cand
	}
	layer := func(q string, off bool, allowed func(int32) bool, limit int) sums {
		disableHalves = off
		defer func() { disableHalves, layerSums = false, nil }()
		got := sums{bits: map[int32]uint64{}}
		layerSums = func(scores []float64, touched []int32) {
			for _, row := range touched {
				if _, dup := got.bits[row]; dup {
					t.Fatalf("seed %d, %q: row %d touched twice", seed, q, row)
				}
				got.bits[row] = math.Float64bits(scores[row])
			}
		}
		cs, err := ix.sessionBM25Layer(ctx, q, allowed, limit, false)
		if err != nil {
			t.Fatal(err)
		}
		got.cs = cs
		return got
	}
	var queries []string
	for range 30 {
		var w []string
		for range 1 + r.Intn(6) {
			w = append(w, vocab[r.Intn(len(vocab))])
		}
		switch r.Intn(4) {
		case 0:
			w = append(w, "error")
		case 1:
			w = append(w, "my", "middlewre") // first person, misspelt
		case 2:
			w = append(w, "sesion", "timout")
		}
		queries = append(queries, fmt.Sprint(w))
	}
	queries = append(queries, "error", "auth middleware TypeError sessionTTL", "what did I change in the retry backoff")
	odd := func(row int32) bool { return row%3 != 0 }
	for _, tb := range []float64{-1, 0.3} {
		oldTB := TitleB
		TitleB = tb
		for i, q := range queries {
			disableTitleScore = i%5 == 4
			before := halvesUsed.Load()
			allowed, limit := (func(int32) bool)(nil), []int{1, 10, 50, 200}[i%4]
			if i%3 == 2 {
				allowed = odd
			}
			got, want := layer(q, false, allowed, limit), layer(q, true, allowed, limit)
			if halvesUsed.Load() == before {
				t.Fatalf("seed %d, %q: the halves were not used", seed, q)
			}
			if len(want.bits) == 0 {
				continue
			}
			if !reflect.DeepEqual(got.bits, want.bits) {
				for row, b := range want.bits {
					if got.bits[row] != b {
						t.Fatalf("seed %d, TitleB %v, %q: row %d scores %v in halves, %v in groups (%d vs %d rows)", seed, tb, q, row,
							math.Float64frombits(got.bits[row]), math.Float64frombits(b), len(got.bits), len(want.bits))
					}
				}
				t.Fatalf("seed %d, %q: %d rows touched in halves, %d in groups", seed, q, len(got.bits), len(want.bits))
			}
			if !reflect.DeepEqual(got.cs, want.cs) {
				t.Fatalf("seed %d, %q: ranked %v in halves, %v in groups", seed, q, got.cs, want.cs)
			}
		}
		disableTitleScore = false
		TitleB = oldTB
	}
}

// TestHalfCut: the cut nearest the middle that no link crosses, none when
// every cut in the middle half is crossed.
func TestHalfCut(t *testing.T) {
	chain := func(n int, sessions [][]int32) []link {
		l := make([]link, n)
		for i := range l {
			l[i] = link{-1, -1}
		}
		for _, s := range sessions {
			for i, row := range s {
				if i > 0 {
					l[row].prev = s[i-1]
				}
				if i+1 < len(s) {
					l[row].next = s[i+1]
				}
			}
		}
		return l
	}
	tests := []struct {
		name     string
		n        int
		sessions [][]int32
		want     int32
	}{
		{"no sessions: the middle", 8, nil, 4},
		{"a session over the middle", 8, [][]int32{{3, 4, 5}}, 3},
		{"crossed from the right only", 8, [][]int32{{5, 3}}, 3},
		{"a session over every middle cut", 8, [][]int32{{1, 7}}, -1},
		{"interleaved", 12, [][]int32{{4, 6, 8}, {5, 7}}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := halfCut(chain(tc.n, tc.sessions)); got != tc.want {
				t.Fatalf("halfCut = %d, want %d", got, tc.want)
			}
		})
	}
}
