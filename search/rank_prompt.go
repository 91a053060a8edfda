package search

import "sync"

// PromptWeight adds PromptWeight × a BM25 of the exchange's own first turn
// (the person's message: the head field) to the session score, 0 off. The
// person states the facts a later question asks about ("By the way, I've
// completed three courses on Coursera"); the agent's long replies repeat the
// topic's words without the fact. As its own field (own idf, own lengths,
// like the card and the title) it lifts the exchange in which the person
// said the thing over its neighbours and over replies that only talk about
// it. docs/bench/eval.md measures it (2026-12-02, second round).
var PromptWeight = 0.0

// promptLens are the head field's lengths per row and their mean, per
// neighbour table.
type promptLens struct {
	dl  []float64
	avg float64
}

// promptCache holds them per neighbour table (an experiment's cache: its
// entries live as long as the process; a default would keep them in
// sessionCtx, as titleDL).
var promptCache sync.Map // *sessionCtx → *promptLens

func (c *sessionCtx) promptLens() *promptLens {
	if v, ok := promptCache.Load(c); ok {
		return v.(*promptLens)
	}
	p := &promptLens{dl: make([]float64, len(c.rows))}
	var total float64
	for i, r := range c.rows {
		p.dl[i] = float64(r.head)
		total += p.dl[i]
	}
	if len(c.rows) > 0 {
		p.avg = total / float64(len(c.rows))
	}
	v, _ := promptCache.LoadOrStore(c, p)
	return v.(*promptLens)
}

// promptScore adds PromptWeight × the BM25 of the current term over the
// rows' own first turns (ps: the term's head postings).
func (s *sessionScorer) promptScore(ps []rowFreq) {
	if len(ps) == 0 {
		return
	}
	pl := s.sc.promptLens()
	for _, p := range ps {
		s.add(p.row, p.f)
	}
	s.score(PromptWeight, pl.dl, pl.avg)
}
