package search

import (
	"context"
	"fmt"
	"math"
	"sort"
)

// Pseudo-relevance feedback from the cards (RM3-like, Lavrenko & Croft
// 2001; Abdul-Jaleel et al. 2004), off when PRFWeight is 0: the words that
// the cards of the best PRFDocs exchanges share (in PRFMinDocs of them or
// more), weighed by their idf over the cards, join the query at PRFWeight
// (the best PRFTerms of them). A question asked in other words than the
// session used ("the readable version of the drawing library") may still
// find one exchange of the session; its card names the thing ("unminified
// p5.js"), and that word finds the rest. docs/bench/eval.md measures it.
var (
	PRFWeight  = 0.0
	PRFDocs    = 5
	PRFMinDocs = 2
	PRFTerms   = 8
)

// prf adds the expansion terms' scores to scores (and their rows to
// touched), for the session layer.
func (ix *Index) prf(ctx context.Context, base *sessionScorer, qterms []string, scores []float64, touched []int32, seen []bool) ([]int32, error) {
	if PRFWeight <= 0 || len(touched) == 0 {
		return touched, nil
	}
	top := append([]int32(nil), touched...)
	sort.Slice(top, func(a, b int) bool {
		if scores[top[a]] != scores[top[b]] {
			return scores[top[a]] > scores[top[b]]
		}
		return top[a] < top[b]
	})
	inQuery := map[string]bool{}
	for _, t := range qterms {
		inQuery[t] = true
	}
	count := map[string]int{}
	groups := map[int32]bool{}
	for _, row := range top {
		if len(groups) >= PRFDocs {
			break
		}
		rec, err := ix.rec(row)
		if err != nil {
			return touched, err
		}
		if groups[rec.Group] {
			continue // a near-duplicate says nothing new
		}
		groups[rec.Group] = true
		for _, t := range queryTerms(rec.Core + "\n" + rec.Context) {
			if !inQuery[t] {
				count[t]++
			}
		}
	}
	var cs []expansion
	n := float64(len(ix.seqs))
	for t, c := range count {
		if c < PRFMinDocs {
			continue
		}
		tfr, err := base.r.TermFieldReader(ctx, []byte(t), fieldDistilled, false, false, false)
		if err != nil {
			return touched, fmt.Errorf("postings of %q in %s: %w", t, fieldDistilled, err)
		}
		df := float64(tfr.Count())
		tfr.Close()
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		cs = append(cs, expansion{t, float64(c) * idf})
	}
	return ix.addExpansion(ctx, base, cs, PRFTerms, PRFWeight, scores, touched, seen)
}

// expansion is a term added to a query with its weight before scaling.
type expansion struct {
	t string
	w float64
}

// addExpansion scores the best limit of cs (ties by term) at weight × their
// weight relative to the best one and adds them to scores, as one more
// pass of the session scorer over base's reader: pseudo-relevance feedback
// and term associations expand a query this way.
func (ix *Index) addExpansion(ctx context.Context, base *sessionScorer, cs []expansion, limit int, weight float64,
	scores []float64, touched []int32, seen []bool) ([]int32, error) {
	sort.Slice(cs, func(a, b int) bool {
		if cs[a].w != cs[b].w {
			return cs[a].w > cs[b].w
		}
		return cs[a].t < cs[b].t
	})
	if len(cs) > limit {
		cs = cs[:limit]
	}
	if len(cs) == 0 {
		return touched, nil
	}
	maxW := cs[0].w
	x := &sessionScorer{ix: ix, r: base.r, sc: base.sc, cache: map[uint64]int32{}, n: base.n, distAvg: base.distAvg}
	for i, c := range cs {
		x.k, x.tw = int32(i+1), weight*c.w/maxW
		if err := x.term(ctx, c.t); err != nil {
			return touched, err
		}
	}
	for _, row := range x.touched {
		if !seen[row] {
			seen[row] = true
			touched = append(touched, row)
		}
		scores[row] += x.scores[row]
	}
	return touched, nil
}
