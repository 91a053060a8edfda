package search

import (
	"strings"
	"unicode"
)

// PromptWeight adds PromptWeight × a BM25 of the exchange's own first turn
// (the person's message: the head field) to the session score, 0 off. The
// person states the facts a later question asks about ("By the way, I've
// completed three courses on Coursera"); the agent's long replies repeat the
// topic's words without the fact. As its own field (own idf, own lengths,
// like the card and the title) it lifts the exchange in which the person
// said the thing over its neighbours and over replies that only talk about
// it. Measured on all sets (docs/bench/eval.md, 2026-12-02, second round):
// for every query it lifts LongMemEval but costs LoCoMo single-hop (both
// sides of a LoCoMo exchange are people) and coding exact-term (the fix is
// named in the agent's reply); for first-person questions only
// (PromptFirstPerson) 0.05 / 0.1 / 0.2 / 0.4 move LongMemEval +0.008 /
// +0.022 / +0.025 / +0.036, pooled +0.011 / +0.025 / +0.043 / +0.050,
// LoCoMo and the exact set 0, coding within ±0.008 (no category beyond its
// noise); 0.1.
var PromptWeight = 0.1

// PromptFirstPerson applies PromptWeight only to a query in the first
// person singular ("what did I buy", "my thesis"): the grammatical person
// of a question says whose words hold the answer, the asker's own.
var PromptFirstPerson = true

// firstPerson says whether the query speaks of its asker (I, my, me).
func firstPerson(text string) bool {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		switch strings.ToLower(w) {
		case "i", "my", "me", "mine", "myself", "i'm", "i've", "i'd":
			return true
		}
	}
	return false
}

// promptLens are the head field's lengths per row and their mean, per
// neighbour table (sessionCtx.prompt, filled once).
type promptLens struct {
	dl  []float64
	avg float64
}

func (c *sessionCtx) promptLens() *promptLens {
	c.promptOnce.Do(func() {
		p := &promptLens{dl: make([]float64, len(c.rows))}
		var total float64
		for i, r := range c.rows {
			p.dl[i] = float64(r.head)
			total += p.dl[i]
		}
		if len(c.rows) > 0 {
			p.avg = total / float64(len(c.rows))
		}
		c.prompt = p
	})
	return c.prompt
}

// promptScore adds PromptWeight × the BM25 of the current term over the
// rows' own first turns (ps: the term's head postings).
func (s *sessionScorer) promptScore(ps []rowFreq) {
	if len(ps) == 0 {
		return
	}
	pl := s.sc.promptLens()
	for _, p := range ps {
		s.add(p.row, p.f())
	}
	s.score(PromptWeight, pl.dl, pl.avg)
}
