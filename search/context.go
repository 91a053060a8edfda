package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	bleveindex "github.com/blevesearch/bleve_index_api"
)

// ModeSessionBM25 is BM25 over the verbatim in which every exchange also
// carries the words of its session neighbours: the exchange before it and
// the one after it in the same session (commit order). A conversation
// spreads one topic over several short exchanges ("and what did the kids
// make of it?" answers a question asked one exchange earlier); read alone,
// such an exchange lacks the words a later query uses. The neighbours'
// words count at ContextWeight·ContextLenRef/(ContextLenRef+|d|) of their
// frequency, |d| being the exchange's own length in terms: a short
// conversational turn borrows context, a long self-contained coding
// exchange (hundreds of terms) next to none, so it ranks as plain BM25.
//
// The score is BM25F (Robertson et al. 2004) over the two streams:
//
//	f'(t,d) = f(t,d) + w(d)·(f(t,prev(d)) + f(t,next(d)))
//	|d|'    = |d| + w(d)·(|prev(d)| + |next(d)|)
//	df'(t)  = the exchanges with f'(t,d) > 0
//
// computed at query time from the verbatim postings, so a new exchange
// changes its neighbour's context without re-indexing the neighbour, and
// the weights can change without a rebuild. docs/bench/eval.md measures it.
const ModeSessionBM25 = "session-bm25"

// Session-context weights (measured on shared/eval, docs/bench/eval.md).
var (
	ContextWeight = 0.3
	ContextLenRef = 50.0
)

// contextFile holds per row: the previous and next row of the same session
// (-1 for none) and the verbatim length in terms.
const (
	contextFile  = "context.bin"
	contextMagic = "GMCTX\x00\x00\x01"
)

// sessionCtx is the neighbour table with the effective lengths for the
// current weights.
type sessionCtx struct {
	prev, next, lens []int32
	w, ref           float64   // ContextWeight, ContextLenRef when built
	weight           []float64 // w(d)
	dl               []float64 // |d|'
	avgdl            float64
}

// neighbours links each row to the previous and next row of its session in
// Seq order. Exchanges without a session have no neighbours.
func neighbours(recs []docRec) (prev, next, lens []int32) {
	n := len(recs)
	prev, next, lens = make([]int32, n), make([]int32, n), make([]int32, n)
	rows := make([]int32, 0, n)
	for i := range recs {
		prev[i], next[i], lens[i] = -1, -1, recs[i].VerbLen
		if recs[i].Session != "" {
			rows = append(rows, int32(i))
		}
	}
	sort.Slice(rows, func(a, b int) bool {
		ra, rb := &recs[rows[a]], &recs[rows[b]]
		if ra.Session != rb.Session {
			return ra.Session < rb.Session
		}
		if ra.Seq != rb.Seq {
			return ra.Seq < rb.Seq
		}
		return rows[a] < rows[b]
	})
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if recs[a].Session == recs[b].Session {
			next[a], prev[b] = b, a
		}
	}
	return prev, next, lens
}

func newSessionCtx(prev, next, lens []int32) *sessionCtx {
	n := len(lens)
	c := &sessionCtx{prev: prev, next: next, lens: lens, w: ContextWeight, ref: ContextLenRef,
		weight: make([]float64, n), dl: make([]float64, n)}
	var total float64
	for i := range lens {
		w := ContextWeight * ContextLenRef / (ContextLenRef + float64(lens[i]))
		d := float64(lens[i])
		if p := prev[i]; p >= 0 {
			d += w * float64(lens[p])
		}
		if q := next[i]; q >= 0 {
			d += w * float64(lens[q])
		}
		c.weight[i], c.dl[i] = w, d
		total += d
	}
	if n > 0 {
		c.avgdl = total / float64(n)
	}
	return c
}

// ensureContext loads the saved neighbour table, or builds it from the
// records when this writer added documents since it opened (or the saved
// table is damaged and the records are at hand).
func (ix *Index) ensureContext() (*sessionCtx, error) {
	ix.ctxMu.Lock()
	defer ix.ctxMu.Unlock()
	if c := ix.sctx; c != nil && len(c.lens) == len(ix.seqs) {
		if c.w != ContextWeight || c.ref != ContextLenRef {
			ix.sctx = newSessionCtx(c.prev, c.next, c.lens)
		}
		return ix.sctx, nil
	}
	ix.mu.Lock()
	recs := ix.recs
	ix.mu.Unlock()
	// The saved table is current unless this writer added documents since
	// it opened; a writer can rebuild it from its records.
	if recs == nil || !ix.dirty {
		prev, next, lens, err := readContext(filepath.Join(ix.dir, contextFile), len(ix.seqs))
		if err == nil {
			ix.sctx = newSessionCtx(prev, next, lens)
			return ix.sctx, nil
		}
		if recs == nil {
			return nil, fmt.Errorf("%s: session context: %v: %w", ix.dir, err, ErrCorrupt)
		}
	}
	ix.sctx = newSessionCtx(neighbours(recs))
	return ix.sctx, nil
}

// writeContext saves the neighbour table beside the document table.
func (ix *Index) writeContext() error {
	prev, next, lens := neighbours(ix.recs)
	n := len(lens)
	b := make([]byte, 16, 16+12*n)
	copy(b, contextMagic)
	binary.LittleEndian.PutUint32(b[8:], uint32(n))
	for i := 0; i < n; i++ {
		b = binary.LittleEndian.AppendUint32(b, uint32(prev[i]))
		b = binary.LittleEndian.AppendUint32(b, uint32(next[i]))
		b = binary.LittleEndian.AppendUint32(b, uint32(lens[i]))
	}
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[16:], crcTable))
	path := filepath.Join(ix.dir, contextFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write session context: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write session context: %w", err)
	}
	return nil
}

func readContext(path string, n int) (prev, next, lens []int32, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(b) != 16+12*n || string(b[:8]) != contextMagic || int(binary.LittleEndian.Uint32(b[8:])) != n {
		return nil, nil, nil, fmt.Errorf("%d bytes, not a table of %d rows", len(b), n)
	}
	if crc32.Checksum(b[16:], crcTable) != binary.LittleEndian.Uint32(b[12:]) {
		return nil, nil, nil, errors.New("checksum mismatch")
	}
	prev, next, lens = make([]int32, n), make([]int32, n), make([]int32, n)
	p := 16
	for i := 0; i < n; i++ {
		prev[i] = int32(binary.LittleEndian.Uint32(b[p:]))
		next[i] = int32(binary.LittleEndian.Uint32(b[p+4:]))
		lens[i] = int32(binary.LittleEndian.Uint32(b[p+8:]))
		p += 12
		if prev[i] < -1 || int(prev[i]) >= n || next[i] < -1 || int(next[i]) >= n || lens[i] < 0 {
			return nil, nil, nil, fmt.Errorf("row %d out of range", i)
		}
	}
	return prev, next, lens, nil
}

// sessionBM25Layer ranks dedup groups by BM25F of the query over each
// exchange's verbatim plus its session neighbours' (see ModeSessionBM25).
func (ix *Index) sessionBM25Layer(ctx context.Context, text string, allowed func(int32) bool, limit int) ([]cand, error) {
	terms := queryTerms(text)
	n := len(ix.seqs)
	if len(terms) == 0 || n == 0 {
		return nil, nil
	}
	sc, err := ix.ensureContext()
	if err != nil {
		return nil, err
	}
	if sc.avgdl == 0 {
		return nil, nil
	}
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cache, release := ix.rowCacheFor(r)
	defer release()
	scores := make([]float64, n)
	tf := make([]float64, n) // f'(t, row) of the current term
	var touched, eff []int32
	seen := make([]bool, n)
	for _, t := range terms {
		tfr, err := r.TermFieldReader(ctx, []byte(t), fieldVerbatim, true, false, false)
		if err != nil {
			return nil, fmt.Errorf("postings of %q: %w", t, err)
		}
		eff = eff[:0]
		add := func(row int32, f float64) {
			if tf[row] == 0 {
				eff = append(eff, row)
			}
			tf[row] += f
		}
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
			row, err := ix.rowOf(r, cache, d.ID.Value())
			if err != nil {
				tfr.Close()
				return nil, err
			}
			if row >= 0 {
				f := float64(d.Freq)
				add(row, f)
				if p := sc.prev[row]; p >= 0 {
					add(p, sc.weight[p]*f)
				}
				if q := sc.next[row]; q >= 0 {
					add(q, sc.weight[q]*f)
				}
			}
			tfd = d
		}
		tfr.Close()
		if len(eff) == 0 {
			continue
		}
		df := float64(len(eff))
		idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
		for _, row := range eff {
			f := tf[row]
			tf[row] = 0
			if !seen[row] {
				seen[row] = true
				touched = append(touched, row)
			}
			scores[row] += idf * f * (BM25K1 + 1) / (f + BM25K1*(1-BM25B+BM25B*sc.dl[row]/sc.avgdl))
		}
	}
	cs := make([]cand, 0, len(touched))
	for _, row := range touched {
		if allowed == nil || allowed(row) {
			cs = append(cs, cand{row: row, score: scores[row]})
		}
	}
	return ix.topGroups(cs, limit), nil
}

// dateTerms are words of an exchange's own date (month name and year, in
// the exchange's zone) that the verbatim field also indexes, so that "what
// did we decide about the cache in March 2026" finds the exchanges of that
// month. The day of the month is left out: a bare number would match
// version numbers and counts in queries ("Node 18").
func dateTerms(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("January 2006")
}
