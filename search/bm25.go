package search

import (
	"context"
	"fmt"
	"math"
	"sort"

	bleveindex "github.com/blevesearch/bleve_index_api"
)

// BM25 parameters (Robertson/Spärck Jones; the usual k1 = 1.2, b = 0.75).
var (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// Why BM25 is computed here rather than by Bleve's scorer: measured on Bleve
// v2.6.3 with ScoringModel "bm25", a term's score is
// idf·√tf·k1/(√tf + k1·norm) multiplied by a query weight idf·queryNorm and a
// coordination factor matched/total, i.e. the square root of the term
// frequency, idf squared and Lucene-classic coord. Its average field length
// also comes from per-segment unique-term counts, rounded up. Bleve is
// therefore used for what it is good at (analysis, storage, postings with
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
	n := float64(len(ix.recs))
	total := float64(ix.man.BM25.FieldLen[field])
	if len(terms) == 0 || n == 0 || total == 0 {
		return nil, nil
	}
	avgdl := total / n
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("bleve: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("bleve reader: %w", err)
	}
	defer r.Close()

	scores := map[uint64]float64{}
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
			scores[p.iid] += idf * f * (BM25K1 + 1) / (f + BM25K1*(1-BM25B+BM25B*dl/avgdl))
		}
	}
	all := make([]posting, 0, len(scores))
	for iid, s := range scores {
		all = append(all, posting{iid, s})
	}
	// Map Bleve ids to rows only for the best-scoring postings, widening
	// when filters or duplicates reject too many.
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].iid < all[j].iid
	})
	cache := map[uint64]int32{}
	if ix.readOnly {
		ix.mu.Lock()
		defer ix.mu.Unlock()
		if ix.rowCache == nil {
			ix.rowCache = map[uint64]int32{}
		}
		cache = ix.rowCache
	}
	want := limit * 4
	var cs []cand
	mapped := 0
	for {
		end := min(want, len(all))
		// never cut a run of equal scores: Seq must decide among them
		for end < len(all) && end > 0 && all[end].score == all[end-1].score {
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
	if row, ok := cache[iid]; ok {
		return row, nil
	}
	ext, err := r.ExternalID(internalID(iid))
	if err != nil {
		return -1, fmt.Errorf("bleve doc %d: %w", iid, err)
	}
	row, ok := ix.byID[ext]
	if !ok {
		row = -1
	}
	cache[iid] = row
	return row, nil
}

func internalID(v uint64) bleveindex.IndexInternalID {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}
