package search

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"

	bleveindex "github.com/blevesearch/bleve_index_api"
)

// BM25 parameters (Robertson/Spärck Jones; the usual k1 = 1.2, b = 0.75).
var (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// Why BM25 is computed here rather than by Bleve's scorer: in Bleve v2.6.3
// with ScoringModel "bm25" (search/scorer/scorer_term.go and
// scorer_disjunction.go), a term's score is
// idf·√tf·k1/(√tf + k1·norm) multiplied by a query weight idf·queryNorm and a
// coordination factor matched/total, i.e. the square root of the term
// frequency, idf squared and Lucene-classic coord. Its average field length
// also comes from per-segment unique-term counts, rounded up. Bleve is
// therefore used for what it is good at (durable segments, postings with
// frequencies and norms), and the scorer below applies the textbook formula
//
//	score(d, q) = Σ_{t∈q} idf(t) · f(t,d)·(k1+1) / (f(t,d) + k1·(1 − b + b·|d|/avgdl))
//	idf(t)      = ln(1 + (N − df(t) + 0.5)/(df(t) + 0.5))
//
// with N and avgdl from the exact totals kept in the manifest. Query terms
// are counted once each.

type posting struct {
	iid   uint64
	score float64
}

// bm25Layer ranks dedup groups by BM25 of the query over field.
func (ix *Index) bm25Layer(ctx context.Context, field, text string, allowed func(int32) bool, limit int) ([]cand, error) {
	terms := queryTerms(text)
	n := float64(ix.Count())
	total := float64(ix.man.BM25.FieldLen[field])
	if len(terms) == 0 || n == 0 || total == 0 {
		return nil, nil
	}
	avgdl := total / n
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()

	// Dense by Bleve internal id (ids are < the docs ever indexed in the
	// snapshot, deleted ones included).
	scores := make([]float64, 0, len(ix.seqs)+len(ix.seqs)/4)
	var touched []uint32
	type tfNorm struct {
		iid  uint64
		freq uint64
		norm float64
	}
	var buf []tfNorm
	for _, t := range terms {
		tfr, err := r.TermFieldReader(ctx, []byte(t), field, true, true, false)
		if err != nil {
			return nil, fmt.Errorf("postings of %q: %w", t, err)
		}
		buf = buf[:0]
		tfd := &bleveindex.TermFieldDoc{}
		for {
			d, err := tfr.Next(tfd)
			if err != nil {
				tfr.Close()
				return nil, fmt.Errorf("postings of %q: %w", t, err)
			}
			if d == nil {
				break
			}
			buf = append(buf, tfNorm{d.ID.Value(), d.Freq, d.Norm})
			tfd = d
		}
		tfr.Close()
		df := float64(len(buf))
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range buf {
			dl := fieldLen(p.norm)
			f := float64(p.freq)
			if p.iid >= uint64(len(scores)) {
				if p.iid > 1<<31 {
					return nil, fmt.Errorf("bleve doc id %d out of range", p.iid)
				}
				scores = append(scores, make([]float64, int(p.iid)+1-len(scores))...)
			}
			if scores[p.iid] == 0 {
				touched = append(touched, uint32(p.iid))
			}
			scores[p.iid] += idf * f * (BM25K1 + 1) / (f + BM25K1*(1-BM25B+BM25B*dl/avgdl))
		}
	}
	all := make([]posting, len(touched))
	for i, iid := range touched {
		all[i] = posting{uint64(iid), scores[iid]}
	}
	// Map Bleve ids to rows only for the best-scoring postings, widening
	// when filters or duplicates reject too many. Only the part needed is
	// sorted.
	byScore := func(a, b posting) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.iid < b.iid
	}
	sorted := 0
	sortUpTo := func(n int) {
		if n <= sorted {
			return
		}
		rest := all[sorted:]
		k := n - sorted
		if k < len(rest)/2 {
			partialSort(rest, k, byScore)
		} else {
			sort.Slice(rest, func(i, j int) bool { return byScore(rest[i], rest[j]) })
			k = len(rest)
		}
		sorted += k
	}
	cache, release := ix.rowCacheFor(r)
	defer release()
	want := limit * 4
	var cs []cand
	mapped := 0
	for {
		end := min(want, len(all))
		sortUpTo(end)
		// never cut a run of equal scores: Seq must decide among them
		for end < len(all) && end > 0 {
			sortUpTo(end + 1)
			if all[end].score != all[end-1].score {
				break
			}
			end++
		}
		for _, p := range all[mapped:end] {
			row, err := ix.rowOf(r, cache, p.iid)
			if err != nil {
				return nil, err
			}
			if row < 0 || allowed != nil && !allowed(row) {
				continue
			}
			cs = append(cs, cand{row: row, score: p.score})
		}
		mapped = end
		sort.Slice(cs, func(i, j int) bool { return ix.better(cs[i], cs[j]) })
		got := ix.pickGroups(cs, limit)
		if len(got) == limit || mapped == len(all) {
			return got, nil
		}
		want *= 4
	}
}

// reader opens a reader on the index's current snapshot.
func (ix *Index) reader() (bleveindex.IndexReader, error) {
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("bleve: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("bleve reader: %w", err)
	}
	return r, nil
}

// rowCacheFor returns the id→row cache to use with r: a read-only index
// keeps one for its life (and loads the saved row map), a writer's
// snapshots change, so it gets a fresh one per search. release unlocks.
func (ix *Index) rowCacheFor(r bleveindex.IndexReader) (cache map[uint64]int32, release func()) {
	if !ix.readOnly {
		return map[uint64]int32{}, func() {}
	}
	ix.cacheMu.Lock()
	if pc := ix.pcache.Load(); pc != nil {
		pc.reclaim() // no scan of an earlier search runs now
	}
	if ix.rowCache == nil {
		ix.rowCache = map[uint64]int32{}
	}
	ix.ensureRowMap(r)
	return ix.rowCache, ix.cacheMu.Unlock
}

// fieldLen recovers |d| from Bleve's norm 1/√|d| (stored as a float32).
func fieldLen(norm float64) float64 {
	if norm <= 0 {
		return 1
	}
	return math.Round(1 / (norm * norm))
}

// rowOf maps a Bleve internal id to a table row (-1 when the document is
// unknown to the table, e.g. indexed by a writer that crashed before
// SetLastCommit). Internal ids are only stable within one reader snapshot:
// a read-only index never changes snapshot and keeps one cache for its life;
// a writer's snapshots change with every batch and background merge, so it
// caches per search.
func (ix *Index) rowOf(r bleveindex.IndexReader, cache map[uint64]int32, iid uint64) (int32, error) {
	if row, ok := ix.mappedRow(iid); ok {
		return row, nil
	}
	if row, ok := cache[iid]; ok {
		return row, nil
	}
	ext, err := r.ExternalID(internalID(iid))
	if err != nil {
		return -1, fmt.Errorf("bleve doc %d: %w", iid, err)
	}
	row, err := strconv.Atoi(ext)
	if err != nil || row < 0 || row >= len(ix.seqs) {
		row = -1 // not in the table (a batch whose tables were never saved)
	}
	cache[iid] = int32(row)
	return int32(row), nil
}

func internalID(v uint64) bleveindex.IndexInternalID {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

// partialSort moves the k best elements of a (by less) to its front, sorted,
// in O(n log k).
func partialSort[T any](a []T, k int, less func(x, y T) bool) {
	if k <= 0 {
		return
	}
	// max-heap (worst on top) of the best k seen, kept in a[:k]
	worse := func(x, y T) bool { return less(y, x) }
	down := func(i, n int) {
		for {
			l, r, m := 2*i+1, 2*i+2, i
			if l < n && worse(a[l], a[m]) {
				m = l
			}
			if r < n && worse(a[r], a[m]) {
				m = r
			}
			if m == i {
				return
			}
			a[i], a[m] = a[m], a[i]
			i = m
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i, k)
	}
	for i := k; i < len(a); i++ {
		if less(a[i], a[0]) {
			a[0], a[i] = a[i], a[0]
			down(0, k)
		}
	}
	head := a[:k]
	sort.Slice(head, func(i, j int) bool { return less(head[i], head[j]) })
}
