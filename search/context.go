package search

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/gitmem/git-mem/internal/mapfile"
	"github.com/gitmem/git-mem/search/embed"
)

// ModeSessionBM25 is BM25 over the verbatim in which every exchange also
// carries words of its session neighbours (commit order). A conversation
// spreads one topic over several short exchanges ("and what did the kids
// make of it?" answers a question asked one exchange earlier); read alone,
// such an exchange lacks the words a later query uses. Three streams join
// the exchange's own words d:
//
//   - the whole previous and next exchange, at w(d) = ContextWeight·r(d);
//   - the next exchange's first turn (the reply to how d ended), again at
//     w(d), so at 2·w(d) in all;
//   - the previous exchange's last turn when it asks a question (its closing
//     paragraph has a '?'), at a(d) = AskedWeight·r(d): d opens with the
//     answer, and question and answer are one unit of talk.
//
// r(d) = ContextLenRef/(ContextLenRef+|d|), |d| being the exchange's whole
// length in terms (talk and tool output): a short conversational turn
// borrows context, a long self-contained coding exchange (hundreds of
// terms) next to none, so it ranks as plain BM25.
//
// The score is BM25F (Robertson et al. 2004) over the streams:
//
//	f'(t,d) = f(t,d) + w(d)·(f(t,prev) + f(t,next) + f(t,head(next))) + a(d)·f(t,asked(prev))
//	|d|'    = |d| + w(d)·(|prev| + |next| + |head(next)|) + a(d)·|asked(prev)|
//	df'(t)  = the exchanges with f'(t,d) > 0
//
// computed at query time from the postings of the verbatim, head and asked
// fields, so a new exchange changes its neighbour's context without
// re-indexing the neighbour, and the weights can change without a rebuild.
// The verbatim field holds the talk (turns, tool calls), which f and |·|
// above count; the tools' results are the output field and add
// OutputWeight × their own BM25, and the distilled card adds CardWeight ×
// its own.
// docs/bench/eval.md measures it.
const ModeSessionBM25 = "session-bm25"

// Session-context weights (measured on shared/eval, docs/bench/eval.md).
var (
	ContextWeight = 0.3
	AskedWeight   = 2.0
	ContextLenRef = 50.0
)

// OutputWeight scales the tools' results (Doc.Output) in the session layer.
// They are not part of the exchange's own stream above: file reads, logs
// and grep hits over other sessions are mostly other text, and counted as
// the exchange's words they outweighed what was said (coding sets: MRR
// 0.690 → 0.746 without them, docs/bench/eval.md). They score as a BM25 of
// their own, with their own idf and lengths, at this weight: a word seen
// only in a tool's output still finds the exchange, below the ones that
// talk about it.
var OutputWeight = 0.1

// Knobs of the session layer, measured on every eval set
// (docs/bench/eval.md, issue 15); 0 switches each off. Only CardWeight
// and TitleWeight are on: the others lost, or moved nothing, on some set.
var (
	// CardWeight adds CardWeight × a BM25 of the distilled card (its own
	// idf and lengths) to the session score: the card as a field. The card
	// names the ask in few words, where the verbatim spreads it over logs
	// and replies. Measured on all sets at once (docs/bench/eval.md,
	// 2026-12-01): 0.05 / 0.1 / 0.15 / 0.2 move our coding queries +0.009 /
	// +0.033 / +0.035 / +0.051, coding pooled +0.021 / +0.033 / +0.047 /
	// +0.049, LongMemEval +0.010 / +0.023 / +0.033 / +0.040 and pooled
	// +0.020 / +0.036 / +0.029 / +0.017, LoCoMo −0.003 / −0.009 / −0.009 /
	// −0.012 (inside its noise); 0.15 sits mid-plateau.
	CardWeight = 0.15
	// ExactBoost multiplies the score of an exchange whose own text (talk
	// or output) holds every term of the query by 1+ExactBoost, for queries
	// that exactQuery says ask for exact recall.
	ExactBoost = 0.0
	// ExactAll applies ExactBoost to every query of ExactMinTerms terms or
	// more, not only to those with an identifier or a quoted span.
	ExactAll      = false
	ExactMinTerms = 3
	// SessionWeight adds SessionWeight × the sum of the scores of the
	// exchange's session (itself included): session-level evidence.
	SessionWeight = 0.0
	// SessionMaxWeight adds SessionMaxWeight × the best score of the
	// exchange's session (sessions ranked, then exchanges).
	SessionMaxWeight = 0.0
	// RecencyWeight multiplies the score by 1 + RecencyWeight·(Seq/max Seq)
	// when the query asks for the latest state ("current", "now", "latest").
	RecencyWeight = 0.0
	// TitleWeight adds TitleWeight × a BM25 of the session's title (the
	// first turn of its first exchange) to every exchange of the session:
	// session-level evidence that tells a session about the thing from
	// long sessions about something else (LongMemEval's topical
	// distractors). An exchange without a session is its own session.
	// Measured on all sets (docs/bench/eval.md, 2026-12-02):
	// 0.05 / 0.1 / 0.2 / 0.4 move LongMemEval +0.003 / +0.006 / +0.007 /
	// +0.005 (R@10 0.935 → 0.957) and pooled +0.015 / +0.017 / +0.030 /
	// +0.036, coding pooled −0.008 / −0.006 / −0.011 / −0.035 and LoCoMo
	// 0 / −0.001 / −0.005 / −0.015 (inside the noise up to 0.2); 0.1.
	TitleWeight = 0.1
)

// SessionK1 and SessionB are BM25's k1 and b in the session layer's
// streams (verbatim-bm25 keeps BM25K1 and BM25B).
var (
	SessionK1 = 1.2
	SessionB  = 0.75
	// SessionLenPow bends the streams' length normalisation: an exchange
	// of |d|' = r·avg counts as r^SessionLenPow·avg, so an exchange much
	// longer than most (a long run of tool calls that meets every word
	// somewhere) weighs less than BM25's linear b says, and a short one
	// more. Measured on all sets (docs/bench/eval.md, 2026-12-08):
	// 1.1 / 1.2 / 1.25 / 1.3 move our coding queries +0.010 / +0.013 /
	// +0.018 / +0.018 (beyond the noise; conceptual +0.015 to +0.037),
	// no group beyond the noise the other way; 1.4 loses LongMemEval
	// (−0.020) and below 1 loses coding. 1.25, inside the plateau, is
	// two square roots (bend).
	SessionLenPow = 1.25
	// OutputB and TitleB, when ≥ 0, are b for the tools' output and the
	// title field instead of SessionB (measured, off: docs/bench/eval.md).
	OutputB = -1.0
	TitleB  = -1.0
)

// contextFile holds per row: the previous and next row of the same session
// (-1 for none) and the lengths in terms of the verbatim (talk), the head,
// the asked and the output field.
const (
	contextFile  = "context.bin"
	contextMagic = "GMCTX\x00\x00\x03"
	contextRow   = 24
)

// ctxRow is one row of the neighbour table.
type ctxRow struct {
	prev, next             int32
	verb, head, asked, out int32 // lengths in terms
}

// sessionCtx is the neighbour table with the stream weights and effective
// lengths for the current weights.
type sessionCtx struct {
	rows      []ctxRow
	file      *ctxFile  // the mapped file rows point into, if they do
	mem       *scratch  // the mapping of the per-row arrays below, if any
	w, a, ref float64   // ContextWeight, AskedWeight, ContextLenRef when built
	pow       float64   // SessionLenPow when built
	links     []link    // per row: rows[i].prev and .next, a third of a row
	weight    []float64 // w(d); a(d) is askedWeight(d)
	dl        []float64 // |d|'
	avgdl     float64
	// per row and mean: the output field's length and talk plus output
	// (plain BM25; the per-row lengths filled by plainLens on first use)
	outDL            []float64
	outAvg, plainAvg float64
	plainOnce        sync.Once
	plainDL          []float64

	titleOnce sync.Once
	titleDL   []float64 // per row: its session title's length (filled by titles)
	titleAvg  float64

	promptOnce sync.Once
	prompt     *promptLens // the rows' own first turns (rank_prompt.go)

	spanOnce sync.Once
	spans    []int32 // per row: its session's length when a run (titleSpans)
}

// link is a row's previous and next row in its session (-1 for none). The
// scorer reads them for every posting it adds to a row's neighbours; read
// from the 24-byte rows of the mapped table, each was a cache miss, a
// third of the scorer's time at 100,000 exchanges (docs/BENCHMARKS.md,
// session 15).
type link struct{ prev, next int32 }

// askedWeight is a(d) of row i, the weight of the question its previous
// exchange closed with: the same operations as newSessionCtx's, so the same
// float.
func (c *sessionCtx) askedWeight(i int32) float64 {
	r := c.rows[i]
	return c.a * (c.ref / (c.ref + float64(r.verb+r.out)))
}

// plainLens returns each row's talk plus output length (verbatim-bm25).
func (c *sessionCtx) plainLens() []float64 {
	c.plainOnce.Do(func() {
		c.plainDL = make([]float64, len(c.rows))
		for i, r := range c.rows {
			c.plainDL[i] = float64(r.verb + r.out)
		}
	})
	return c.plainDL
}

// titles fills titleDL (once per table).
func (c *sessionCtx) titles() {
	c.titleOnce.Do(func() {
		// titleDL has its room (zeros) from newSessionCtx.
		var total float64
		for i, r := range c.rows {
			if r.prev >= 0 {
				continue
			}
			l := float64(r.head)
			for j := int32(i); j >= 0; j = c.rows[j].next {
				c.titleDL[j] = l
				total += l
			}
		}
		if len(c.rows) > 0 {
			c.titleAvg = total / float64(len(c.rows))
		}
	})
}

// titleSpans returns, per row, the length of the session it starts when
// that session is a run of consecutive rows that link to each other both
// ways (each row's next is the row after it, whose previous is the row)
// with one title length, else 0 (a row that starts none included): what
// titleScore needs of a session without walking its links or reading each
// row's title length. Worked out once per table (titles first).
//
// Measured at 1,000,000 exchanges (docs/BENCHMARKS.md, session 26): the
// title part walked each session's chain and read each row's title
// length, ~4 ms of a sparse term's ~16; the sessions of the memories a
// reindex or an add in order writes are such runs.
func (c *sessionCtx) titleSpans() []int32 {
	c.titles()
	c.spanOnce.Do(func() {
		n := int32(len(c.links))
		spans := make([]int32, n)
		links, dl := c.links, c.titleDL
		for h := int32(0); h < n; h++ {
			if links[h].prev >= 0 {
				continue
			}
			j := h
			for {
				next := links[j].next
				if next < 0 {
					spans[h] = j - h + 1
					break
				}
				if next != j+1 || links[next].prev != j || dl[next] != dl[h] {
					break // not a run: titleScore walks it
				}
				j = next
			}
			h = j // the rows up to j link back to h: none starts a session
		}
		c.spans = spans
	})
	return c.spans
}

// neighbours links each row to the previous and next row of its session in
// Seq order. Exchanges without a session have no neighbours.
func neighbours(recs []docRec) []ctxRow {
	out := make([]ctxRow, len(recs))
	key := make([]int32, len(recs))
	keys := map[string]int32{}
	for i := range recs {
		r := &recs[i]
		out[i] = ctxRow{verb: r.VerbLen, head: r.HeadLen, asked: r.AskLen, out: r.OutLen}
		key[i] = sessionKey(keys, r.Session)
	}
	linkSessions(out, key, len(keys), func(i int32) int { return recs[i].Seq })
	return out
}

// neighbourRows is neighbours of the writer's rows, the loaded ones read
// from their scan while they are lazy (their sessions by dictionary number).
func (ix *Index) neighbourRows() []ctxRow {
	lz := ix.lazy
	if lz == nil {
		return neighbours(ix.recs)
	}
	n := len(ix.seqs)
	out := make([]ctxRow, n)
	key := make([]int32, n)
	keys := make(map[string]int32, len(lz.dict))
	for i, s := range lz.dict {
		keys[s] = int32(i)
	}
	for i := range lz.n {
		out[i] = lz.lens[i]
		if key[i] = int32(lz.sess[i]); lz.dict[lz.sess[i]] == "" {
			key[i] = -1
		}
	}
	for i := lz.n; i < n; i++ {
		r := &ix.recs[i-lz.n]
		out[i] = ctxRow{verb: r.VerbLen, head: r.HeadLen, asked: r.AskLen, out: r.OutLen}
		key[i] = sessionKey(keys, r.Session)
	}
	linkSessions(out, key, len(keys), func(i int32) int { return ix.seqs[i] })
	return out
}

// sessionKey numbers session s in keys (-1: no session).
func sessionKey(keys map[string]int32, s string) int32 {
	if s == "" {
		return -1
	}
	k, ok := keys[s]
	if !ok {
		k = int32(len(keys))
		keys[s] = k
	}
	return k
}

// linkSessions sets out's prev and next: the rows of one key (a session,
// numbered below n; -1: none) follow each other in (Seq, row) order. Which
// number a session has does not matter, only which rows share one; the
// rows are put in their sessions by counting (a sort of a million rows by
// session name was 0.6 s of a writer's flush) and each session is sorted
// by (Seq, row) only when its rows, in row order, are not already.
func linkSessions(out []ctxRow, key []int32, n int, seq func(int32) int) {
	for i := range out {
		out[i].prev, out[i].next = -1, -1
	}
	start := make([]int32, n+1)
	for _, k := range key {
		if k >= 0 {
			start[k+1]++
		}
	}
	for k := 1; k <= n; k++ {
		start[k] += start[k-1]
	}
	at := slices.Clone(start[:n])
	order := make([]int32, start[n])
	for i, k := range key {
		if k >= 0 {
			order[at[k]] = int32(i)
			at[k]++
		}
	}
	byTime := func(a, b int32) int { return cmp.Or(cmp.Compare(seq(a), seq(b)), cmp.Compare(a, b)) }
	for k := range n {
		g := order[start[k]:start[k+1]]
		if !slices.IsSortedFunc(g, byTime) {
			slices.SortFunc(g, byTime)
		}
		for i := 1; i < len(g); i++ {
			out[g[i-1]].next, out[g[i]].prev = g[i], g[i-1]
		}
	}
}

// newSessionCtx works out the stream weights and lengths of every row. Only
// what every session-bm25 query reads gets a per-row array: each is a
// fresh 8 bytes a row, paid in page faults by every search process (0.45
// ms at 100,000 exchanges); a(d) is worked out where it is used, the plain
// lengths on verbatim-bm25's first use.
//
// The arrays live in a mapping of their own in transparent huge pages (see
// scratch), unmapped when c is unreachable: from the heap they were ~800
// fresh 4 KB pages, each a page fault, in every search process at 100,000
// exchanges. titleDL's room is taken here too, filled by titles if a query
// needs it (untouched, it costs no memory). file is the mapped table rows
// point into (nil: rows of their own), kept mapped as long as c.
func newSessionCtx(rows []ctxRow, file *ctxFile) *sessionCtx {
	n := len(rows)
	mem := newScratch(4*n*int(unsafe.Sizeof(float64(0))) + n*int(unsafe.Sizeof(link{})) + 5*8)
	c := &sessionCtx{rows: rows, file: file, w: ContextWeight, a: AskedWeight, ref: ContextLenRef,
		weight: scratchSlice[float64](mem, n, n), dl: scratchSlice[float64](mem, n, n),
		outDL: scratchSlice[float64](mem, n, n), titleDL: scratchSlice[float64](mem, n, n),
		links: scratchSlice[link](mem, n, n)}
	if mem != nil {
		// Whoever reads the arrays holds c (a scorer holds its sc), so
		// nothing reads them after the unmapping.
		c.mem = mem
		runtime.AddCleanup(c, func(m *scratch) { m.release() }, mem)
	}
	var total, outTotal, plainTotal float64
	for i, r := range rows {
		c.outDL[i] = float64(r.out)
		outTotal += c.outDL[i]
		plainTotal += float64(r.verb + r.out)
		ref := ContextLenRef / (ContextLenRef + float64(r.verb+r.out))
		w, a := ContextWeight*ref, AskedWeight*ref
		d := float64(r.verb)
		if p := r.prev; p >= 0 {
			d += w*float64(rows[p].verb) + a*float64(rows[p].asked)
		}
		if q := r.next; q >= 0 {
			d += w * float64(rows[q].verb+rows[q].head)
		}
		c.weight[i], c.dl[i] = w, d
		c.links[i] = link{r.prev, r.next}
		total += d
	}
	if n > 0 {
		c.avgdl = total / float64(n)
		c.outAvg = outTotal / float64(n)
		c.plainAvg = plainTotal / float64(n)
	}
	c.pow = SessionLenPow
	if c.pow != 1 && c.avgdl > 0 {
		for i, d := range c.dl {
			c.dl[i] = c.avgdl * bend(d/c.avgdl, c.pow)
		}
	}
	return c
}

// bend is r^p; the default's 1.25 as r·√√r: math.Pow took 137 ms for
// 1,000,000 rows where two square roots take 7 ms, as much as the
// division (measured on this project's 2-core test machine, loaded).
func bend(r, p float64) float64 {
	if p == 1.25 {
		return r * math.Sqrt(math.Sqrt(r))
	}
	return math.Pow(r, p)
}

// ensureContext loads the saved neighbour table, or builds it from the
// records when this writer added documents since it opened (or the saved
// table is damaged and the records are at hand).
func (ix *Index) ensureContext() (*sessionCtx, error) {
	ix.ctxMu.Lock()
	defer ix.ctxMu.Unlock()
	ix.takeEarly()
	if c := ix.sctx; c != nil && len(c.rows) == len(ix.seqs) {
		if c.w != ContextWeight || c.a != AskedWeight || c.ref != ContextLenRef || c.pow != SessionLenPow {
			ix.sctx = newSessionCtx(c.rows, c.file)
		}
		return ix.sctx, nil
	}
	ix.mu.Lock()
	recs := ix.recs
	ix.mu.Unlock()
	// The saved table is current unless this writer added documents since
	// it opened; a writer can rebuild it from its records.
	if recs == nil || !ix.dirty {
		rows, f, err := mapContext(filepath.Join(ix.dir, contextFile), len(ix.seqs))
		if err == nil {
			if ix.readOnly {
				ix.sctx = ix.cachedSessionCtx(rows, f) // sessctx_cache.go
			} else {
				ix.sctx = newSessionCtx(rows, f)
			}
			return ix.sctx, nil
		}
		if recs == nil {
			return nil, fmt.Errorf("%s: session context: %v: %w", ix.dir, err, ErrCorrupt)
		}
	}
	ix.sctx = newSessionCtx(ix.neighbourRows(), nil)
	return ix.sctx, nil
}

// writeContext saves the neighbour table beside the document table.
func (ix *Index) writeContext() error {
	b := encodeContext(ix.neighbourRows())
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

// encodeContext is the file of the neighbour table: magic, row count,
// CRC-32C of the rows, then six little-endian int32 per row.
func encodeContext(rows []ctxRow) []byte {
	b := make([]byte, 16, 16+contextRow*len(rows))
	copy(b, contextMagic)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(rows)))
	for _, r := range rows {
		for _, v := range []int32{r.prev, r.next, r.verb, r.head, r.asked, r.out} {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
	}
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[16:], crcTable))
	return b
}

// readContext reads the neighbour table into memory of its own, every
// checksum and range verified (`git mem check`).
func readContext(path string, n int) ([]ctxRow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseContext(b, n, false)
}

// ctxFile keeps a mapped neighbour table mapped while a sessionCtx whose
// rows point into it is reachable (runtime.AddCleanup unmaps it after).
type ctxFile struct{ b []byte }

// mapContext maps the neighbour table and reads its rows in place: a search
// used to read the file into the heap and decode it into a second copy
// (2.4 MB each at 100,000 exchanges, 3.5 ms of a search's 6 ms of set-up,
// most of it page faults; docs/BENCHMARKS.md, session 13). The checksum and
// every row's range are still verified, so a damaged file is an error, never
// an index out of range. Writers replace the file by renaming, so a mapping
// never sees it change.
func mapContext(path string, n int) ([]ctxRow, *ctxFile, error) {
	b, unmap, err := mapfile.ReadOnly(path)
	if err != nil {
		return nil, nil, err
	}
	rows, err := parseContext(b, n, true)
	if err != nil {
		unmap()
		return nil, nil, err
	}
	f := &ctxFile{b: b}
	runtime.AddCleanup(f, func(unmap func()) { unmap() }, unmap)
	return rows, f, nil
}

// hostLittleEndian says whether the rows of a little-endian file can be read
// in place.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// ctxRow must be the file's row, field for field, to be read in place.
var _ [contextRow - unsafe.Sizeof(ctxRow{})]byte
var _ [unsafe.Sizeof(ctxRow{}) - contextRow]byte

// parseContext checks the table in b and returns its rows: slices of b
// itself when inPlace and the host's byte order and b's alignment allow
// (then b must outlive them), else decoded copies.
func parseContext(b []byte, n int, inPlace bool) ([]ctxRow, error) {
	if len(b) != 16+contextRow*n || string(b[:8]) != contextMagic || int(binary.LittleEndian.Uint32(b[8:])) != n {
		return nil, fmt.Errorf("%d bytes, not a table of %d rows", len(b), n)
	}
	var rows []ctxRow
	if n > 0 && inPlace && hostLittleEndian && uintptr(unsafe.Pointer(&b[16]))%unsafe.Alignof(ctxRow{}) == 0 {
		rows = unsafe.Slice((*ctxRow)(unsafe.Pointer(&b[16])), n)
	} else {
		rows = make([]ctxRow, n)
		p := 16
		for i := range rows {
			var v [6]int32
			for j := range v {
				v[j] = int32(binary.LittleEndian.Uint32(b[p:]))
				p += 4
			}
			rows[i] = ctxRow{prev: v[0], next: v[1], verb: v[2], head: v[3], asked: v[4], out: v[5]}
		}
	}
	// The checksum and the rows' ranges in one pass over the file, a chunk
	// at a time (checkChunk): a mismatch is reported before a row out of
	// range, as when the whole checksum came first.
	crc, bad := uint32(0), -1
	for lo := 0; lo < n; lo += ctxChunkRows {
		hi := min(lo+ctxChunkRows, n)
		crc = crc32.Update(crc, crcTable, b[16+contextRow*lo:16+contextRow*hi])
		if bad < 0 {
			bad = badCtxRow(rows[lo:hi], n, lo)
		}
	}
	if crc != binary.LittleEndian.Uint32(b[12:]) {
		return nil, errors.New("checksum mismatch")
	}
	if bad >= 0 {
		return nil, fmt.Errorf("row %d out of range", bad)
	}
	return rows, nil
}

// checkChunk is how many bytes of a table a fused pass checksums before
// it checks the rows in them: they are then still in the core's cache.
// Checked after the checksum of the whole file, the rows were read from
// memory a second time: at 1,000,000 exchanges context.bin is 24 MB and
// sessctx.bin 40 MB, and the second pass over them was ~6 % of a cold
// search's CPU (docs/BENCHMARKS.md, session 19).
const checkChunk = 64 << 10

// ctxChunkRows is how many neighbour table rows a chunk holds.
const ctxChunkRows = checkChunk / contextRow

// badCtxRow is the first row of rows (numbered from first) out of range
// for a table of n rows, or -1.
//
// Every row is checked without a branch first (ctxRowsIn), and only a
// chunk that holds a bad row is walked row by row: the walk took ~4 ms of
// a cold search at 1,000,000 exchanges on the early context's path, the
// longer of the open's two (docs/BENCHMARKS.md, session 26), against ~2
// for the check without branches (a micro-benchmark of 1,000,000 rows in
// 64 KB chunks, each in the cache as after its checksum).
func badCtxRow(rows []ctxRow, n, first int) int {
	if 0 <= n && n < 1<<31 && ctxRowsIn(rows, n) {
		return -1
	}
	for i, r := range rows {
		if r.prev < -1 || int(r.prev) >= n || r.next < -1 || int(r.next) >= n || r.verb < 0 || r.head < 0 || r.asked < 0 || r.out < 0 {
			return first + i
		}
	}
	return -1
}

// ctxRowsIn reports whether every row of rows is in range for a table of
// n < 2^31 rows: prev and next in [-1, n), the lengths not negative.
// With x = prev+1 taken mod 2^32, prev is in range exactly when x <= n
// (a prev below -1 wraps to at least 2^31+1), and n-x, taken as 64 bits,
// has its top bit set exactly when x > n; a length is negative exactly
// when its sign bit is set, so the OR of all of them holds every row's
// answer.
func ctxRowsIn(rows []ctxRow, n int) bool {
	m := uint64(n)
	var out uint64
	var lens int32
	for i := range rows {
		r := &rows[i]
		out |= (m - uint64(uint32(r.prev)+1)) | (m - uint64(uint32(r.next)+1))
		lens |= r.verb | r.head | r.asked | r.out
	}
	return out>>63 == 0 && lens >= 0
}

// sessionBM25Layer ranks dedup groups by BM25F of the query over each
// exchange's verbatim plus its session neighbours' (see ModeSessionBM25),
// or, when plain, by plain BM25 over the whole exchange, talk and output as
// one text (ModeVerbatimBM25).
func (ix *Index) sessionBM25Layer(ctx context.Context, text string, allowed func(int32) bool, limit int, plain bool) ([]cand, error) {
	qterms := queryTerms(text)
	n := len(ix.seqs)
	if len(qterms) == 0 || n == 0 {
		return nil, nil
	}
	// What does not need the session context comes first — the reader,
	// the row map (its checksum: ~3 ms at 1,000,000 exchanges), the
	// terms and their costs — while the goroutine the open started
	// (earlyContext) may still be reading the context (docs/BENCHMARKS.md,
	// session 24).
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cache, release := ix.rowCacheFor(r)
	defer release()
	terms := expandTerms(qterms, !plain)
	if !plain {
		terms = weighFrame(text, terms)
	}
	// Terms score independently, so they are scored in groups, one
	// goroutine each (100k exchanges: 206 → 142 ms p50 per search, see
	// docs/BENCHMARKS.md). The groups are balanced by the terms' postings
	// (termGroups). Each group sums its terms in order and the groups are
	// added in order: the scores depend on the index, neither on scheduling
	// nor on the number of cores.
	workers := min(sessionTermGroups, len(terms))
	costs, most, cards := termCosts(ix, r, cache, terms, plain)
	groups := termGroups(costs, workers)
	sc, err := ix.ensureContext()
	if err != nil {
		return nil, err
	}
	if sc.avgdl == 0 && sc.plainAvg == 0 {
		return nil, nil
	}
	exact := !plain && ExactBoost > 0 && exactQuery(text, len(qterms))
	var distAvg float64
	if !plain && CardWeight > 0 {
		distAvg = float64(ix.man.BM25.FieldLen[fieldDistilled]) / float64(n)
	}
	// Each worker's posting buffers hold the most postings one of its
	// terms has in a field (counted above, by the same opening of the same
	// lists): sized for every row, they were most of the scratch, and in a
	// search process each huge page of it touched is one the kernel zeroes
	// (17 % of a cold search's time at 100,000 exchanges).
	bufs := make([][2]int, workers)
	size := 0
	if workers < 2 {
		size = n*int(unsafe.Sizeof(cand{})) + 8 // the candidates (below)
	}
	// An index that keeps postings (the warm search process's) keeps its
	// scratch for the next query too: there the buffers are sized for
	// every row, so that every query of as many workers lays the scratch
	// out the same and its resident pages are what the largest query
	// touched, not the union of layouts shifted by each query's buffers
	// (144–184 MB of 208 at 1,000,000 exchanges after a rotation of
	// queries; docs/BENCHMARKS.md, session 30). Untouched, the room costs
	// address space only.
	stable := ix.pcache.Load() != nil
	for w, g := range groups {
		for _, k := range g {
			bufs[w][0], bufs[w][1] = max(bufs[w][0], most[k]), max(bufs[w][1], cards[k])
		}
		if stable {
			bufs[w] = [2]int{n, n}
		}
		size += scorerScratch(n, bufs[w][0], bufs[w][1])
	}
	recBytes := 0
	if workers > 1 && !disableSteal {
		recBytes = recordRoom(n) * int(unsafe.Sizeof(rowAdd{}))
		size += workers * recBytes
	}
	ws := make([]*sessionScorer, workers)
	defer func() {
		// A scan left unfinished (an error) gave no postings to the cache:
		// what it gathered for it is freed.
		for _, s := range ws {
			if s != nil && s.pr != nil {
				s.pr.drop()
			}
		}
	}()
	person := !plain && firstPerson(text)
	var cover *personCover
	if person && PromptCoverWeight > 0 {
		cover = newPersonCover(len(terms))
		size += workers * cover.bytes(n)
	}
	missing := make([]bool, len(terms)) // held by no row's own fields (typo.go)
	errs := make([]error, workers)
	// The workers' arrays live in one scratch mapping, kept for the next
	// query when the ranking is done (reuseScratch): nothing below keeps a
	// slice of it (cs, from it too, holds copies of the scores; topGroups
	// returns slices of its own).
	var mem *scratch
	if !disableScratch {
		mem = reuseScratch(size)
		defer mem.keep()
	}
	// A worker done with its group computes the other group's last terms
	// not yet started (steal.go): the same additions in the same order.
	queues := make([]termQueue, workers)
	for w := range queues {
		queues[w].end, queues[w].recs = len(groups[w]), make([]*termRecord, len(groups[w]))
	}
	var wg sync.WaitGroup
	for w := range ws {
		ws[w] = &sessionScorer{ix: ix, r: r, sc: sc, cache: cache, n: n, plain: plain, exact: exact, distAvg: distAvg,
			prompt: !PromptFirstPerson || person, person: person, cover: cover, mem: mem.sub(scorerScratch(n, bufs[w][0], bufs[w][1])),
			sized: true, bufCap: bufs[w][0], cardCap: bufs[w][1]}
		if cover != nil {
			ws[w].coverBits = cover.bits(mem, n)
		}
		if rm := mem.sub(recBytes); rm != nil { // else records grow on the heap
			ws[w].recRoom = scratchSlice[rowAdd](rm, 0, recordRoom(n))
		}
		if w > 0 {
			// rowOf caches misses in the map: one per worker.
			ws[w].cache = map[uint64]int32{}
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := ws[w]
			if testStealFirst && !disableSteal && !s.help(ctx, w, queues, groups, terms) {
				return
			}
			for i, k := range groups[w] {
				if disableSteal || queues[w].claim() {
					s.k, s.tw = int32(k+1), terms[k].w
					if errs[w] = s.term(ctx, terms[k].t); errs[w] != nil {
						return
					}
					missing[k] = s.held == 0
					continue
				}
				// The other worker took this term and the ones after
				// it (help): their additions come in the group's order.
				rec := queues[w].recs[i]
				<-rec.done
				if errs[w] = rec.err; errs[w] != nil {
					return
				}
				missing[k] = rec.held == 0
				s.apply(rec)
			}
			if !disableSteal {
				s.help(ctx, w, queues, groups, terms)
			}
		}(w)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if !plain && TypoWeight > 0 {
		if err := correctTypos(ctx, ws[0], terms, missing); err != nil {
			return nil, err
		}
	}
	// Every worker scored or applied at least one term, so its arrays
	// exist.
	scores, touched, seen := ws[0].scores, ws[0].touched, ws[0].seen
	for _, x := range ws[1:] {
		touched = mergeSums(scores, seen, touched, x.scores, x.touched) // tail.go
		x.touched = nil
	}
	if testSummed != nil {
		testSummed(ws, scores, touched)
	}
	if !plain {
		ix.adjust(ws, scores, touched, sc, text, len(qterms))
		if err := ix.timeBoost(ctx, text, scores, touched); err != nil {
			return nil, err
		}
		if touched, err = ix.prf(ctx, ws[0], qterms, scores, touched, seen); err != nil {
			return nil, err
		}
		if touched, err = ix.coocExpand(ctx, ws[0], qterms, scores, touched, seen); err != nil {
			return nil, err
		}
	}
	// Without a filter, the top is selected from the rows and their sums
	// as they stand, when its first selection answers (tail.go).
	if allowed == nil && !testNoRowsTop {
		if top, ok := ix.topGroupsOfRows(touched, scores, limit); ok {
			return top, nil
		}
	}
	// The candidates go where the second worker's sums and frequencies
	// were, no longer read (2n floats: room for n candidates): in a cold
	// process those pages are already faulted in and zeroed, where a
	// fresh array was another 16 MB for the kernel to zero at 1,000,000
	// exchanges (docs/BENCHMARKS.md, session 16).
	var cs []cand
	if len(ws) > 1 && unsafe.Sizeof(cand{}) == 2*unsafe.Sizeof(float64(0)) && len(ws[1].pair) == 2*n {
		cs = unsafe.Slice((*cand)(unsafe.Pointer(unsafe.SliceData(ws[1].pair))), n)[:0]
		ws[1].pair, ws[1].scores, ws[1].tf = nil, nil, nil
	} else {
		cs = scratchSlice[cand](mem, 0, len(touched))
	}
	cs = candidates(cs, touched, scores, allowed) // tail.go
	return ix.topGroups(cs, limit), nil
}

// termCosts estimates the work of scoring each term: its postings in the
// fields the scorer reads, the talk's counted thrice (each posting also
// scores the row's two neighbours). Counting opens each term's postings
// list in every segment without reading it: at 100,000 exchanges a few
// hundred dictionary look-ups against the ~500,000 postings a 4-word query
// reads. Through Bleve's TermFieldReader (no direct postings) the counts
// are the same, so are the groups and every score.
//
// most[k] is the most postings term k has in one of the fields the scorer
// reads into its posting buffer, cards[k] its postings in the card field:
// the buffers' sizes.
func termCosts(ix *Index, r bleveindex.IndexReader, cache map[uint64]int32, terms []weightedTerm, plain bool) (costs, most, cards []int) {
	costs, most, cards = make([]int, len(terms)), make([]int, len(terms)), make([]int, len(terms))
	pr := newPostingReader(ix, r, cache)
	count := pr.count
	if !pr.direct {
		count = func(field, term string) (int, error) {
			tfr, err := r.TermFieldReader(context.Background(), []byte(term), field, false, false, false)
			if err != nil {
				return 0, err
			}
			defer tfr.Close()
			return int(tfr.Count()), nil
		}
	}
	fields := costFields[:]
	if plain {
		fields = fields[:2]
	}
	// A kept index keeps each term's counts in every field (termcounts.go).
	var kept *termCounts
	if pr.direct && !testCountTerms {
		kept = ix.tcounts.Load()
	}
	for k, t := range terms {
		var ns [len(costFields)]int
		ok := false
		if kept != nil {
			ns, ok = kept.get(pr.segs, t.t)
		}
		if !ok {
			counted, all := fields, true
			if kept != nil {
				counted = costFields[:]
			}
			for i, f := range counted {
				n, err := count(f.name, t.t)
				if err != nil {
					// The scorer reports it when it reads the term.
					n, all = -1, false
				}
				ns[i] = n
			}
			if kept != nil && all {
				kept.put(pr.segs, t.t, ns)
			}
		}
		for i, f := range fields {
			n := ns[i]
			if n < 0 {
				continue
			}
			costs[k] += f.mul * n
			if f.name == fieldDistilled {
				cards[k] = n
			} else {
				most[k] = max(most[k], n)
			}
		}
	}
	return costs, most, cards
}

// termGroups deals the terms out to the workers, costliest first, each to
// the group with the least work so far (fewest terms, then the lowest
// group, on a tie), and lists each group's terms in query order. With every
// cost equal that is the terms at even and at odd positions. Before, the
// 4-word query at 100,000 put 20 of 29 ms of scoring on one of the two
// workers (docs/BENCHMARKS.md, "Session 14, process start").
func termGroups(costs []int, workers int) [][]int {
	order := make([]int, len(costs))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(i, j int) bool { return costs[order[i]] > costs[order[j]] })
	groups := make([][]int, workers)
	load := make([]int, workers)
	for _, k := range order {
		best := 0
		for w := 1; w < workers; w++ {
			if load[w] < load[best] || (load[w] == load[best] && len(groups[w]) < len(groups[best])) {
				best = w
			}
		}
		groups[best] = append(groups[best], k)
		load[best] += costs[k]
	}
	for _, g := range groups {
		sort.Ints(g)
	}
	return groups
}

// adjust applies the experiment knobs (exact tier, session evidence,
// recency) to the summed scores.
func (ix *Index) adjust(ws []*sessionScorer, scores []float64, touched []int32, sc *sessionCtx, text string, nterms int) {
	if ws[0].exact {
		for _, row := range touched {
			m := 0
			for _, w := range ws {
				if w.matched != nil {
					m += int(w.matched[row])
				}
			}
			if m >= nterms {
				scores[row] *= 1 + ExactBoost
			}
		}
	}
	if c := ws[0].cover; c != nil {
		c.apply(ws, scores)
		for _, w := range ws {
			w.cover = nil // what the layer scores next (prf) is not the query
		}
	}
	if SessionMaxWeight > 0 {
		// Rank sessions, then exchanges: the session's best exchange
		// score lifts every exchange of the session.
		best := map[int32]float64{}
		for _, row := range touched {
			k := sc.session(row)
			best[k] = max(best[k], scores[row])
		}
		for _, row := range touched {
			scores[row] += SessionMaxWeight * best[sc.session(row)]
		}
	}
	if SessionWeight > 0 {
		sum := map[int32]float64{}
		for _, row := range touched {
			sum[sc.session(row)] += scores[row]
		}
		for _, row := range touched {
			scores[row] += SessionWeight * sum[sc.session(row)]
		}
	}
	if RecencyWeight > 0 && recencyQuery(text) {
		maxSeq := 1
		for _, q := range ix.seqs {
			maxSeq = max(maxSeq, q)
		}
		for _, row := range touched {
			scores[row] *= 1 + RecencyWeight*float64(ix.seqs[row])/float64(maxSeq)
		}
	}
}

// session returns the first row of row's session (the row itself when it
// has none).
func (c *sessionCtx) session(row int32) int32 {
	for i := 0; c.rows[row].prev >= 0 && i < 1<<20; i++ {
		row = c.rows[row].prev
	}
	return row
}

// exactQuery says whether a query asks for exact recall: it names an
// identifier (a word with parts: camelCase, snake_case, a path, a dotted
// name), holds a quoted span, or looks pasted (no question mark, many
// words). With ExactAll every query of ExactMinTerms terms does.
func exactQuery(text string, nterms int) bool {
	if nterms < ExactMinTerms {
		return false
	}
	if ExactAll {
		return true
	}
	if strings.ContainsAny(text, "\"`") || strings.Count(text, "'") >= 2 {
		return true
	}
	ident := false
	embed.Words(text, func(w string, part bool) {
		if !part && codeLike(w) {
			ident = true
		}
	})
	return ident || !strings.Contains(text, "?") && len(strings.Fields(text)) >= 6
}

// codeLike says whether w is an identifier rather than a word: it has '_',
// '.', '/' or ':' inside, or a lower-to-upper case change (camelCase).
func codeLike(w string) bool {
	if strings.ContainsAny(strings.Trim(w, "_./:"), "_./:") {
		return true
	}
	for i := 1; i < len(w); i++ {
		if w[i-1] >= 'a' && w[i-1] <= 'z' && w[i] >= 'A' && w[i] <= 'Z' {
			return true
		}
	}
	return false
}

// recencyQuery says whether a query asks for the latest state of a thing.
func recencyQuery(text string) bool {
	found := false
	embed.Words(strings.ToLower(text), func(w string, part bool) {
		switch w {
		case "latest", "current", "currently", "now", "recent", "recently", "newest", "anymore", "still", "updated":
			found = true
		}
	})
	return found
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

// sessionTermGroups is how many goroutines share a query's terms.
const sessionTermGroups = 2

// sessionScorer sums the BM25F scores of some query terms (see
// ModeSessionBM25); the arrays are allocated on first use.
type sessionScorer struct {
	ix    *Index
	r     bleveindex.IndexReader
	sc    *sessionCtx
	cache map[uint64]int32
	pr    *postingReader // over r and cache, made on first use
	n     int
	plain bool // verbatim-bm25: talk and output as one text, no neighbours

	exact   bool    // count the query terms each row holds itself
	k       int32   // 1 + the index of the current term
	tw      float64 // the current term's weight (1, or SynonymWeight)
	matched []int16 // per row: query terms held in its own talk or output
	stamp   []int32 // per row: the last term counted in matched
	distAvg float64 // mean card length (CardWeight > 0)
	prompt  bool    // score the rows' own first turns (PromptWeight)
	person  bool    // the query is in the first person (rank_person.go)
	cover   *personCover
	// coverBits: per row, bit k-1 when term k (scored by this worker) is
	// in the row's first turn ([]uint8 … []uint64: rank_person.go)
	coverBits any
	held      int // postings of the current term in the rows' own fields

	// rec, when set, takes the current term's additions to scores (a term
	// of the other worker's group: help) instead of scores.
	rec     *termRecord
	recRoom []rowAdd // where this worker's next record goes (steal.go)

	scores, tf []float64 // per row: the sum so far, f'(t,row) of the current term
	pair       []float64 // scores and tf, one array
	seen       []bool
	touched    []int32 // rows with a score
	eff        []int32 // rows with f'(t,row) > 0 for the current term
	buf        []rowFreq
	cardBuf    []cardPosting
	// titleBuf and promptBuf keep the head postings term gathers for the
	// title and prompt parts, reused by the scorer's next term: grown from
	// nil for each term they were 3.8 % of the busier worker's time at
	// 1,000,000 exchanges (docs/BENCHMARKS.md, session 21).
	titleBuf, promptBuf []rowFreq
	titleEnds           []int32  // titleScore's, reused by the next term
	mem                 *scratch // where the arrays above come from (nil: the heap)
	// sized: buf and cardBuf start with room for bufCap and cardCap
	// postings (termCosts), else for a posting per row; either grows
	// (reserve) when a term has more.
	sized           bool
	bufCap, cardCap int
}

// scorerScratch is the scratch one sessionScorer's arrays take for n rows
// and posting buffers of bufCap and cardCap postings.
func scorerScratch(n, bufCap, cardCap int) int {
	per := 2*unsafe.Sizeof(float64(0)) + unsafe.Sizeof(false) + 2*unsafe.Sizeof(int32(0))
	return n*int(per) + 3*bufCap*int(unsafe.Sizeof(rowFreq{})) + cardCap*int(unsafe.Sizeof(cardPosting{})) +
		9*8 // and each array's alignment
}

// cardPosting is a posting of the card field with the card's length.
type cardPosting struct {
	row  int32
	freq uint32
	dl   float64
}

// rowFreq is a posting: its row and the term's frequency there.
//
// The frequency is kept as the integer it is (zap and Bleve give a
// uint64; freq32 checks it fits) and read as float64(freq), the float the
// scorer used to keep: the same value, in 8 bytes a posting instead of 16
// (cardPosting: 16 instead of 24). The posting buffers were a third of a
// search's scratch at 1,000,000 exchanges, and in a cold process each page
// of them is one the kernel zeroes (docs/BENCHMARKS.md, session 16).
type rowFreq struct {
	row  int32
	freq uint32
}

func (p rowFreq) f() float64     { return float64(p.freq) }
func (p cardPosting) f() float64 { return float64(p.freq) }

// errFreq refuses a posting whose frequency the buffers cannot hold (a
// term more than 4,294,967,295 times in one field of one exchange).
var errFreq = errors.New("a term's frequency in one field is over 2^32-1")

// freq32 is a posting's frequency as the buffers keep it; ok is false when
// it does not fit.
func freq32(f uint64) (uint32, bool) { return uint32(f), f <= math.MaxUint32 }

// own counts a term found in row's own text once.
func (s *sessionScorer) own(row int32) {
	if !s.exact || s.tw != 1 {
		return
	}
	if s.matched == nil {
		s.matched, s.stamp = make([]int16, s.n), make([]int32, s.n)
	}
	if s.stamp[row] != s.k {
		s.stamp[row] = s.k
		s.matched[row]++
	}
}

// ownAll is own for each posting of ps (exact, and a weight of 1: the
// caller's test), with the arrays in locals.
func (s *sessionScorer) ownAll(ps []rowFreq) {
	if s.matched == nil {
		s.matched, s.stamp = make([]int16, s.n), make([]int32, s.n)
	}
	matched, stamp, k := s.matched, s.stamp, s.k
	for _, p := range ps {
		if stamp[p.row] != k {
			stamp[p.row] = k
			matched[p.row]++
		}
	}
}

func (s *sessionScorer) add(row int32, f float64) {
	if f <= 0 {
		return // a zero weight: no evidence, and eff must list a row once
	}
	if s.tf[row] == 0 {
		s.eff = append(s.eff, row)
	}
	s.tf[row] += f
}

// term adds the score of term t: each posting of t adds to its row and to
// the rows that take that row's words as context.
func (s *sessionScorer) term(ctx context.Context, t string) error {
	s.alloc()
	if s.pr == nil {
		s.pr = newPostingReader(s.ix, s.r, s.cache)
	}
	if s.plain {
		return s.plainTerm(ctx, t)
	}
	if testFormerTerm != nil {
		return testFormerTerm(s, ctx, t)
	}
	return s.fullTerm(ctx, t)
}

// testFormerTerm, when set, scores a term in place of fullTerm (tests: the
// former code, their oracle).
var testFormerTerm func(s *sessionScorer, ctx context.Context, t string) error

// alloc makes the scorer's arrays, on its first term (or record applied).
func (s *sessionScorer) alloc() {
	if s.tf == nil {
		// scores and tf side by side: once the ranking is summed, a
		// worker's pair holds the candidates (sessionBM25Layer).
		s.pair = scratchSlice[float64](s.mem, 2*s.n, 2*s.n)
		s.scores, s.tf, s.seen = s.pair[:s.n:s.n], s.pair[s.n:], scratchSlice[bool](s.mem, s.n, s.n)
		// touched and eff list each row once at most: sized for all of
		// them, they are never copied as they grow (their doublings were
		// a third of a search's allocation at 100,000 exchanges). So are
		// the posting buffers, for the most postings of the scorer's terms
		// in one field (sized), or a posting per row: grown term by term,
		// each growth was a fresh buffer.
		s.touched, s.eff = scratchSlice[int32](s.mem, 0, s.n), scratchSlice[int32](s.mem, 0, s.n)
		bufCap, cardCap := s.n, s.n
		if s.sized {
			bufCap, cardCap = s.bufCap, s.cardCap
		}
		s.buf, s.cardBuf = scratchSlice[rowFreq](s.mem, 0, bufCap), scratchSlice[cardPosting](s.mem, 0, cardCap)
		if !disableHeadBufs {
			s.titleBuf, s.promptBuf = scratchSlice[rowFreq](s.mem, 0, bufCap), scratchSlice[rowFreq](s.mem, 0, bufCap)
		}
	}
}

// fullTerm is term for the session scoring (not plain).
func (s *sessionScorer) fullTerm(ctx context.Context, t string) error {
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
			s.ownAll(ps)
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
	// The head postings: s.add to each one's previous row, or the posting
	// kept for the title part, written out with the arrays in locals as
	// above (the same additions in the same order).
	if err := s.pr.start(ctx, fieldHead, t, s.buf); err != nil {
		return err
	}
	prompt := PromptWeight > 0 && s.prompt
	gather := prompt || s.cover != nil
	opening := OpeningWeight > 0 && s.person
	keepTitles := TitleWeight > 0 || opening
	for {
		ps, err := s.pr.next()
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			break
		}
		if gather {
			prompts = append(prompts, ps...)
		}
		for _, p := range ps {
			if prev := links[p.row].prev; prev >= 0 {
				if g := weight[prev] * p.f(); !(g <= 0) { // add's test
					if tf[prev] == 0 {
						eff = append(eff, prev)
					}
					tf[prev] += g
				}
			} else if keepTitles {
				titles = append(titles, p)
			}
		}
	}
	s.eff = eff
	if err := s.scan(ctx, fieldAsked, t, func(ps []rowFreq) {
		for _, p := range ps {
			if next := sc.links[p.row].next; next >= 0 {
				s.add(next, sc.askedWeight(next)*p.f())
			}
		}
	}); err != nil {
		return err
	}
	s.score(1, sc.dl, sc.avgdl)
	s.titleBuf, s.promptBuf = titles[:0], prompts[:0]
	if opening {
		s.openingScore(titles)
	}
	if s.cover != nil {
		s.coverTerm(prompts)
	}
	if prompt {
		s.promptScore(prompts)
	}
	if len(titles) > 0 && TitleWeight > 0 {
		sc.titles()
		if disableTitleScore || !s.titleScore(titles) {
			for _, p := range titles {
				for j := p.row; j >= 0; j = sc.links[j].next {
					s.add(j, p.f())
				}
			}
			s.scoreB(TitleWeight, sc.titleDL, sc.titleAvg, TitleB)
		}
	}
	if CardWeight > 0 && s.distAvg > 0 {
		if err := s.cardTerm(ctx, t); err != nil {
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
	s.scoreB(OutputWeight, sc.outDL, sc.outAvg, OutputB)
	return nil
}

// disableHeadBufs gathers each term's title and prompt postings in fresh
// slices, as before titleBuf and promptBuf (tests compare).
var disableHeadBufs = false

// disableTitleScore scores titles through add and scoreB (tests compare).
var disableTitleScore = false

// titleScore is the title part of term for titles, the title postings (of
// sessions' first rows): every row of such a session takes the posting's
// frequency as its f, and the part scores them as scoreB does, the same
// floats in the same order, without the per-row frequencies: each row of
// a session has the same f and the same title length, so the same
// BM25, worked out once for each length met (a session's). A term's
// title reaches every row of the sessions whose first turn holds it
// ("error": 833,380 of 1,000,000 rows); the title part was 1.5–2.5 ms
// of a term's 10–16 ms there (error: 8 of ~40), and this takes 1–3 % off
// the session layer's CPU (docs/BENCHMARKS.md, session 20).
//
// It says false, having changed nothing, unless each session walked is a
// chain that links back (every row's next has the row as its previous):
// then no row is reached twice, as a table linkSessions made ensures, and
// the rows walked are the rows scoreB would score, each once.
func (s *sessionScorer) titleScore(titles []rowFreq) bool {
	links := s.sc.links
	spans := s.sc.titleSpans()
	eff := s.eff[:0]
	// Per posting, where its session's rows end in eff (≤ n: no row
	// twice), in a buffer the scorer's next term reuses; a session that
	// is a run (titleSpans) is not listed in eff.
	ends := s.titleEnds[:0]
	rows := 0
	for _, p := range titles {
		if p.f() > 0 { // add skips a weight of 0
			if l := spans[p.row]; l > 0 {
				rows += int(l)
			} else {
				for j := p.row; j >= 0; {
					eff = append(eff, j)
					rows++
					next := links[j].next
					if next >= 0 && links[next].prev != j {
						return false
					}
					j = next
				}
			}
		}
		ends = append(ends, int32(len(eff)))
	}
	s.titleEnds = ends[:0]
	avgdl := s.sc.titleAvg
	if rows == 0 || avgdl == 0 {
		return true
	}
	df := float64(rows)
	idf := math.Log(1 + (float64(s.n)-df+0.5)/(df+0.5))
	k1, b := s.bm25(TitleB)
	weight, dl := TitleWeight, s.sc.titleDL
	// tw·weight·idf is the value's left-most product: worked out once, the
	// same float.
	twi := s.tw * weight * idf
	seen, scores, touched := s.seen, s.scores, s.touched
	start := int32(0)
	// Each title is another session, its rows far from the last one's: the
	// lines of its title length, sums, seen and span were each a fresh
	// miss, a few sessions' misses in flight at most behind the run loops.
	// They are asked for prefetchAhead titles ahead (−4 % of a warm
	// search's CPU at 1,000,000 exchanges; docs/BENCHMARKS.md, session 29).
	pf := newPrefetchSet(dl, scores, seen, spans)
	for i, p := range titles {
		prefetchPostings(titles, i, &pf)
		f := p.f()
		if l := spans[p.row]; l > 0 && f > 0 {
			// A run: its rows in order, each with the run's title length.
			d := dl[p.row]
			v := twi * f * (k1 + 1) / (f + k1*(1-b+b*d/avgdl))
			if s.rec != nil {
				for j := p.row; j < p.row+l; j++ {
					s.put(j, v)
				}
				continue
			}
			for j := p.row; j < p.row+l; j++ {
				if !seen[j] {
					seen[j] = true
					touched = append(touched, j)
				}
				scores[j] += v
			}
			continue
		}
		var d, v float64
		for k, j := range eff[start:ends[i]] {
			if k == 0 || dl[j] != d {
				d = dl[j]
				v = twi * f * (k1 + 1) / (f + k1*(1-b+b*d/avgdl))
			}
			if s.rec != nil {
				s.put(j, v)
				continue
			}
			if !seen[j] {
				seen[j] = true
				touched = append(touched, j)
			}
			scores[j] += v
		}
		start = ends[i]
	}
	s.touched = touched
	return true
}

// cardTerm adds CardWeight × the BM25 of t over the distilled cards, with
// the card lengths Bleve keeps as norms.
func (s *sessionScorer) cardTerm(ctx context.Context, t string) error {
	// When the reader can count the postings first (df), they are scored
	// batch by batch as they are decoded, without a buffer of them all.
	if n, ok, err := s.pr.startNorm(fieldDistilled, t); err != nil {
		return err
	} else if ok {
		if n == 0 {
			return nil
		}
		s.held += n
		idf := s.cardIDF(n)
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
			s.cardScore(ps, idf)
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
	s.cardScore(ps, s.cardIDF(len(ps)))
	return nil
}

// cardIDF is the card part's idf for a term of df postings.
func (s *sessionScorer) cardIDF(df int) float64 {
	d := float64(df)
	return math.Log(1 + (float64(s.n)-d+0.5)/(d+0.5))
}

// cardScore adds the card part of postings ps: put of each one's
// tw·CardWeight·idf·f·(k1+1)/(f+k1·(1−b+b·dl/avgdl)), written out with
// the arrays in locals (through s each was loaded again after every
// store) and the value's left-most product tw·CardWeight·idf worked out
// once: the same floats, added in the same order.
func (s *sessionScorer) cardScore(ps []cardPosting, idf float64) {
	twi, k1, b, avg := s.tw*CardWeight*idf, BM25K1, BM25B, s.distAvg
	if s.rec != nil {
		for _, x := range ps {
			s.put(x.row, twi*x.f()*(k1+1)/(x.f()+k1*(1-b+b*x.dl/avg)))
		}
		return
	}
	seen, scores, touched := s.seen, s.scores, s.touched
	for _, x := range ps {
		if !seen[x.row] {
			seen[x.row] = true
			touched = append(touched, x.row)
		}
		scores[x.row] += twi * x.f() * (k1 + 1) / (x.f() + k1*(1-b+b*x.dl/avg))
	}
	s.touched = touched
}

// scan calls f with each batch of term t's postings in field, in order
// (postingReader.start, next).
func (s *sessionScorer) scan(ctx context.Context, field, t string, f func([]rowFreq)) error {
	if err := s.pr.start(ctx, field, t, s.buf); err != nil {
		return err
	}
	for {
		ps, err := s.pr.next()
		if err != nil || len(ps) == 0 {
			return err
		}
		f(ps)
	}
}

// plainTerm adds the plain BM25 score of t over talk and output as one text.
func (s *sessionScorer) plainTerm(ctx context.Context, t string) error {
	s.eff = s.eff[:0]
	for _, field := range []string{fieldVerbatim, fieldOutput} {
		if err := s.scan(ctx, field, t, func(ps []rowFreq) {
			for _, p := range ps {
				s.add(p.row, p.f())
			}
		}); err != nil {
			return err
		}
	}
	s.score(1, s.sc.plainLens(), s.sc.plainAvg)
	return nil
}

// score adds weight × BM25 of the frequencies gathered in tf (the rows in
// eff, which df counts) and clears them.
func (s *sessionScorer) score(weight float64, dl []float64, avgdl float64) {
	s.scoreB(weight, dl, avgdl, -1)
}

// scoreB is score with BM25's b set to b when b ≥ 0.
func (s *sessionScorer) scoreB(weight float64, dl []float64, avgdl, bOver float64) {
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
	// The arrays in locals (through s each was loaded again after every
	// store), and the numerator's first product once: tw·weight·idf is
	// the expression's left-most product, so the same float.
	tf, seen, scores, touched := s.tf, s.seen, s.scores, s.touched
	twi := s.tw * weight * idf
	for _, row := range s.eff {
		f := tf[row]
		tf[row] = 0
		if !seen[row] {
			seen[row] = true
			touched = append(touched, row)
		}
		scores[row] += twi * f * (k1 + 1) / (f + k1*(1-b+b*dl[row]/avgdl))
	}
	s.touched = touched
	s.eff = s.eff[:0]
}

// bm25 is BM25's k1 and b for a part, b being bOver when that is ≥ 0.
func (s *sessionScorer) bm25(bOver float64) (k1, b float64) {
	k1, b = SessionK1, SessionB
	if s.plain {
		k1, b = BM25K1, BM25B
	} else if bOver >= 0 {
		b = bOver
	}
	return k1, b
}

// postings appends the row and frequency of each posting of term in field
// to buf.
func (ix *Index) postings(ctx context.Context, r bleveindex.IndexReader, cache map[uint64]int32, field, term string, buf []rowFreq) ([]rowFreq, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), field, true, false, false)
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
			buf = append(buf, rowFreq{row, f})
		}
		tfd = d
	}
}

// asksQuestion reports whether text ends by asking: its closing paragraph
// has a question mark that ends a sentence ("Want me to add the test?",
// "How was it? Anything fun?"), not one of code ("a ?? b", "x?.y", "c ? a : b").
func asksQuestion(text string) bool {
	text = strings.TrimSpace(text)
	if i := strings.LastIndex(text, "\n\n"); i >= 0 {
		text = text[i+2:]
	}
	for i := strings.IndexByte(text, '?'); i >= 0; {
		after := i+1 == len(text) || strings.IndexByte(" \t\n\"')]*_", text[i+1]) >= 0
		if after && i > 0 && strings.IndexByte(" \t\n?", text[i-1]) < 0 {
			return true
		}
		j := strings.IndexByte(text[i+1:], '?')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}
