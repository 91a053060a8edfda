package search

import (
	"context"
	"math"
)

// Query expansion by term associations of the memory itself (issue 15),
// off when CoocWeight is 0: two words that keep turning up in the same
// sessions' cards ("worktree" and "clone", "timeout" and "watchdog") are
// taken as related, with no outside data. For each query term, the card
// words of the sessions holding it are counted; a word found in CoocMin
// sessions or more with it, weighed by its positive PMI over sessions ×
// log(count), joins the query at CoocWeight (the best CoocTerms of them
// over the whole query, scaled to the best). docs/bench/eval.md measures
// it (2026-12-04, session 9).
var (
	CoocWeight = 0.0
	CoocMin    = 3
	CoocTerms  = 6
)

// coocTable is the session × card-term incidence of a memory: per term the
// sessions holding it, per session its terms (ids into terms).
type coocTable struct {
	ids      map[string]int32
	terms    []string
	sessions [][]int32 // per term: sessions
	bag      [][]int32 // per session: terms
}

// cooc builds the table on first use (an experiment: it reads every card).
func (ix *Index) cooc(sc *sessionCtx) (*coocTable, error) {
	ix.coocOnce.Do(func() {
		t := &coocTable{ids: map[string]int32{}}
		sess := map[int32]int32{} // first row of a session → session id
		seen := map[[2]int32]bool{}
		for row := range ix.seqs {
			rec, err := ix.rec(int32(row))
			if err != nil {
				ix.coocErr = err
				return
			}
			k := sc.session(int32(row))
			s, ok := sess[k]
			if !ok {
				s = int32(len(t.bag))
				sess[k] = s
				t.bag = append(t.bag, nil)
			}
			for _, w := range queryTerms(rec.Core + "\n" + rec.Context) {
				id, ok := t.ids[w]
				if !ok {
					id = int32(len(t.terms))
					t.ids[w] = id
					t.terms = append(t.terms, w)
					t.sessions = append(t.sessions, nil)
				}
				if !seen[[2]int32{s, id}] {
					seen[[2]int32{s, id}] = true
					t.bag[s] = append(t.bag[s], id)
					t.sessions[id] = append(t.sessions[id], s)
				}
			}
		}
		ix.coocTab = t
	})
	return ix.coocTab, ix.coocErr
}

// coocExpand adds the associated terms' scores to scores (and their rows
// to touched), for the session layer.
func (ix *Index) coocExpand(ctx context.Context, base *sessionScorer, qterms []string, scores []float64, touched []int32, seen []bool) ([]int32, error) {
	if CoocWeight <= 0 || len(qterms) == 0 {
		return touched, nil
	}
	t, err := ix.cooc(base.sc)
	if err != nil {
		return touched, err
	}
	n := float64(len(t.bag))
	inQuery := map[int32]bool{}
	for _, q := range qterms {
		if id, ok := t.ids[q]; ok {
			inQuery[id] = true
		}
	}
	best := map[int32]float64{}
	for _, q := range qterms {
		qid, ok := t.ids[q]
		if !ok {
			continue
		}
		count := map[int32]int{}
		for _, s := range t.sessions[qid] {
			for _, w := range t.bag[s] {
				if !inQuery[w] {
					count[w]++
				}
			}
		}
		dq := float64(len(t.sessions[qid]))
		for w, c := range count {
			if c < CoocMin {
				continue
			}
			pmi := math.Log(float64(c) * n / (dq * float64(len(t.sessions[w]))))
			if pmi <= 0 {
				continue
			}
			best[w] = max(best[w], pmi*math.Log(float64(c)))
		}
	}
	var cs []expansion
	for id, w := range best {
		cs = append(cs, expansion{t.terms[id], w})
	}
	return ix.addExpansion(ctx, base, cs, CoocTerms, CoocWeight, scores, touched, seen)
}
