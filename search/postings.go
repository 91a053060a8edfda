package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"
)

// postingReader reads a term's postings for the session layer. On a scorch
// snapshot it walks each segment's postings iterator itself instead of
// Bleve's TermFieldReader, which wraps every posting in a TermFieldDoc
// (internal id bytes, norm, bookkeeping of bytes read): at 100,000
// exchanges that wrapper was half of the time spent reading postings
// (docs/BENCHMARKS.md, "Search at 100,000: postings read directly").
//
// The postings come in the TermFieldReader's order (segments in the
// snapshot's order, documents ascending within a segment) with the same
// frequencies and norms, so every score is summed in the same order and
// is the same float: TestDirectPostingsMatchTermFieldReader compares the two
// readers posting by posting.
type postingReader struct {
	ix    *Index
	r     bleveindex.IndexReader
	cache map[uint64]int32

	direct bool // r is a scorch snapshot whose segments are read directly
	segs   []*scorch.SegmentSnapshot
	offs   []uint64 // the first internal id of each segment
	pls    []segment.PostingsList
	its    []segment.PostingsIterator // nil where bulk reads the list

	// bulk reads a zap list in batches of bd/bf/bn (see postings).
	bulk   zap.BulkPostings
	bd     [256]uint32
	bf, bn [256]uint64
	lens   [1024]float64                       // fieldLen by a norm's stored bits (0: not yet)
	dicts  map[string][]segment.TermDictionary // by field, a segment's each

	// A scan (start, next): the segment read, or whole when the postings
	// were read at once into it (a list bulk cannot read).
	scanSeg             int
	scanField, scanTerm string
	whole               []rowFreq
	wholeScan           bool
	batch               [256]rowFreq
	pairs               [256]zap.Pair // NextPairs' batch, turned into rowFreqs in place
	cardBatch           [256]cardPosting
	// rowsOK: per segment, 0 not checked yet, 1 every internal id of it
	// maps to a row through the row map, 2 not, 3 every id maps to a row
	// and rowRuns[i] tells which (allRows, runs).
	rowsOK  []int8
	rowRuns [][]rowRun

	// building: the scan's postings, gathered for the index's cache
	// (postcache.go) and kept there when the scan ends; nil when the
	// scan is not one to keep. cards: the postings startNorm's scan
	// takes from the cache, given by nextNorm's first call.
	building *postingEntry
	cards    []cardPosting
	cardsHit bool
}

// rowRun says that the documents start to end-1 of a segment are the rows
// start+delta to end-1+delta.
type rowRun struct {
	start, end uint32
	delta      int32
}

// maxRowRuns is the most runs a segment's rows are kept as: a segment of
// an index written in row order is a few runs (one per segment merged into
// it; 23 breaks in the 1,000,000 exchanges' 18 segments).
const maxRowRuns = 1024

func newPostingReader(ix *Index, r bleveindex.IndexReader, cache map[uint64]int32) *postingReader {
	p := &postingReader{ix: ix, r: r, cache: cache}
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok || disableDirectPostings {
		return p
	}
	p.segs = snap.Segments()
	p.offs = make([]uint64, len(p.segs))
	var off uint64
	for i, s := range p.segs {
		// A segment whose field mappings were updated in place is read
		// through Bleve, which knows what such an update hides.
		if u, ok := s.Segment().(segment.UpdatableSegment); ok && len(u.GetUpdatedFields()) > 0 {
			return p
		}
		// Internal ids number every document of every segment, deleted
		// ones included (scorch's offsets).
		p.offs[i] = off
		off += s.Segment().Count()
	}
	p.pls = make([]segment.PostingsList, len(p.segs))
	p.its = make([]segment.PostingsIterator, len(p.segs))
	p.direct = true
	return p
}

// disableDirectPostings makes every postingReader go through Bleve's
// TermFieldReader (tests compare the two).
var disableDirectPostings = false

// disableRowRuns makes every postingReader read rows from the row map
// (tests compare).
var disableRowRuns = false

// disablePairs makes scans read zap's lists through Next and rowsOf, as
// before NextPairs (tests compare).
var disablePairs = false

// disablePostingCache makes every postingReader decode its lists, kept
// or not (tests compare).
var disablePostingCache = false

// disableBulkPostings makes every postingReader read zap's lists through
// their PostingsIterator instead of zap.BulkPostings (tests compare the
// two).
var disableBulkPostings = false

// open opens term's postings in field in every segment and returns how
// many there are (deleted documents aside).
func (p *postingReader) open(field, term string, norms bool) (int, error) {
	return p.lists(field, term, true, norms)
}

// count is open without the iterators: how many postings term has in field.
func (p *postingReader) count(field, term string) (int, error) {
	return p.lists(field, term, false, false)
}

// lists opens term's postings lists in field in every segment, and their
// iterators when iterate.
func (p *postingReader) lists(field, term string, iterate, norms bool) (int, error) {
	ds, err := p.dictionaries(field)
	if err != nil {
		return 0, fmt.Errorf("postings of %q in %s: %w", term, field, err)
	}
	n := 0
	for i, s := range p.segs {
		pl, err := ds[i].PostingsList([]byte(term), s.Deleted(), p.pls[i])
		if err != nil {
			return 0, fmt.Errorf("postings of %q in %s: %w", term, field, err)
		}
		p.pls[i] = pl
		if iterate {
			if _, ok := pl.(*zap.PostingsList); ok && !disableBulkPostings {
				p.its[i] = nil // read by bulk
			} else {
				p.its[i] = pl.Iterator(true, norms, false, p.its[i])
			}
		}
		n += int(pl.Count())
	}
	return n, nil
}

// dictionaries returns field's dictionary in every segment, opened once
// per reader: a query opens the same five fields for each of its terms
// (a segment's Dictionary builds a reader of its FST each time).
func (p *postingReader) dictionaries(field string) ([]segment.TermDictionary, error) {
	if ds, ok := p.dicts[field]; ok {
		return ds, nil
	}
	ds := make([]segment.TermDictionary, len(p.segs))
	for i, s := range p.segs {
		d, err := s.Segment().Dictionary(field)
		if err != nil {
			return nil, err
		}
		ds[i] = d
	}
	if p.dicts == nil {
		p.dicts = map[string][]segment.TermDictionary{}
	}
	p.dicts[field] = ds
	return ds, nil
}

// reserve returns buf with room for n more elements, grown at most once:
// a buffer doubled while it is filled touches twice the memory, in fresh
// pages (at 100,000 exchanges the growing buffers were a third of a
// search's page faults).
func reserve[T any](buf []T, n int) []T {
	if cap(buf)-len(buf) >= n {
		return buf
	}
	nb := make([]T, len(buf), len(buf)+n)
	copy(nb, buf)
	return nb
}

// row maps an internal id to its table row, -1 for none.
func (p *postingReader) row(iid uint64) (int32, error) {
	if m := p.ix.rowMap; iid < uint64(len(m)) {
		return m[iid], nil
	}
	return p.ix.rowOf(p.r, p.cache, iid)
}

// postings appends the row and frequency of each posting of term in field
// to buf.
func (p *postingReader) postings(ctx context.Context, field, term string, buf []rowFreq) ([]rowFreq, error) {
	if !p.direct {
		return p.ix.postings(ctx, p.r, p.cache, field, term, buf)
	}
	n, err := p.open(field, term, false)
	if err != nil {
		return buf, err
	}
	buf = reserve(buf, n)
	for i, it := range p.its {
		off := p.offs[i]
		if it == nil {
			// zap's list in batches (zap.BulkPostings): the iterator's
			// postings in its order, without its per-posting calls.
			if _, err := p.bulk.Reset(p.pls[i]); err != nil {
				return buf, fmt.Errorf("postings of %q in %s: %w", term, field, err)
			}
			for {
				k, err := p.bulk.Next(p.bd[:], p.bf[:], p.bn[:])
				if err != nil {
					return buf, fmt.Errorf("postings of %q in %s: %w", term, field, err)
				}
				if k == 0 {
					break
				}
				if buf, err = p.rowsOf(buf, k, i, field, term); err != nil {
					return buf, err
				}
			}
			continue
		}
		for {
			d, err := it.Next()
			if err != nil {
				return buf, fmt.Errorf("postings of %q in %s: %w", term, field, err)
			}
			if d == nil {
				break
			}
			row, err := p.row(d.Number() + off)
			if err != nil {
				return buf, err
			}
			if row >= 0 {
				f, ok := freq32(d.Frequency())
				if !ok {
					return buf, fmt.Errorf("postings of %q in %s: %w", term, field, errFreq)
				}
				buf = append(buf, rowFreq{row, f})
			}
		}
	}
	return buf, nil
}

// start begins a scan of term's postings in field: next then returns them
// batch by batch, in postings' order, without a buffer of them all (at
// 1,000,000 exchanges a term's buffer was up to 6.7 MB written and read
// again per field). Where a list is not zap's it reads them all at once
// into buf, as postings does, and next returns that.
func (p *postingReader) start(ctx context.Context, field, term string, buf []rowFreq) error {
	p.drop()
	p.scanSeg, p.scanField, p.scanTerm, p.wholeScan, p.cardsHit = 0, field, term, false, false
	if p.direct {
		pc := p.ix.pcache.Load()
		key := postingKey{field: field, term: term}
		if pc != nil && !disablePostingCache {
			if e := pc.get(p.segs, key); e != nil {
				p.whole, p.wholeScan = e.rows, true
				return nil
			}
		}
		n, err := p.open(field, term, false)
		if err != nil {
			return err
		}
		bulk := true
		for _, it := range p.its {
			bulk = bulk && it == nil
		}
		if bulk {
			if pc != nil && !disablePostingCache && pc.admit(key, n, int64(unsafe.Sizeof(rowFreq{}))) {
				p.building = newRowsEntry(key, n)
			}
			if len(p.pls) > 0 {
				if _, err := p.bulk.Reset(p.pls[0]); err != nil {
					p.drop()
					return fmt.Errorf("postings of %q in %s: %w", term, field, err)
				}
			}
			return nil
		}
	}
	var err error
	p.whole, err = p.postings(ctx, field, term, buf[:0])
	p.wholeScan = true
	return err
}

// next returns the scan's next postings (rows ≥ 0), none at its end. The
// slice is the reader's until the next call.
func (p *postingReader) next() ([]rowFreq, error) {
	if p.wholeScan {
		ps := p.whole
		p.whole = p.whole[:0]
		return ps, nil
	}
	for {
		k, err := p.bulkNextOf(!disablePairs)
		if err != nil || k == 0 {
			p.keep(err)
			return nil, err
		}
		var ps []rowFreq
		if disablePairs {
			ps, err = p.rowsOf(p.batch[:0], k, p.scanSeg, p.scanField, p.scanTerm)
		} else {
			ps, err = p.rowsOfPairs(k, p.scanSeg)
		}
		if err != nil {
			p.drop()
			return ps, err
		}
		if len(ps) > 0 {
			if e := p.building; e != nil {
				if len(e.rows)+len(ps) > cap(e.rows) {
					p.drop() // more than the lists counted: not kept
				} else {
					e.rows = append(e.rows, ps...)
				}
			}
			return ps, nil
		}
	}
}

// keep puts the scan's gathered postings in the index's cache when the
// scan ended without err.
func (p *postingReader) keep(err error) {
	if e := p.building; e != nil && err == nil {
		if pc := p.ix.pcache.Load(); pc != nil && pc.put(p.segs, e) {
			p.building = nil
		}
	}
	p.drop()
}

// drop lets go of the postings gathered for the cache, if any (a scan
// that ended early, or one the cache did not take).
func (p *postingReader) drop() {
	if p.building != nil {
		p.building.free()
		p.building = nil
	}
}

// rowsOf appends to dst the rows (≥ 0) and frequencies of the k postings
// bulk decoded into bd and bf, of segment i.
func (p *postingReader) rowsOf(dst []rowFreq, k int, i int, field, term string) ([]rowFreq, error) {
	if runs := p.runs(i); runs != nil {
		// The row the map holds for document d, from its run.
		run := runs[0]
		for j, d := range p.bd[:k] {
			if d < run.start || d >= run.end {
				run = runOf(runs, d)
			}
			f, ok := freq32(p.bf[j])
			if !ok {
				return dst, fmt.Errorf("postings of %q in %s: %w", term, field, errFreq)
			}
			dst = append(dst, rowFreq{int32(d) + run.delta, f})
		}
		return dst, nil
	}
	m, off := p.ix.rowMap, p.offs[i]
	for j, d := range p.bd[:k] {
		var row int32
		if iid := uint64(d) + off; iid < uint64(len(m)) {
			row = m[iid]
		} else {
			var err error
			if row, err = p.row(iid); err != nil {
				return dst, err
			}
		}
		if row >= 0 {
			f, ok := freq32(p.bf[j])
			if !ok {
				return dst, fmt.Errorf("postings of %q in %s: %w", term, field, errFreq)
			}
			dst = append(dst, rowFreq{row, f})
		}
	}
	return dst, nil
}

// bulkNext decodes the scan's next batch into bd, bf and bn and returns
// its size, going on to the next segment's list where one ends; 0 at the
// end of the last. The batch is segment p.scanSeg's.
func (p *postingReader) bulkNext() (int, error) { return p.bulkNextOf(false) }

// bulkNextOf is bulkNext, or, when pairs, the same through zap's
// NextPairs into pairs.
func (p *postingReader) bulkNextOf(pairs bool) (int, error) {
	for p.scanSeg < len(p.pls) {
		var k int
		var err error
		if pairs {
			if k, err = p.bulk.NextPairs(p.pairs[:]); errors.Is(err, zap.ErrPairFreq) {
				err = errFreq
			}
		} else {
			k, err = p.bulk.Next(p.bd[:], p.bf[:], p.bn[:])
		}
		if err != nil {
			return 0, fmt.Errorf("postings of %q in %s: %w", p.scanTerm, p.scanField, err)
		}
		if k > 0 {
			return k, nil
		}
		if p.scanSeg++; p.scanSeg < len(p.pls) {
			if _, err := p.bulk.Reset(p.pls[p.scanSeg]); err != nil {
				return 0, fmt.Errorf("postings of %q in %s: %w", p.scanTerm, p.scanField, err)
			}
		}
	}
	return 0, nil
}

// rowsOfPairs turns the k pairs bulkNextOf(true) decoded, of segment i, into
// postings (rows ≥ 0) in place: a pair and a rowFreq are the same 8 bytes,
// the document's number becoming its row. A batch within one run of rows
// (nearly all, in an index written in row order) is a single addition per
// posting.
func (p *postingReader) rowsOfPairs(k int, i int) ([]rowFreq, error) {
	pairs := p.pairs[:k]
	ps := unsafe.Slice((*rowFreq)(unsafe.Pointer(&p.pairs[0])), k)
	if runs := p.runs(i); runs != nil {
		run := runs[0]
		first, last := pairs[0].Doc, pairs[k-1].Doc // ascending
		if first < run.start || first >= run.end {
			run = runOf(runs, first)
		}
		if last < run.end {
			for j := range pairs {
				ps[j].row = int32(pairs[j].Doc) + run.delta
			}
			return ps, nil
		}
		for j := range pairs {
			d := pairs[j].Doc
			if d < run.start || d >= run.end {
				run = runOf(runs, d)
			}
			ps[j].row = int32(d) + run.delta
		}
		return ps, nil
	}
	off, w := p.offs[i], 0
	for j := range pairs {
		d, f := pairs[j].Doc, pairs[j].Freq
		row, err := p.row(uint64(d) + off)
		if err != nil {
			return ps[:w], err
		}
		if row >= 0 {
			ps[w] = rowFreq{row, f}
			w++
		}
	}
	return ps[:w], nil
}

// allRows reports whether every internal id of segment i, deleted ones
// included, maps to a row ≥ 0 through the row map: then each of its
// postings is one of the rows, and a list's Count is how many postings
// the scan gives.
func (p *postingReader) allRows(i int) bool {
	v := p.checkRows(i)
	return v == 1 || v == 3
}

// runs returns segment i's documents as runs of consecutive rows when
// every internal id of it, deleted ones included, maps to a row and they
// make few runs (nil otherwise): then a posting's row is worked out
// without a load from the row map. An index written in row order (a
// reindex, a memory added to in order) has such segments; at 1,000,000
// exchanges the map is 4 MB, read once more by every field of every query
// term.
func (p *postingReader) runs(i int) []rowRun {
	if p.checkRows(i) == 3 && !disableRowRuns {
		return p.rowRuns[i]
	}
	return nil
}

// runOf is the run of runs that holds document d (runs cover the
// segment's documents in order, and d is one of them).
func runOf(runs []rowRun, d uint32) rowRun {
	k, _ := slices.BinarySearchFunc(runs, d, func(r rowRun, d uint32) int {
		if r.end <= d {
			return -1
		}
		if r.start > d {
			return 1
		}
		return 0
	})
	return runs[k]
}

// checkRows is rowsOK[i], worked out on first use: one pass over the
// segment's part of the row map.
func (p *postingReader) checkRows(i int) int8 {
	if p.rowsOK == nil {
		p.rowsOK, p.rowRuns = make([]int8, len(p.segs)), make([][]rowRun, len(p.segs))
	}
	if v := p.rowsOK[i]; v != 0 {
		return v
	}
	m, off, n := p.ix.rowMap, p.offs[i], p.segs[i].Segment().Count()
	v := int8(2)
	if off+n <= uint64(len(m)) {
		p.rowRuns[i], v = p.ix.rowRunsAt(off, n)
	}
	p.rowsOK[i] = v
	return v
}

// rowRunsAt is rowRunsOf of the row map's entries off to off+n-1, worked
// out once per index: the map never changes once loaded (ensureRowMap), so
// neither do they. Each search's readers (one per worker) went over the
// whole map again, 4 MB at 1,000,000 exchanges.
func (ix *Index) rowRunsAt(off, n uint64) ([]rowRun, int8) {
	k := [2]uint64{off, n}
	ix.runsMu.Lock()
	defer ix.runsMu.Unlock()
	if e, ok := ix.runsOf[k]; ok {
		return e.runs, e.v
	}
	runs, v := rowRunsOf(ix.rowMap[off : off+n])
	if ix.runsOf == nil {
		ix.runsOf = map[[2]uint64]segRuns{}
	}
	ix.runsOf[k] = segRuns{runs, v}
	return runs, v
}

// segRuns is a segment's runs and state (rowRunsOf).
type segRuns struct {
	runs []rowRun
	v    int8
}

// rowRunsOf is a segment's rows (m: the row map's entries of its
// documents) as runs of consecutive rows, and what checkRows records: 3
// every document maps to a row and they make at most maxRowRuns runs, 1
// every document maps to a row (more runs, or none), 2 some does not.
func rowRunsOf(m []int32) ([]rowRun, int8) {
	if len(m) >= 1<<31 {
		return nil, 2 // more documents than rows can number
	}
	var runs []rowRun
	many := false
	prev := int32(-2) // no row before the first: m[0] starts a run
	for j, r := range m {
		if r < 0 {
			return nil, 2
		}
		if r-1 == prev && !many {
			// the next row of the last run (r ≥ 1, so r-1 does not wrap)
			runs[len(runs)-1].end++
			prev = r
			continue
		}
		prev = r
		// 0 ≤ r, j < 2^31: the delta fits, and so does the row it gives.
		delta := int32(int64(r) - int64(j))
		if len(runs) == maxRowRuns {
			many = true
			runs = runs[:0]
		}
		if many {
			continue
		}
		runs = append(runs, rowRun{uint32(j), uint32(j) + 1, delta})
	}
	if many || len(runs) == 0 {
		return nil, 1
	}
	return runs, 3
}

// startNorm begins a scan of term's postings in field with their lengths
// (nextNorm) when it can tell how many there are before reading them:
// every list zap's, read in bulk, in segments whose ids all map to rows.
// It returns that count, and ok false (nothing started) otherwise.
func (p *postingReader) startNorm(field, term string) (n int, ok bool, err error) {
	if !p.direct {
		return 0, false, nil
	}
	p.drop()
	p.cardsHit = false
	pc := p.ix.pcache.Load()
	key := postingKey{field: field, term: term, norm: true}
	if pc != nil && !disablePostingCache {
		if e := pc.get(p.segs, key); e != nil {
			p.scanField, p.scanTerm, p.wholeScan = field, term, false
			p.cards, p.cardsHit = e.cards, true
			return e.n, true, nil
		}
	}
	if n, err = p.open(field, term, true); err != nil {
		return 0, false, err
	}
	for i, it := range p.its {
		if it != nil || p.pls[i].Count() > 0 && !p.allRows(i) {
			return 0, false, nil
		}
	}
	p.scanSeg, p.scanField, p.scanTerm, p.wholeScan = 0, field, term, false
	if pc != nil && !disablePostingCache && pc.admit(key, n, int64(unsafe.Sizeof(cardPosting{}))) {
		p.building = newCardsEntry(key, n)
	}
	if len(p.pls) > 0 {
		if _, err := p.bulk.Reset(p.pls[0]); err != nil {
			p.drop()
			return 0, false, fmt.Errorf("postings of %q in %s: %w", term, field, err)
		}
	}
	return n, true, nil
}

// nextNorm is next for a scan begun by startNorm: the postings with their
// lengths, as normPostings gives them.
func (p *postingReader) nextNorm() ([]cardPosting, error) {
	if p.cardsHit {
		ps := p.cards
		p.cards = nil
		return ps, nil
	}
	m := p.ix.rowMap
	for {
		k, err := p.bulkNext()
		if err != nil || k == 0 {
			p.keep(err)
			return nil, err
		}
		off, w := p.offs[p.scanSeg], 0
		runs := p.runs(p.scanSeg)
		var run rowRun
		if runs != nil {
			run = runs[0]
		}
		for j, d := range p.bd[:k] {
			var row int32
			if runs != nil {
				if d < run.start || d >= run.end {
					run = runOf(runs, d)
				}
				row = int32(d) + run.delta // as the map says (runs)
			} else {
				row = m[uint64(d)+off] // allRows: in the map, ≥ 0
			}
			l := p.lenOfBits(p.bn[j])
			f, ok := freq32(p.bf[j])
			if !ok {
				p.drop()
				return nil, fmt.Errorf("postings of %q in %s: %w", p.scanTerm, p.scanField, errFreq)
			}
			p.cardBatch[w] = cardPosting{row, f, l}
			w++
		}
		if w > 0 {
			if e := p.building; e != nil {
				if len(e.cards)+w > cap(e.cards) {
					p.drop() // more than the lists counted: not kept
				} else {
					e.cards = append(e.cards, p.cardBatch[:w]...)
				}
			}
			return p.cardBatch[:w], nil
		}
	}
}

// lenOfBits is fieldLen of the norm whose stored bits are bits, remembered
// for short fields as fieldLen(d.Norm()) is. Small enough to be inlined in
// the scan loops; the first time given bits come, lenOfNewBits.
func (p *postingReader) lenOfBits(bits uint64) float64 {
	if bits < uint64(len(p.lens)) {
		if l := p.lens[bits]; l != 0 {
			return l
		}
	}
	return p.lenOfNewBits(bits)
}

// lenOfNewBits works lenOfBits out (a length of 0 is worked out again).
func (p *postingReader) lenOfNewBits(bits uint64) float64 {
	l := fieldLen(zap.NormOfBits(bits))
	if bits < uint64(len(p.lens)) {
		p.lens[bits] = l
	}
	return l
}

// normBits is a posting that tells its norm's stored bits (zap's do).
type normBits interface{ NormUint64() uint64 }

// fieldLen is fieldLen(d.Norm()), remembered by the norm's stored bits for
// short fields: Norm is a square root and a division, fieldLen another
// division, per posting (3.6 % of the warm search process at 100,000
// exchanges). The first posting with given bits computes it through Norm
// itself, so a remembered length is the very float Norm gives for those
// bits (zap's Norm depends on nothing else).
func (p *postingReader) fieldLen(d segment.Posting) float64 {
	nb, ok := d.(normBits)
	if !ok {
		return fieldLen(d.Norm())
	}
	bits := nb.NormUint64()
	if bits >= uint64(len(p.lens)) {
		return fieldLen(d.Norm())
	}
	l := p.lens[bits]
	if l == 0 { // not computed yet (or a length of 0: computed again)
		l = fieldLen(d.Norm())
		p.lens[bits] = l
	}
	return l
}

// normPostings appends each posting of term in field with its length
// (fieldLen of its norm).
func (p *postingReader) normPostings(ctx context.Context, field, term string, buf []cardPosting) ([]cardPosting, error) {
	if !p.direct {
		return p.ix.normPostings(ctx, p.r, p.cache, field, term, buf)
	}
	n, err := p.open(field, term, true)
	if err != nil {
		return buf, err
	}
	buf = reserve(buf, n)
	m := p.ix.rowMap
	for i, it := range p.its {
		off := p.offs[i]
		if it == nil {
			// postings' batches, with the length as in fieldLen.
			if _, err := p.bulk.Reset(p.pls[i]); err != nil {
				return buf, fmt.Errorf("postings of %q in %s: %w", term, field, err)
			}
			for {
				k, err := p.bulk.Next(p.bd[:], p.bf[:], p.bn[:])
				if err != nil {
					return buf, fmt.Errorf("postings of %q in %s: %w", term, field, err)
				}
				if k == 0 {
					break
				}
				for j, d := range p.bd[:k] {
					var row int32
					if iid := uint64(d) + off; iid < uint64(len(m)) {
						row = m[iid]
					} else if row, err = p.row(iid); err != nil {
						return buf, err
					}
					if row < 0 {
						continue
					}
					l := p.lenOfBits(p.bn[j])
					f, ok := freq32(p.bf[j])
					if !ok {
						return buf, fmt.Errorf("postings of %q in %s: %w", term, field, errFreq)
					}
					buf = append(buf, cardPosting{row, f, l})
				}
			}
			continue
		}
		for {
			d, err := it.Next()
			if err != nil {
				return buf, fmt.Errorf("postings of %q in %s: %w", term, field, err)
			}
			if d == nil {
				break
			}
			row, err := p.row(d.Number() + off)
			if err != nil {
				return buf, err
			}
			if row >= 0 {
				f, ok := freq32(d.Frequency())
				if !ok {
					return buf, fmt.Errorf("postings of %q in %s: %w", term, field, errFreq)
				}
				buf = append(buf, cardPosting{row, f, p.fieldLen(d)})
			}
		}
	}
	return buf, nil
}

// normPostings is postingReader.normPostings through Bleve's
// TermFieldReader.
func (ix *Index) normPostings(ctx context.Context, r bleveindex.IndexReader, cache map[uint64]int32, field, term string, buf []cardPosting) ([]cardPosting, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), field, true, true, false)
	if err != nil {
		return buf, fmt.Errorf("postings of %q in %s: %w", term, field, err)
	}
	defer tfr.Close()
	tfd := &bleveindex.TermFieldDoc{}
	for {
		d, err := tfr.Next(tfd)
		if err != nil {
			return buf, fmt.Errorf("postings of %q in %s: %w", term, field, err)
		}
		if d == nil {
			return buf, nil
		}
		row, err := ix.rowOf(r, cache, d.ID.Value())
		if err != nil {
			return buf, err
		}
		if row >= 0 {
			f, ok := freq32(d.Freq)
			if !ok {
				return buf, fmt.Errorf("postings of %q in %s: %w", term, field, errFreq)
			}
			buf = append(buf, cardPosting{row, f, fieldLen(d.Norm)})
		}
		tfd = d
	}
}

// A zap.Pair is read as a rowFreq in place (rowsOfPairs).
var _ = [1]struct{}{}[unsafe.Sizeof(zap.Pair{})-unsafe.Sizeof(rowFreq{})]
var _ = [1]struct{}{}[unsafe.Offsetof(zap.Pair{}.Freq)-unsafe.Offsetof(rowFreq{}.freq)]
