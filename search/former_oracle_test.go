package search

// The scorer's term as it was before session 26 (fullTerm, titleScore,
// cardTerm, score, scoreB, promptScore at 1ab6857), kept as the oracle
// of the tests that want the written-out loops to give every row the
// same float, in the same order (former_test.go's tests). Session 28's
// parts of a first-person query (rank_person.go: the opening message, the
// first turn's cover) are added where fullTerm has them.

import (
	"context"
	"fmt"
	"math"
)

func (s *sessionScorer) fullTermFormer(ctx context.Context, t string) error {
	sc := s.sc
	s.eff = s.eff[:0]
	// The postings come batch by batch (postingReader.start, next), in
	// the order a buffer of them all held, so every row's additions are
	// the same and in the same order.
	if err := s.pr.start(ctx, fieldVerbatim, t, s.buf); err != nil {
		return err
	}
	s.held = 0
	// s.add for each posting and its neighbours, written out with the
	// arrays in locals (the hottest loop of a search: ~20 % of the warm
	// process at 100,000 exchanges); the same additions in the same order.
	tf, eff, links, weight := s.tf, s.eff, sc.links, sc.weight
	for {
		ps, err := s.pr.next()
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			break
		}
		s.held += len(ps)
		if s.exact && s.tw == 1 {
			for _, p := range ps {
				s.own(p.row)
			}
		}
		for _, p := range ps {
			f := p.f()
			if f > 0 {
				if tf[p.row] == 0 {
					eff = append(eff, p.row)
				}
				tf[p.row] += f
			}
			r := &links[p.row]
			if prev := r.prev; prev >= 0 {
				if g := weight[prev] * f; g > 0 {
					if tf[prev] == 0 {
						eff = append(eff, prev)
					}
					tf[prev] += g
				}
			}
			if next := r.next; next >= 0 {
				if g := weight[next] * f; g > 0 {
					if tf[next] == 0 {
						eff = append(eff, next)
					}
					tf[next] += g
				}
			}
		}
	}
	s.eff = eff
	titles, prompts := s.titleBuf[:0], s.promptBuf[:0]
	if disableHeadBufs {
		titles, prompts = nil, nil
	}
	if err := s.scan(ctx, fieldHead, t, func(ps []rowFreq) {
		if PromptWeight > 0 && s.prompt || s.cover != nil {
			prompts = append(prompts, ps...)
		}
		for _, p := range ps {
			if prev := sc.links[p.row].prev; prev >= 0 {
				s.add(prev, sc.weight[prev]*p.f())
			} else if TitleWeight > 0 || OpeningWeight > 0 && s.person {
				titles = append(titles, p)
			}
		}
	}); err != nil {
		return err
	}
	if err := s.scan(ctx, fieldAsked, t, func(ps []rowFreq) {
		for _, p := range ps {
			if next := sc.links[p.row].next; next >= 0 {
				s.add(next, sc.askedWeight(next)*p.f())
			}
		}
	}); err != nil {
		return err
	}
	s.scoreFormer(1, sc.dl, sc.avgdl)
	s.titleBuf, s.promptBuf = titles[:0], prompts[:0]
	if OpeningWeight > 0 && s.person && len(titles) > 0 {
		sc.titles()
		for _, p := range titles {
			s.add(p.row, p.f())
		}
		s.scoreBFormer(OpeningWeight, sc.titleDL, sc.titleAvg, TitleB)
	}
	if s.cover != nil {
		s.coverTerm(prompts)
	}
	if PromptWeight > 0 && s.prompt {
		s.promptScoreFormer(prompts)
	}
	if len(titles) > 0 && TitleWeight > 0 {
		sc.titles()
		if disableTitleScore || !s.titleScoreFormer(titles) {
			for _, p := range titles {
				for j := p.row; j >= 0; j = sc.links[j].next {
					s.add(j, p.f())
				}
			}
			s.scoreBFormer(TitleWeight, sc.titleDL, sc.titleAvg, TitleB)
		}
	}
	if CardWeight > 0 && s.distAvg > 0 {
		if err := s.cardTermFormer(ctx, t); err != nil {
			return err
		}
	}
	if OutputWeight <= 0 {
		return nil
	}
	if err := s.scan(ctx, fieldOutput, t, func(ps []rowFreq) {
		s.held += len(ps)
		for _, p := range ps {
			s.add(p.row, p.f())
			s.own(p.row)
		}
	}); err != nil {
		return err
	}
	s.scoreBFormer(OutputWeight, sc.outDL, sc.outAvg, OutputB)
	return nil
}

func (s *sessionScorer) titleScoreFormer(titles []rowFreq) bool {
	links := s.sc.links
	eff := s.eff[:0]
	ends := make([]int, len(titles)) // where each posting's session ends in eff
	for i, p := range titles {
		if p.f() > 0 { // add skips a weight of 0
			for j := p.row; j >= 0; {
				eff = append(eff, j)
				next := links[j].next
				if next >= 0 && links[next].prev != j {
					return false
				}
				j = next
			}
		}
		ends[i] = len(eff)
	}
	avgdl := s.sc.titleAvg
	if len(eff) == 0 || avgdl == 0 {
		return true
	}
	df := float64(len(eff))
	idf := math.Log(1 + (float64(s.n)-df+0.5)/(df+0.5))
	k1, b := s.bm25(TitleB)
	weight, dl := TitleWeight, s.sc.titleDL
	start := 0
	for i, p := range titles {
		f := p.f()
		var d, v float64
		for k, j := range eff[start:ends[i]] {
			if k == 0 || dl[j] != d {
				d = dl[j]
				v = s.tw * weight * idf * f * (k1 + 1) / (f + k1*(1-b+b*d/avgdl))
			}
			s.put(j, v)
		}
		start = ends[i]
	}
	return true
}

func (s *sessionScorer) cardTermFormer(ctx context.Context, t string) error {
	// When the reader can count the postings first (df), they are scored
	// batch by batch as they are decoded, without a buffer of them all.
	if n, ok, err := s.pr.startNorm(fieldDistilled, t); err != nil {
		return err
	} else if ok {
		if n == 0 {
			return nil
		}
		s.held += n
		df := float64(n)
		idf := math.Log(1 + (float64(s.n)-df+0.5)/(df+0.5))
		got := 0
		for {
			ps, err := s.pr.nextNorm()
			if err != nil {
				return err
			}
			if len(ps) == 0 {
				break
			}
			got += len(ps)
			for _, x := range ps {
				s.put(x.row, s.tw*CardWeight*idf*x.f()*(BM25K1+1)/(x.f()+BM25K1*(1-BM25B+BM25B*x.dl/s.distAvg)))
			}
		}
		if got != n {
			return fmt.Errorf("postings of %q in %s: %d read, %d counted", t, fieldDistilled, got, n)
		}
		return nil
	}
	// The postings are kept for a second pass (df first, then BM25) in a
	// buffer reused across the query's terms.
	ps, err := s.pr.normPostings(ctx, fieldDistilled, t, s.cardBuf[:0])
	defer func() { s.cardBuf = ps[:0] }()
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		return nil
	}
	s.held += len(ps)
	df := float64(len(ps))
	idf := math.Log(1 + (float64(s.n)-df+0.5)/(df+0.5))
	for _, x := range ps {
		s.put(x.row, s.tw*CardWeight*idf*x.f()*(BM25K1+1)/(x.f()+BM25K1*(1-BM25B+BM25B*x.dl/s.distAvg)))
	}
	return nil
}

func (s *sessionScorer) scoreFormer(weight float64, dl []float64, avgdl float64) {
	s.scoreBFormer(weight, dl, avgdl, -1)
}

func (s *sessionScorer) scoreBFormer(weight float64, dl []float64, avgdl, bOver float64) {
	if len(s.eff) == 0 || avgdl == 0 {
		for _, row := range s.eff {
			s.tf[row] = 0
		}
		s.eff = s.eff[:0]
		return
	}
	df := float64(len(s.eff))
	idf := math.Log(1 + (float64(s.n)-df+0.5)/(df+0.5))
	k1, b := s.bm25(bOver)
	if s.rec != nil {
		adds := s.rec.adds
		for _, row := range s.eff {
			f := s.tf[row]
			s.tf[row] = 0
			adds = append(adds, rowAdd{row, s.tw * weight * idf * f * (k1 + 1) / (f + k1*(1-b+b*dl[row]/avgdl))})
		}
		s.rec.adds = adds
		s.eff = s.eff[:0]
		return
	}
	for _, row := range s.eff {
		f := s.tf[row]
		s.tf[row] = 0
		if !s.seen[row] {
			s.seen[row] = true
			s.touched = append(s.touched, row)
		}
		s.scores[row] += s.tw * weight * idf * f * (k1 + 1) / (f + k1*(1-b+b*dl[row]/avgdl))
	}
	s.eff = s.eff[:0]
}

func (s *sessionScorer) promptScoreFormer(ps []rowFreq) {
	if len(ps) == 0 {
		return
	}
	pl := s.sc.promptLens()
	for _, p := range ps {
		s.add(p.row, p.f())
	}
	s.scoreFormer(PromptWeight, pl.dl, pl.avg)
}
