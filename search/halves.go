package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	bleveindex "github.com/blevesearch/bleve_index_api"
)

// The session layer's two workers split the rows, not the terms (issue 19,
// docs/BENCHMARKS.md, session 22). Given terms to score, whole terms are
// coarse: at 1,000,000 exchanges the 4-word query put ~81 ms of work on
// one worker and ~53 on the other, the wall being the larger. Here each
// worker ("half") scores every term, but only for the rows on its side of
// a cut no session crosses: every addition a posting makes (to its row,
// to its row's neighbours, to its session's rows for the title) lands on
// the posting's own side, so each half reads only the postings of its rows
// (segments whose rows are all on the other side are not read at all)
// and adds them in the order a worker of every row did. Each part's df′
// is the sum of both halves' counts, exchanged before the part is scored.
//
// Same scores, bit for bit: each row still sums its group's terms (the
// groups termGroups makes) in the same order into that group's array,
// and the two arrays are added row by row as before; the rows touched come
// in another order, which the ranking cannot see when no two rows share a
// Seq (then better orders every pair of candidates). The layer uses the
// halves only then, and only where nothing after the sums reads the rows
// in order (halvesFit).

// halvesMinRows is the fewest rows for which the layer splits the rows.
var halvesMinRows = 20000

// layerSums, when set, is given the session layer's summed scores and the
// rows touched before the ranking (tests compare the two ways).
var layerSums func(scores []float64, touched []int32)

// halvesUsed counts the queries scored by halves (tests).
var halvesUsed atomic.Int64

// disableHalves makes the layer split the terms, as before (tests compare).
var disableHalves = false

// halfPlan is where a neighbour table's rows are cut in two (halfCut).
type halfPlan struct {
	cut  int32 // -1: no cut
	seqs *int  // the Seq column checked, and its length
	nseq int
	uniq bool // no two rows share a Seq
}

// halves returns the row where the halves meet, -1 when the rows are not
// split (no cut, or rows sharing a Seq). Worked out once per table.
func (c *sessionCtx) halves(seqs []int) int32 {
	c.halfOnce.Do(func() {
		c.half = halfPlan{cut: halfCut(c.links), seqs: unsafe.SliceData(seqs), nseq: len(seqs), uniq: uniqueSeqs(seqs)}
	})
	h := c.half
	if h.seqs != unsafe.SliceData(seqs) || h.nseq != len(seqs) || !h.uniq {
		return -1
	}
	return h.cut
}

// halfCut is the cut c nearest to the middle, between a quarter and three
// quarters of the rows, such that no row links (previous or next) across
// it: rows below c link only below c, rows from c only from c. -1 for none.
// Two passes over the links, one forward, one back (at 1,000,000 rows the
// links are 8 MB, read again by the first term's scoring).
func halfCut(links []link) int32 {
	n := len(links)
	lo, hi := max(n/4, 1), 3*n/4
	if hi < lo || hi >= n {
		return -1
	}
	// left[c-lo]: every row below c links below c.
	m := int32(-1)
	for _, l := range links[:lo] {
		m = max(m, l.prev, l.next)
	}
	left := make([]bool, hi-lo+1)
	for r := lo; r <= hi; r++ {
		left[r-lo] = m < int32(r)
		m = max(m, links[r].prev, links[r].next)
	}
	// mn: the lowest row linked from rows r and up (n for none).
	mn := int32(n)
	low := func(l link) {
		if l.prev >= 0 {
			mn = min(mn, l.prev)
		}
		if l.next >= 0 {
			mn = min(mn, l.next)
		}
	}
	for _, l := range links[hi+1:] {
		low(l)
	}
	best, mid := int32(-1), n/2
	for r := hi; r >= lo; r-- {
		low(links[r])
		if left[r-lo] && mn >= int32(r) && (best < 0 || abs(r-mid) < abs(int(best)-mid)) {
			best = int32(r)
		}
	}
	return best
}

// uniqueSeqs says whether no two rows share a Seq.
func uniqueSeqs(seqs []int) bool {
	inc := true
	for i := 1; i < len(seqs) && inc; i++ {
		inc = seqs[i] > seqs[i-1]
	}
	if inc {
		return true
	}
	s := append([]int(nil), seqs...)
	sort.Ints(s)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return false
		}
	}
	return true
}

// halvesFit says whether nothing after the sums reads the touched rows'
// order or needs a scorer of every row: no exact tier, no session sums,
// no PRF or co-occurrence expansion, BM25F rather than plain.
func halvesFit(plain, exact bool) bool {
	return !disableHalves && !plain && !exact && SessionWeight == 0 && PRFWeight <= 0 && CoocWeight <= 0
}

// halfSync is how the two halves tell each other a part's count: each
// publishes its count for its k-th exchange and waits for the other's.
// The halves spin a little first: both run at once, and a part's two
// halves take about as long, so the other's count is usually there or
// soon (a park and wake-up costs tens of µs in a virtual machine).
type halfSync struct {
	slot    [2][2]atomic.Uint64 // [half][k%2]: k+1 << 33 | ok << 32 | count
	step    [2]int
	mu      sync.Mutex
	cond    *sync.Cond
	aborted atomic.Bool
}

// halfSpin is how many times a half looks for the other's count before
// it sleeps until the other wakes it.
var halfSpin = 2000

var errHalfAborted = errors.New("the other half of the session layer failed")

func newHalfSync() *halfSync {
	x := &halfSync{}
	x.cond = sync.NewCond(&x.mu)
	return x
}

// swap publishes half h's count v (and ok) for its next exchange and
// returns the other half's count and ok for it.
func (x *halfSync) swap(h, v int, ok bool) (int, bool, error) {
	k := x.step[h]
	x.step[h]++
	tag := uint64(k+1) << 33
	w := tag | uint64(uint32(v))
	if ok {
		w |= 1 << 32
	}
	x.slot[h][k%2].Store(w)
	x.mu.Lock()
	x.cond.Broadcast()
	x.mu.Unlock()
	o := &x.slot[1-h][k%2]
	for i := 0; i < halfSpin; i++ {
		if got := o.Load(); got>>33 == uint64(k+1) {
			return int(uint32(got)), got&(1<<32) != 0, nil
		}
		if x.aborted.Load() {
			return 0, false, errHalfAborted
		}
		if i%64 == 63 {
			runtime.Gosched()
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for {
		if got := o.Load(); got>>33 == uint64(k+1) {
			return int(uint32(got)), got&(1<<32) != 0, nil
		}
		if x.aborted.Load() {
			return 0, false, errHalfAborted
		}
		x.cond.Wait()
	}
}

// total is v plus the other half's count.
func (x *halfSync) total(h, v int) (int, error) {
	o, _, err := x.swap(h, v, true)
	return v + o, err
}

// abort wakes the other half, which then fails too.
func (x *halfSync) abort() {
	x.aborted.Store(true)
	x.mu.Lock()
	x.cond.Broadcast()
	x.mu.Unlock()
}

// halfScorer scores every term for the rows lo to hi-1. Its scorer's
// tf, seen and both sums are shared with the other half (each writes
// only its own rows); eff, touched and the head buffers are its own.
type halfScorer struct {
	*sessionScorer
	h      int
	lo, hi int32
	sums   [2][]float64
	x      *halfSync
	heldK  []int // per term: the postings held in its rows' own fields
}

// halvesLayer is sessionBM25Layer's scoring and ranking with the rows
// split at cut (the caller checked halvesFit); ok is false, nothing done,
// where the postings cannot be read by rows (postingReader.within).
func (ix *Index) halvesLayer(ctx context.Context, sc *sessionCtx, r bleveindex.IndexReader, cache map[uint64]int32,
	text string, nq int, terms []weightedTerm, groups [][]int, most, cards []int, distAvg float64, cut int32,
	allowed func(int32) bool, limit int) (_ []cand, ok bool, _ error) {
	n := len(ix.seqs)
	bounds := [3]int32{0, cut, int32(n)}
	var prs [2]*postingReader
	for h := range prs {
		c := cache
		if h > 0 {
			c = map[uint64]int32{} // rowOf caches misses in the map: one per half
		}
		if prs[h] = newPostingReader(ix, r, c); !prs[h].within(bounds[h], bounds[h+1]) {
			return nil, false, nil
		}
	}
	group := make([]int, len(terms))
	for g, ks := range groups {
		for _, k := range ks {
			group[k] = g
		}
	}
	bufCap := 0
	for _, m := range most {
		bufCap = max(bufCap, m)
	}
	// g0 (n floats), g1 and tf side by side (2n: the candidates' room at
	// the end), seen, touched and eff (n each, split at the cut), and each
	// half's title and prompt buffers.
	size := 8*n + 16*n + n + 4*n + 4*n + 2*2*bufCap*int(unsafe.Sizeof(rowFreq{})) + 12*8
	var mem *scratch
	if !disableScratch {
		mem = reuseScratch(size)
		defer mem.keep()
	}
	g0 := scratchSlice[float64](mem, n, n)
	pair := scratchSlice[float64](mem, 2*n, 2*n)
	g1, tf := pair[:n:n], pair[n:]
	seen := scratchSlice[bool](mem, n, n)
	touchedAll := scratchSlice[int32](mem, 0, n)
	effAll := scratchSlice[int32](mem, 0, n)
	x := newHalfSync()
	prompt := !PromptFirstPerson || firstPerson(text)
	var hs [2]*halfScorer
	for h := range hs {
		lo, hi := bounds[h], bounds[h+1]
		s := &sessionScorer{ix: ix, r: r, sc: sc, cache: prs[h].cache, pr: prs[h], n: n, distAvg: distAvg, prompt: prompt,
			tf: tf, seen: seen, touched: touchedAll[lo:lo:hi], eff: effAll[lo:lo:hi],
			titleBuf: scratchSlice[rowFreq](mem, 0, bufCap), promptBuf: scratchSlice[rowFreq](mem, 0, bufCap)}
		hs[h] = &halfScorer{sessionScorer: s, h: h, lo: lo, hi: hi, sums: [2][]float64{g0, g1}, x: x, heldK: make([]int, len(terms))}
	}
	run := func(f func(s *halfScorer) error) error {
		var errs [2]error
		var wg sync.WaitGroup
		for h, s := range hs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if errs[h] = f(s); errs[h] != nil && !errors.Is(errs[h], errHalfAborted) {
					x.abort()
				}
			}()
		}
		wg.Wait()
		if errs[0] != nil && errs[1] != nil && errors.Is(errs[1], errHalfAborted) {
			return errs[0]
		}
		if errs[1] != nil && errors.Is(errs[0], errHalfAborted) {
			return errs[1]
		}
		return errors.Join(errs[0], errs[1])
	}
	if err := run(func(s *halfScorer) error {
		for k, t := range terms {
			s.k, s.tw, s.scores = int32(k+1), t.w, s.sums[group[k]]
			if err := s.term(ctx, t.t, cards[k]); err != nil {
				return err
			}
			s.heldK[k] = s.held
		}
		return nil
	}); err != nil {
		return nil, true, err
	}
	var fixes []typoFix
	if TypoWeight > 0 {
		missing := make([]bool, len(terms))
		for k := range terms {
			missing[k] = hs[0].heldK[k]+hs[1].heldK[k] == 0
		}
		var err error
		if fixes, err = typoFixes(ctx, r, terms, missing); err != nil {
			return nil, true, err
		}
	}
	if err := run(func(s *halfScorer) error {
		for _, f := range fixes {
			s.k, s.tw, s.scores = f.k, TypoWeight, s.sums[0]
			if err := s.term(ctx, f.t, -1); err != nil {
				return err
			}
		}
		if len(groups) > 1 {
			for _, row := range s.touched {
				g0[row] += g1[row]
			}
		}
		return nil
	}); err != nil {
		return nil, true, err
	}
	// Both halves' rows, in one list (the first half's are in place).
	t0, t1 := hs[0].touched, hs[1].touched
	touched := touchedAll[:len(t0)+len(t1)]
	copy(touched[len(t0):], t1)
	scores := g0
	ws := []*sessionScorer{hs[0].sessionScorer, hs[1].sessionScorer}
	ix.adjust(ws, scores, touched, sc, text, nq)
	if err := ix.timeBoost(ctx, text, scores, touched); err != nil {
		return nil, true, err
	}
	halvesUsed.Add(1)
	if layerSums != nil {
		layerSums(scores, touched)
	}
	var cs []cand
	if unsafe.Sizeof(cand{}) == 2*unsafe.Sizeof(float64(0)) {
		cs = unsafe.Slice((*cand)(unsafe.Pointer(unsafe.SliceData(pair))), n)[:0]
	} else {
		cs = make([]cand, 0, len(touched))
	}
	for _, row := range touched {
		if allowed == nil || allowed(row) {
			cs = append(cs, cand{row: row, score: scores[row]})
		}
	}
	return ix.topGroups(cs, limit), true, nil
}

// term adds the score of t for the half's rows, as sessionScorer.term
// does for every row, each part's df′ the two halves' (halfSync). cardN
// is t's postings in the card field, -1 when not counted yet.
func (s *halfScorer) term(ctx context.Context, t string, cardN int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sc, p := s.sc, s.pr
	s.eff = s.eff[:0]
	if err := p.startIn(fieldVerbatim, t); err != nil {
		return err
	}
	s.held = 0
	tf, eff, links, weight := s.tf, s.eff, sc.links, sc.weight
	for {
		ps, err := p.nextIn()
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			break
		}
		s.held += len(ps)
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
	if err := s.scanIn(fieldHead, t, func(ps []rowFreq) {
		if PromptWeight > 0 && s.prompt {
			prompts = append(prompts, ps...)
		}
		for _, p := range ps {
			if prev := sc.links[p.row].prev; prev >= 0 {
				s.add(prev, sc.weight[prev]*p.f())
			} else if TitleWeight > 0 {
				titles = append(titles, p)
			}
		}
	}); err != nil {
		return err
	}
	if err := s.scanIn(fieldAsked, t, func(ps []rowFreq) {
		for _, p := range ps {
			if next := sc.links[p.row].next; next >= 0 {
				s.add(next, sc.askedWeight(next)*p.f())
			}
		}
	}); err != nil {
		return err
	}
	df, err := s.x.total(s.h, len(s.eff))
	if err != nil {
		return err
	}
	s.scoreDF(1, sc.dl, sc.avgdl, -1, df)
	s.titleBuf, s.promptBuf = titles[:0], prompts[:0]
	if PromptWeight > 0 && s.prompt {
		var pl *promptLens
		if len(prompts) > 0 {
			pl = sc.promptLens()
			for _, p := range prompts {
				s.add(p.row, p.f())
			}
		}
		df, err := s.x.total(s.h, len(s.eff))
		if err != nil {
			return err
		}
		if pl != nil {
			s.scoreDF(PromptWeight, pl.dl, pl.avg, -1, df)
		}
	}
	if TitleWeight > 0 {
		if err := s.title(titles); err != nil {
			return err
		}
	}
	if CardWeight > 0 && s.distAvg > 0 {
		if err := s.card(t, cardN); err != nil {
			return err
		}
	}
	if OutputWeight <= 0 {
		return nil
	}
	if err := s.scanIn(fieldOutput, t, func(ps []rowFreq) {
		s.held += len(ps)
		for _, p := range ps {
			s.add(p.row, p.f())
		}
	}); err != nil {
		return err
	}
	if df, err = s.x.total(s.h, len(s.eff)); err != nil {
		return err
	}
	s.scoreDF(OutputWeight, sc.outDL, sc.outAvg, OutputB, df)
	return nil
}

// title is term's title part for the half's title postings: titleScore's
// sums when both halves' sessions link back, else add and scoreB's, as
// the worker of every row chose for all of them.
func (s *halfScorer) title(titles []rowFreq) error {
	s.sc.titles()
	var ends []int
	ok := true
	if disableTitleScore {
		ok = false
	} else if len(titles) > 0 {
		ends, ok = s.titleRows(titles)
	}
	o, oOK, err := s.x.swap(s.h, len(s.eff), ok)
	if err != nil {
		return err
	}
	if ok && oOK {
		s.titleApply(titles, ends, len(s.eff)+o)
		return nil
	}
	s.eff = s.eff[:0]
	for _, p := range titles {
		for j := p.row; j >= 0; j = s.sc.links[j].next {
			s.add(j, p.f())
		}
	}
	df, err := s.x.total(s.h, len(s.eff))
	if err != nil {
		return err
	}
	s.scoreDF(TitleWeight, s.sc.titleDL, s.sc.titleAvg, TitleB, df)
	return nil
}

// card is cardTerm for the half's rows. The part's df is the count of
// t's card postings that map to rows: where every document of every
// segment does, every segment's count (n, counted here when negative),
// as cardTerm takes it before reading them; else the two halves' counts
// of those read (cardTerm's second way), the postings kept until then.
func (s *halfScorer) card(t string, n int) error {
	if !s.pr.inAllRows {
		ps, err := s.pr.normIn(fieldDistilled, t, s.cardBuf[:0])
		s.cardBuf = ps[:0]
		if err != nil {
			return err
		}
		df, err := s.x.total(s.h, len(ps))
		if err != nil || df == 0 {
			return err
		}
		s.cardAdd(ps, df)
		return nil
	}
	if n < 0 {
		var err error
		if n, err = s.pr.count(fieldDistilled, t); err != nil {
			return fmt.Errorf("postings of %q in %s: %w", t, fieldDistilled, err)
		}
	}
	if n == 0 {
		return nil
	}
	if err := s.pr.startNormIn(fieldDistilled, t); err != nil {
		return err
	}
	for {
		ps, err := s.pr.nextNormIn()
		if err != nil || len(ps) == 0 {
			return err
		}
		s.cardAdd(ps, n)
	}
}

// cardAdd adds the card part of postings ps, df being the part's.
func (s *halfScorer) cardAdd(ps []cardPosting, n int) {
	s.held += len(ps)
	df := float64(n)
	idf := math.Log(1 + (float64(s.n)-df+0.5)/(df+0.5))
	for _, x := range ps {
		if !s.seen[x.row] {
			s.seen[x.row] = true
			s.touched = append(s.touched, x.row)
		}
		s.scores[x.row] += s.tw * CardWeight * idf * x.f() * (BM25K1 + 1) / (x.f() + BM25K1*(1-BM25B+BM25B*x.dl/s.distAvg))
	}
}

// normIn appends the range's postings of term in field, with their
// lengths, to buf.
func (p *postingReader) normIn(field, term string, buf []cardPosting) ([]cardPosting, error) {
	if err := p.startNormIn(field, term); err != nil {
		return buf, err
	}
	for {
		ps, err := p.nextNormIn()
		if err != nil || len(ps) == 0 {
			return buf, err
		}
		buf = append(buf, ps...)
	}
}

// scanIn is scan over the half's rows.
func (s *halfScorer) scanIn(field, t string, f func([]rowFreq)) error {
	if err := s.pr.startIn(field, t); err != nil {
		return err
	}
	for {
		ps, err := s.pr.nextIn()
		if err != nil || len(ps) == 0 {
			return err
		}
		f(ps)
	}
}

// within limits the reader's scans (startIn, nextIn) to the postings of
// rows lo to hi-1. A segment whose documents are runs of rows is read up
// to the last document of the range and not at all without one; another
// is read whole, its rows from the row map. It says false, limiting
// nothing, unless every list is read in bulk.
func (p *postingReader) within(lo, hi int32) bool {
	if !p.direct || disableBulkPostings {
		return false
	}
	p.inEnd = make([]uint32, len(p.segs))
	p.inAllRows = true
	for i := range p.segs {
		p.inAllRows = p.inAllRows && p.allRows(i)
		runs := p.runs(i)
		if runs == nil {
			p.inEnd[i] = math.MaxUint32
			continue
		}
		// The documents whose rows are lo to hi-1: read up to the last.
		for _, r := range runs {
			a := max(int64(r.start), int64(lo)-int64(r.delta))
			b := min(int64(r.end), int64(hi)-int64(r.delta))
			if a < b {
				p.inEnd[i] = max(p.inEnd[i], uint32(b))
			}
		}
	}
	p.inLo, p.inHi = lo, hi
	return true
}

// rowIn is the row of document d of segment i for a scan of the range
// when the segment is not runs of rows (-1: none).
func (p *postingReader) rowIn(i int, d uint32) (int32, error) {
	if m, iid := p.ix.rowMap, uint64(d)+p.offs[i]; iid < uint64(len(m)) {
		return m[iid], nil
	}
	return p.row(uint64(d) + p.offs[i])
}

// listsIn opens term's lists in field in the segments holding rows of
// the range (within).
func (p *postingReader) listsIn(field, term string) error {
	ds, err := p.dictionaries(field)
	if err != nil {
		return fmt.Errorf("postings of %q in %s: %w", term, field, err)
	}
	for i, s := range p.segs {
		if p.inEnd[i] == 0 {
			continue
		}
		pl, err := ds[i].PostingsList([]byte(term), s.Deleted(), p.pls[i])
		if err != nil {
			return fmt.Errorf("postings of %q in %s: %w", term, field, err)
		}
		p.pls[i] = pl
	}
	p.scanField, p.scanTerm, p.scanSeg = field, term, -1
	return p.nextSegIn()
}

// nextSegIn moves the scan to the next segment holding rows of the range.
func (p *postingReader) nextSegIn() error {
	for p.scanSeg++; p.scanSeg < len(p.segs); p.scanSeg++ {
		if p.inEnd[p.scanSeg] == 0 {
			continue
		}
		ok, err := p.bulk.Reset(p.pls[p.scanSeg])
		if err != nil {
			return fmt.Errorf("postings of %q in %s: %w", p.scanTerm, p.scanField, err)
		}
		if !ok {
			return fmt.Errorf("postings of %q in %s: not a zap list", p.scanTerm, p.scanField)
		}
		return nil
	}
	return nil
}

// startIn begins a scan of term's postings in field for the range.
func (p *postingReader) startIn(field, term string) error { return p.listsIn(field, term) }

// nextIn returns the scan's next postings of rows in the range, in
// postings' order, none at its end. The slice is the reader's until the
// next call.
func (p *postingReader) nextIn() ([]rowFreq, error) {
	for p.scanSeg < len(p.segs) {
		k, err := p.bulk.Next(p.bd[:], p.bf[:], p.bn[:])
		if err != nil {
			return nil, fmt.Errorf("postings of %q in %s: %w", p.scanTerm, p.scanField, err)
		}
		i := p.scanSeg
		end, runs := p.inEnd[i], p.runs(i)
		out, done := p.batch[:0], k == 0
		var run rowRun
		if runs != nil {
			run = runs[0]
		}
		for j, d := range p.bd[:k] {
			if d >= end {
				done = true
				break
			}
			var row int32
			if runs != nil {
				if d < run.start || d >= run.end {
					run = runOf(runs, d)
				}
				row = int32(d) + run.delta
			} else if row, err = p.rowIn(i, d); err != nil {
				return nil, err
			}
			if row < p.inLo || row >= p.inHi {
				continue
			}
			f, ok := freq32(p.bf[j])
			if !ok {
				return nil, fmt.Errorf("postings of %q in %s: %w", p.scanTerm, p.scanField, errFreq)
			}
			out = append(out, rowFreq{row, f})
		}
		if done {
			if err := p.nextSegIn(); err != nil {
				return nil, err
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, nil
}

// startNormIn begins a scan of term's postings in field, with their
// lengths (nextNormIn), for the range.
func (p *postingReader) startNormIn(field, term string) error { return p.listsIn(field, term) }

// nextNormIn is nextIn with the postings' lengths, as nextNorm gives them.
func (p *postingReader) nextNormIn() ([]cardPosting, error) {
	for p.scanSeg < len(p.segs) {
		k, err := p.bulk.Next(p.bd[:], p.bf[:], p.bn[:])
		if err != nil {
			return nil, fmt.Errorf("postings of %q in %s: %w", p.scanTerm, p.scanField, err)
		}
		i := p.scanSeg
		end, runs := p.inEnd[i], p.runs(i)
		w, done := 0, k == 0
		var run rowRun
		if runs != nil {
			run = runs[0]
		}
		for j, d := range p.bd[:k] {
			if d >= end {
				done = true
				break
			}
			var row int32
			if runs != nil {
				if d < run.start || d >= run.end {
					run = runOf(runs, d)
				}
				row = int32(d) + run.delta
			} else if row, err = p.rowIn(i, d); err != nil {
				return nil, err
			}
			if row < p.inLo || row >= p.inHi {
				continue
			}
			f, ok := freq32(p.bf[j])
			if !ok {
				return nil, fmt.Errorf("postings of %q in %s: %w", p.scanTerm, p.scanField, errFreq)
			}
			p.cardBatch[w] = cardPosting{row, f, p.lenOfBits(p.bn[j])}
			w++
		}
		if done {
			if err := p.nextSegIn(); err != nil {
				return nil, err
			}
		}
		if w > 0 {
			return p.cardBatch[:w], nil
		}
	}
	return nil, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
