package search

import (
	"math/rand"
	"reflect"
	"testing"
)

// TestTopGroupsOfRows: selecting the top from the rows and their sums in
// place gives what topGroups gives over the candidates built from them,
// whenever it answers — on lists above and below the split length, with
// many equal scores and equal Seqs (the serial way), and with dedup groups
// that eat the first selection (then it must not answer); it answers in
// most trials.
func TestTopGroupsOfRows(t *testing.T) {
	seed := postingsSeed(t)
	r := rand.New(rand.NewSource(seed))
	answered := 0
	trials := 150
	for trial := range trials {
		n := []int{50, 5000, tailSplitMin + r.Intn(tailSplitMin)}[trial%3]
		seqTies, shared := r.Intn(2) == 0, r.Intn(5) == 0
		ix := &Index{seqs: make([]int, n), groups: make([]int32, n)}
		for row := range n {
			ix.seqs[row], ix.groups[row] = row, int32(row)
			if seqTies {
				ix.seqs[row] = r.Intn(n/8 + 1)
			}
			if shared && row > 0 && r.Intn(2) == 0 {
				ix.groups[row] = ix.groups[r.Intn(row)]
			}
		}
		scores := make([]float64, n)
		levels := []int{2, 3, 50, 1 << 30}[r.Intn(4)]
		for row := range scores {
			scores[row] = float64(r.Intn(levels)) * 0.25
		}
		touched := make([]int32, 0, n)
		for _, row := range r.Perm(n) {
			if r.Intn(8) != 0 {
				touched = append(touched, int32(row))
			}
		}
		for _, limit := range []int{1, 10, 50} {
			got, ok := ix.topGroupsOfRows(touched, scores, limit)
			cs := candidates(make([]cand, len(touched)), touched, scores, nil)
			want := ix.topGroups(cs, limit)
			if ok {
				answered++
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("trial %d (n %d, %d touched) limit %d:\n got %v\nwant %v", trial, n, len(touched), limit, got, want)
				}
			} else if limit*4 < len(touched) && len(want) == limit && !shared {
				t.Fatalf("trial %d limit %d: no answer without shared groups", trial, limit)
			}
		}
	}
	if answered < trials {
		t.Fatalf("answered %d of %d selections", answered, 3*trials)
	}
	t.Logf("answered %d of %d selections", answered, 3*trials)
}
