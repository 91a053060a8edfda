package search

import (
	"context"
	"math"
	"slices"
	"unicode/utf8"
)

// Exact top-k pruning of a query's dense term (docs/BENCHMARKS.md,
// session 20). A term held by most rows ("error" of "TypeError": 83 % of
// the 1,000,000 rows) adds almost nothing to any row's score (its idf is
// ~0.03), yet its passes stream every per-row array (tf, dl, scores, seen)
// like any other term's. It can change the ranking only by reordering
// rows already near the top. So, when nothing else of the ranking needs
// every row's score (see pruneAllowed), the session layer scores it in two
// passes of its own:
//
//  1. count (pruneCount), beside the other terms: df′ of each of its parts
//     (talk with neighbours, prompt, title, output; the card's is its
//     postings' count) exactly as scoreB counts it, in a bitset, and from
//     them ub, a bound of its whole contribution to any row: each part adds
//     tw·weight·idf·f(k1+1)/(f+k1·norm) ≤ tw·weight·idf·(k1+1).
//  2. apply (pruneApply), once the other terms are summed: only for the
//     candidates, the rows whose partial sum p (the other terms; every
//     contribution is ≥ 0, so the final score F ≥ p) plus ub reaches θ,
//     the partial score of the limit-th distinct group's best row. At
//     least limit groups then have a row with F ≥ θ, so the last row
//     topGroups keeps scores ≥ θ; a row outside the candidates has
//     F ≤ p + ub < θ. A candidate gets the same additions in the same
//     order as in a full pass (the postings in the same order, the same
//     df′), so the same bits.
//
// The candidates are ranked by topGroups and the result verified: limit
// groups found, θ ≤ the last kept row's score, the dense term alone below
// θ, and no two rows at or above that row tied in both score and Seq
// (where ties decide, the order of topGroups' input does, and that input
// differs). Anything else, and the term is scored in full as before (it
// is the last of its worker's terms, so its additions keep their order).

// pruneShare is the least share of the rows a term's postings must hold
// in one field for it to be pruned: below it a full pass touches few
// enough cache lines of the per-row arrays that the θ and candidate
// passes (two over the rows the other terms touched) would cost as much
// as they save. Session 19's dense path measured the same ¼ as where a
// term's passes stop depending on its postings (docs/BENCHMARKS.md).
const pruneShare = 4

// disablePrune turns the pruning off (tests compare the two paths).
var disablePrune = false

// pruneMaxCands: with more candidates than n/pruneMaxCands the apply pass
// would touch most rows again, so the term is scored in full instead.
const pruneMaxCands = 8

// pruneMode is what sessionScorer.term does with its term.
type pruneMode uint8

const (
	pruneOff   pruneMode = iota // score every row
	pruneCount                  // count df′ and ub only, score nothing
	pruneApply                  // score the candidates only, df′ from the count
)

// The parts of a term that scoreB scores, in term's order.
const (
	partTalk = iota
	partPrompt
	partTitle
	partOutput
	nParts
)

// prune is a sessionScorer's state for its pruned term.
type prune struct {
	pm     pruneMode
	part   int      // the part term is scoring
	dfBits []uint64 // count: the rows with a weight > 0 in the current part
	dfN    int      // count: their number
	dfs    [nParts]int
	ub     float64 // count: the bound of the term's contribution to a row
	// apply: the candidates, the rows whose talk adds to one (the
	// candidates and their neighbours), the first rows of their sessions
	cand, near, firsts []uint64
}

func bitOf(b []uint64, r int32) bool { return b[r>>6]&(1<<(uint32(r)&63)) != 0 }
func setBit(b []uint64, r int32)     { b[r>>6] |= 1 << (uint32(r) & 63) }

func (s *sessionScorer) isCand(r int32) bool { return bitOf(s.cand, r) }

// titleOf says whether the title posting of row (a session's first row)
// is read: always, but in apply only for the candidates' sessions.
func (s *sessionScorer) titleOf(r int32) bool { return s.pm != pruneApply || bitOf(s.firsts, r) }

// addPruned is add (f > 0) in a pruned mode.
func (s *sessionScorer) addPruned(row int32, f float64) {
	if s.pm == pruneCount {
		w, m := row>>6, uint64(1)<<(uint32(row)&63)
		if s.dfBits[w]&m == 0 {
			s.dfBits[w] |= m
			s.dfN++
		}
		return
	}
	if !bitOf(s.cand, row) {
		return
	}
	if s.tf[row] == 0 {
		s.eff = append(s.eff, row)
	}
	s.tf[row] += f
}

// verbatimPruned is term's talk loop in a pruned mode: the same additions
// (row, previous, next) in the same order, through addPruned. In apply a
// posting is read only when its row adds to a candidate (near).
func (s *sessionScorer) verbatimPruned(ps []rowFreq) {
	links, weight := s.sc.links, s.sc.weight
	for _, p := range ps {
		if s.pm == pruneApply && !bitOf(s.near, p.row) {
			continue
		}
		f := p.f()
		if f > 0 {
			s.addPruned(p.row, f)
		}
		r := &links[p.row]
		if prev := r.prev; prev >= 0 {
			if g := weight[prev] * f; g > 0 {
				s.addPruned(prev, g)
			}
		}
		if next := r.next; next >= 0 {
			if g := weight[next] * f; g > 0 {
				s.addPruned(next, g)
			}
		}
	}
}

// scorePruned is scoreB in a pruned mode: count keeps the part's df′ and
// adds its bound to ub; apply scores the candidates with that df′.
func (s *sessionScorer) scorePruned(weight float64, dl []float64, avgdl, bOver float64) {
	if s.pm == pruneCount {
		df := s.dfN
		if df > 0 {
			clear(s.dfBits)
			s.dfN = 0
		}
		s.dfs[s.part] = df
		if df == 0 || avgdl == 0 {
			return
		}
		k1, _ := s.bm25(bOver)
		s.ub += s.tw * weight * idfOf(s.n, df) * (k1 + 1)
		return
	}
	s.scoreDF(weight, dl, avgdl, bOver, s.dfs[s.part])
}

// idfOf is the scorer's idf of a term in df of n rows.
func idfOf(n, df int) float64 {
	d := float64(df)
	return math.Log(1 + (float64(n)-d+0.5)/(d+0.5))
}

// pruneAllowed says whether nothing after the terms' sums needs every
// row's score (else the dense term is scored in full): no exact tier,
// session weights, recency, time window, PRF or co-occurrence; BM25's
// parameters and every weight such that each contribution is ≥ 0 and
// f(k1+1)/(f+k1·norm) ≤ k1+1.
func pruneAllowed(ctx context.Context, text string, exact bool, terms []weightedTerm) bool {
	if exact || SessionMaxWeight != 0 || SessionWeight != 0 || PRFWeight > 0 || CoocWeight > 0 {
		return false
	}
	if RecencyWeight != 0 && recencyQuery(text) {
		return false
	}
	if TimeBoost > 0 {
		if now, ok := nowOf(ctx); ok {
			if _, _, ok := timeWindow(text, now); ok {
				return false
			}
		}
	}
	unit := func(b float64) bool { return b >= 0 && b <= 1 }
	if !unit(SessionB) || !unit(BM25B) || OutputB >= 0 && !unit(OutputB) || TitleB >= 0 && !unit(TitleB) ||
		SessionK1 < 0 || BM25K1 < 0 {
		return false
	}
	for _, w := range []float64{ContextWeight, AskedWeight, ContextLenRef, OutputWeight, CardWeight, TitleWeight, PromptWeight} {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return false
		}
	}
	for _, t := range terms {
		if t.w < 0 || math.IsNaN(t.w) {
			return false
		}
	}
	return true
}

// denseTerm is the term to prune and its worker, or -1: the term with the
// most postings in one field, if they are at least 1/pruneShare of the
// rows and it is the last of its group (its additions then come last in
// its worker's sums, wherever they are made). Two workers only.
func denseTerm(groups [][]int, most []int, n int) (k, w int) {
	if len(groups) != 2 || n == 0 {
		return -1, -1
	}
	k = -1
	for j, m := range most {
		if k < 0 || m > most[k] {
			k = j
		}
	}
	if k < 0 || most[k]*pruneShare < n {
		return -1, -1
	}
	for w, g := range groups {
		if len(g) > 0 && g[len(g)-1] == k {
			return k, w
		}
	}
	return -1, -1
}

// typoPending says whether correctTypos would look for a correction (it
// scores into the first worker after every term: the dense term's
// additions must come before it).
func typoPending(terms []weightedTerm, missing []bool) bool {
	if TypoWeight <= 0 {
		return false
	}
	for k, t := range terms {
		if missing[k] && t.w == 1 && utf8.RuneCountInString(t.t) >= TypoMinLen {
			return true
		}
	}
	return false
}

// pruneBound is the margin that makes a float comparison against θ safe:
// the scores are sums of a few dozen non-negative floats, each sum off by
// at most ~1e-14 of itself.
const pruneBound = 1e-9

// prunedRank ranks with the dense term k (scored by ws[d] in count mode)
// scored for the candidates only. ok is false when the result cannot be
// shown to be the full ranking's; ws are then as before the call.
func (ix *Index) prunedRank(ctx context.Context, ws []*sessionScorer, d int, t string, allowed func(int32) bool, limit int) (got []cand, ok bool, err error) {
	s := ws[d]
	s0, s1 := ws[0], ws[1]
	// every row either worker touched, once, with its partial sum
	each := func(yield func(row int32, p float64)) {
		for _, r := range s0.touched {
			if allowed == nil || allowed(r) {
				yield(r, s0.scores[r]+s1.scores[r])
			}
		}
		for _, r := range s1.touched {
			if !s0.seen[r] && (allowed == nil || allowed(r)) {
				yield(r, s1.scores[r])
			}
		}
	}
	theta, found := ix.groupFloor(each, limit)
	if !found {
		return nil, false, nil
	}
	ub := s.ub + theta*pruneBound
	if !(ub < theta) {
		return nil, false, nil // a row with the dense term alone could rank
	}
	n := s.n
	words := (n + 63) / 64
	cb, near := make([]uint64, words), make([]uint64, words)
	var rows []int32
	tooMany := false
	each(func(r int32, p float64) {
		if tooMany || !(p+ub >= theta) {
			return
		}
		if len(rows) >= n/pruneMaxCands {
			tooMany = true
			return
		}
		rows = append(rows, r)
	})
	if tooMany || len(rows) < limit {
		return nil, false, nil
	}
	links := s.sc.links
	var firsts []uint64
	if TitleWeight > 0 {
		firsts = make([]uint64, words)
	}
	for _, r := range rows {
		setBit(cb, r)
		setBit(near, r)
		l := links[r]
		if l.prev >= 0 {
			setBit(near, l.prev)
		}
		if l.next >= 0 {
			setBit(near, l.next)
		}
		if firsts != nil {
			j := r
			for i := 0; links[j].prev >= 0 && i < n; i++ {
				j = links[j].prev
			}
			setBit(firsts, j)
		}
	}
	saved := make([]float64, len(rows))
	for i, r := range rows {
		saved[i] = s.scores[r]
	}
	tl := len(s.touched)
	restore := func() {
		for i, r := range rows {
			s.scores[r] = saved[i]
		}
		for _, r := range s.touched[tl:] {
			s.seen[r] = false
		}
		s.touched = s.touched[:tl]
	}
	s.pm, s.cand, s.near, s.firsts = pruneApply, cb, near, firsts
	err = s.term(ctx, t)
	s.pm, s.cand, s.near, s.firsts = pruneOff, nil, nil, nil
	if err != nil {
		restore()
		return nil, false, err
	}
	// The merge's sums (sessionBM25Layer) of the candidates: a row one
	// worker did not touch has 0 there, and x+0 and 0+x are x.
	cs := make([]cand, len(rows))
	for i, r := range rows {
		cs[i] = cand{row: r, score: s0.scores[r] + s1.scores[r]}
	}
	got = ix.topGroups(cs, limit)
	if len(got) != limit || !(theta <= got[limit-1].score) || ix.tiedAbove(cs, got[limit-1]) {
		restore()
		return nil, false, nil
	}
	return got, true, nil
}

// tiedAbove says whether two of cs at or above last (in better's order)
// tie in both score and Seq.
func (ix *Index) tiedAbove(cs []cand, last cand) bool {
	var top []cand
	for _, c := range cs {
		if !ix.better(last, c) {
			top = append(top, c)
		}
	}
	slices.SortFunc(top, func(a, b cand) int {
		switch {
		case ix.better(a, b):
			return -1
		case ix.better(b, a):
			return 1
		}
		return 0
	})
	for i := 1; i < len(top); i++ {
		if !ix.better(top[i-1], top[i]) {
			return true
		}
	}
	return false
}

// groupFloor is the partial score of the limit-th distinct dedup group's
// best row among the rows each yields (fewer groups: found is false). Its
// own streaming top-n (selectTop's heap) so that the partial sums are not
// written out for every row.
func (ix *Index) groupFloor(each func(func(int32, float64)), limit int) (theta float64, found bool) {
	worse := func(a, b cand) bool { return ix.better(b, a) }
	for want := limit * 4; ; want *= 4 {
		h := make([]cand, 0, want)
		total := 0
		each(func(r int32, p float64) {
			total++
			c := cand{row: r, score: p}
			if len(h) < want {
				h = append(h, c)
				for i := len(h) - 1; i > 0; {
					q := (i - 1) / 2
					if !worse(h[i], h[q]) {
						break
					}
					h[i], h[q] = h[q], h[i]
					i = q
				}
				return
			}
			if !ix.better(c, h[0]) {
				return
			}
			h[0] = c
			for i := 0; ; {
				l, rr, m := 2*i+1, 2*i+2, i
				if l < len(h) && worse(h[l], h[m]) {
					m = l
				}
				if rr < len(h) && worse(h[rr], h[m]) {
					m = rr
				}
				if m == i {
					break
				}
				h[i], h[m] = h[m], h[i]
				i = m
			}
		})
		slices.SortFunc(h, func(a, b cand) int {
			switch {
			case ix.better(a, b):
				return -1
			case ix.better(b, a):
				return 1
			}
			return 0
		})
		got := ix.pickGroups(h, limit)
		if len(got) == limit {
			return got[limit-1].score, true
		}
		if total <= want {
			return 0, false
		}
	}
}
