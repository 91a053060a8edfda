package search

import (
	"math"
	"math/bits"
)

// Two parts of the session layer for a question in the first person ("how
// long have I been …", "what did I buy …"; firstPerson): the asker's own
// words hold the answer, and which exchange of a session holds them is
// what the other streams cannot tell. The exchanges of one topical session
// all hold the topic's words, and the neighbour and reply streams lend
// them to every exchange alike (docs/bench/eval.md, sessions 10 and 28:
// 12 of LongMemEval dev's 16 misses had the evidence's session found and
// another exchange of it first).
var (
	// PromptCoverWeight multiplies the score of an exchange by
	// 1 + PromptCoverWeight·C, C being the share of the query's terms
	// (weighted by their idf over the first turns, and by the term's
	// weight) that the exchange's own first turn holds: the exchange in
	// which the person said most of what is asked, not the one whose reply
	// repeats one of its words most often. Measured on every set
	// (docs/bench/eval.md, session 28); with OpeningWeight 0.1, 0.15 /
	// 0.2 / 0.3 move LongMemEval +0.018 each and pooled +0.045 / +0.045 /
	// +0.046, no set or category beyond its noise (LoCoMo and the exact
	// set hold no first-person question, the conceptual set one: 0).
	PromptCoverWeight = 0.2
	// OpeningWeight adds OpeningWeight × the BM25 of the session's opening
	// message (its first exchange's first turn, the title field) to that
	// first exchange alone: the title part lifts every exchange of the
	// session alike, and people say what brings them at the opening (61 %
	// of LongMemEval dev's relevant exchanges open their session, where a
	// fifth of all exchanges do; LoCoMo 21 % against 9 %; the coding
	// queries' 9–26 % against 14–21 %: no more than chance, so as a prior
	// for every query it lost coding). 0.075 / 0.1 / 0.125 with PromptCoverWeight 0.2:
	// LongMemEval +0.018 / +0.018 / +0.015, pooled +0.038 / +0.045 /
	// +0.042; alone it moves LongMemEval +0.003, and 0.4 costs coding
	// −0.014 to −0.020.
	OpeningWeight = 0.1
)

// coverTerms is how many of a query's terms (in their order, typo
// corrections after them) PromptCoverWeight counts: one bit each.
const coverTerms = 64

// personCover is, for one first-person query, each term's weight; which
// terms each row's first turn holds are bits in the arrays of the workers
// that scored them (sessionScorer.coverBits). A term is scored by one of
// two workers (either may take it over: steal.go) and writes only its own
// weight and bit, and the bits are OR-ed: the result is the same whoever
// scored which term, as every score of the layer is.
type personCover struct {
	idf   [coverTerms]float64 // per term: its weight × its idf over the first turns
	width int                 // bytes of a row's bits: 1, 2, 4 or 8
}

// newPersonCover is the cover of a query of nterms terms: a row's bits are
// as wide as its terms and their typo corrections need (a 4-word query: a
// byte a row, 1 MB per worker at 1,000,000 exchanges, where 8 bytes a row
// in the Go heap made a warm first-person search there half as slow
// again, the collector's work included).
func newPersonCover(nterms int) *personCover {
	c := &personCover{width: 8}
	for _, w := range []int{1, 2, 4} {
		if 2*nterms <= 8*w {
			c.width = w
			break
		}
	}
	return c
}

// bytes is the room one worker's bits take for n rows (with alignment).
func (c *personCover) bytes(n int) int { return n*c.width + 8 }

// bits makes one worker's bits for n rows, zero, from mem when it has room.
func (c *personCover) bits(mem *scratch, n int) any {
	switch c.width {
	case 1:
		return scratchSlice[uint8](mem, n, n)
	case 2:
		return scratchSlice[uint16](mem, n, n)
	case 4:
		return scratchSlice[uint32](mem, n, n)
	}
	return scratchSlice[uint64](mem, n, n)
}

type coverWord interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// coverTerm records the current term (s.k, at weight s.tw) with ps, its
// postings in the first turns (the head field).
func (s *sessionScorer) coverTerm(ps []rowFreq) {
	k := s.k
	if k < 1 || k > coverTerms || int(k) > 8*s.cover.width {
		return
	}
	var df int
	switch b := s.coverBits.(type) {
	case []uint8:
		df = setCover(b, ps, uint8(1)<<(k-1))
	case []uint16:
		df = setCover(b, ps, uint16(1)<<(k-1))
	case []uint32:
		df = setCover(b, ps, uint32(1)<<(k-1))
	case []uint64:
		df = setCover(b, ps, uint64(1)<<(k-1))
	}
	d := float64(df)
	s.cover.idf[k-1] = s.tw * math.Log(1+(float64(s.n)-d+0.5)/(d+0.5))
}

// setCover sets bit in the bits of the rows of ps and returns their number.
func setCover[T coverWord](bits []T, ps []rowFreq, bit T) (df int) {
	for _, p := range ps {
		if p.freq > 0 {
			df++
			bits[p.row] |= bit
		}
	}
	return df
}

// apply multiplies the scores of the rows by 1 + PromptCoverWeight·C, the
// bits being the workers' (ws). The arrays are walked in row order, not
// the touched rows' (a row no term touched scores 0, and stays 0).
func (c *personCover) apply(ws []*sessionScorer, scores []float64) {
	var total float64
	for _, w := range c.idf {
		total += w
	}
	if total == 0 {
		return
	}
	switch ws[0].coverBits.(type) {
	case []uint8:
		foldCover[uint8](c, ws, scores, total)
	case []uint16:
		foldCover[uint16](c, ws, scores, total)
	case []uint32:
		foldCover[uint32](c, ws, scores, total)
	case []uint64:
		foldCover[uint64](c, ws, scores, total)
	}
}

func foldCover[T coverWord](c *personCover, ws []*sessionScorer, scores []float64, total float64) {
	var arrays [][]T
	for _, w := range ws {
		if b, ok := w.coverBits.([]T); ok {
			arrays = append(arrays, b[:len(scores)])
		}
	}
	if len(arrays) == 0 {
		return
	}
	first, rest := arrays[0], arrays[1:]
	for row, b := range first {
		for _, a := range rest {
			b |= a[row]
		}
		if b == 0 {
			continue
		}
		var held float64
		for x := uint64(b); x != 0; x &= x - 1 {
			held += c.idf[bits.TrailingZeros64(x)]
		}
		scores[row] *= 1 + PromptCoverWeight*held/total
	}
}

// openingScore adds OpeningWeight × the BM25 of the current term over the
// sessions' opening messages to the first row of each session (titles: the
// term's postings there).
func (s *sessionScorer) openingScore(titles []rowFreq) {
	if len(titles) == 0 {
		return
	}
	sc := s.sc
	sc.titles()
	for _, p := range titles {
		s.add(p.row, p.f())
	}
	s.scoreB(OpeningWeight, sc.titleDL, sc.titleAvg, TitleB)
}
