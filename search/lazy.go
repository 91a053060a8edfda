package search

import (
	"bytes"
	"fmt"
	"math/bits"
	"path/filepath"
	"slices"

	"github.com/gitmem/git-mem/search/vector"
)

// lazyRows is what a writer keeps of the rows it loaded while it only
// appends (an add, a catch-up): not their records but the few fields every
// row is read for, scanned in place from the mapped document table
// (scanRec). Decoding every record into Go strings was 2.3 s of the 10 s
// an add of 1,000 exchanges into 1,000,000 took, and with the per-row maps
// built from those strings most of its 2.4 GB (docs/BENCHMARKS.md, session
// 16). A record is decoded whole only when it is read (a link candidate,
// an id found), and every row is decoded (Index.ensureFull) before
// anything else needs the records: a replaced or forgotten row, a table
// written whole, a filtered search.
//
// Rows [0, n) are the table's; Index.recs then holds rows n.. only.
type lazyRows struct {
	n     int
	dict  []string // the table's dictionary strings
	exact []uint64 // per row: the dedup key
	dead  []int32  // rows whose id says they were emptied (forget.go), ascending
	// ids: each row (as row+1; 0: empty) under a hash of its id, open
	// addressing (linear probing, len a power of two, at most half full).
	// rowOf compares the ids of the rows it probes (recID), so a collision
	// is never a wrong answer, and a slot needs no hash: a writer looks up
	// a few thousand ids, and the table of a million rows is 8 MB. Sorting
	// (hash, row) pairs took 0.14 s at 1,000,000 rows, a map[uint64]int32
	// about as long.
	ids []int32
	// Per row, for the neighbour table (neighbourRows): the session's
	// dictionary number and the lengths.
	sess []uint32
	lens []ctxRow
	// rooms and files: by dictionary number, the rows naming it in row
	// order (a row once per naming), as linkBuckets lists them; what
	// ensureLinkState needs.
	rooms, files map[uint32][]int32
	cache        map[int32]*docRec // rows decoded so far (rec)
}

// scanLazy reads t's rows into a lazyRows; an error is a damaged record.
func scanLazy(t *table) (*lazyRows, error) {
	n := len(t.seqs)
	lz := &lazyRows{n: n, dict: t.dictList(), exact: make([]uint64, n), ids: make([]int32, max(16, 2<<bits.Len(uint(n)))),
		sess: make([]uint32, n), lens: make([]ctxRow, n),
		rooms: map[uint32][]int32{}, files: map[uint32][]int32{}, cache: map[int32]*docRec{}}
	var s recScan
	mask := uint64(len(lz.ids) - 1)
	slots := make([]uint32, n) // where each row's id probes from
	for i := range n {
		if err := scanRec(t.recBytes(i), &s, uint64(t.dictN)); err != nil {
			return nil, fmt.Errorf("document table record %d: %w", i, err)
		}
		lz.exact[i] = s.exact
		slots[i] = uint32(idSlot(s.id) & mask)
		if bytes.HasPrefix(s.id, []byte(deadPrefix)) {
			lz.dead = append(lz.dead, int32(i))
		}
		lz.sess[i] = uint32(s.session)
		lz.lens[i] = ctxRow{verb: s.verb, head: s.head, asked: s.ask, out: s.outl}
		for _, r := range s.rooms {
			lz.rooms[uint32(r)] = append(lz.rooms[uint32(r)], int32(i))
		}
		for _, f := range s.files {
			lz.files[uint32(f)] = append(lz.files[uint32(f)], int32(i))
		}
	}
	// The rows go into the id table in the order of their slots' top
	// bits: its writes then move through it instead of jumping (the jumps
	// cost a cache miss each, half the scan's time beside other processes).
	// The table does not depend on the order (rowOf compares every match).
	shift := bits.Len64(mask) - min(8, bits.Len64(mask))
	var count [257]int32
	for _, sl := range slots {
		count[sl>>shift+1]++
	}
	for k := 1; k < len(count); k++ {
		count[k] += count[k-1]
	}
	order := make([]int32, n)
	for i, sl := range slots {
		order[count[sl>>shift]] = int32(i)
		count[sl>>shift]++
	}
	for _, i := range order {
		lz.putID(uint64(slots[i]), i)
	}
	return lz, nil
}

// idSlot is where an id's probe starts (before the mask): FNV-1a's low
// bits, which the mask keeps, are mixed with its high ones.
func idSlot[T string | []byte](id T) uint64 { return mix(hash64(id)) }

func (lz *lazyRows) putID(h uint64, row int32) {
	mask := uint64(len(lz.ids) - 1)
	i := h & mask
	for lz.ids[i] != 0 {
		i = (i + 1) & mask
	}
	lz.ids[i] = row + 1
}

// rowOf is the last loaded row whose id is id (the writer's byID keeps the
// last row of an id too). t holds the loaded rows' records as scanLazy
// read them (the same bytes: a writer's table only grows), so recID does
// not fail on them.
func (lz *lazyRows) rowOf(t *table, id string) (int32, bool) {
	mask := uint64(len(lz.ids) - 1)
	row, found := int32(-1), false
	for i := idSlot(id) & mask; lz.ids[i] != 0; i = (i + 1) & mask {
		r := lz.ids[i] - 1
		if r <= row {
			continue
		}
		if b, _, err := recID(t.recBytes(int(r))); err == nil && string(b) == id {
			row, found = r, true
		}
	}
	return row, found
}

// isDead reports whether loaded row r was emptied.
func (lz *lazyRows) isDead(r int32) bool {
	_, ok := slices.BinarySearch(lz.dead, r)
	return ok
}

// recOff is the row of recs[0]: the loaded rows' count while they are
// lazy, else 0.
func (ix *Index) recOff() int {
	if ix.lazy != nil {
		return ix.lazy.n
	}
	return 0
}

// recAt is a writer's record of row r, a loaded row decoded on first use
// (and kept: features may give it its link meta).
func (ix *Index) recAt(r int32) (*docRec, error) {
	lz := ix.lazy
	if lz == nil || int(r) >= lz.n {
		return &ix.recs[int(r)-ix.recOff()], nil
	}
	if p := lz.cache[r]; p != nil {
		return p, nil
	}
	rec, err := ix.tab.recWith(int(r), (&strDict{list: lz.dict}).get)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", ix.dir, err, ErrCorrupt)
	}
	lz.cache[r] = &rec
	return &rec, nil
}

// exactOf is row r's dedup key.
func (ix *Index) exactOf(r int32) uint64 {
	if lz := ix.lazy; lz != nil && int(r) < lz.n {
		return lz.exact[r]
	}
	return ix.recs[int(r)-ix.recOff()].Exact
}

// rowDead reports whether row r was emptied by a forget.
func (ix *Index) rowDead(r int32) bool {
	if lz := ix.lazy; lz != nil && int(r) < lz.n {
		return lz.isDead(r)
	}
	return isDead(ix.recs[int(r)-ix.recOff()].ID)
}

// rowOfID is the writer's row of exchange id.
func (ix *Index) rowOfID(id string) (int32, bool) {
	if r, ok := ix.byID[id]; ok {
		return r, true
	}
	if lz := ix.lazy; lz != nil {
		return lz.rowOf(ix.tab, id)
	}
	return 0, false
}

// idOf is row r's exchange id.
func (ix *Index) idOf(r int32) string {
	if lz := ix.lazy; lz != nil && int(r) < lz.n {
		if p := lz.cache[r]; p != nil {
			return p.ID
		}
		b, _, _ := recID(ix.tab.recBytes(int(r))) // scanned by scanLazy
		return string(b)
	}
	return ix.recs[int(r)-ix.recOff()].ID
}

// Spill writes the tables of the rows added so far, as a flush does (the
// last commit unchanged), and lets go of what the writer held of them: it
// goes on as a writer opened on those tables does, its rows read lazily
// (lazyRows), its vectors appended after the file's (vector.OpenAppend),
// the links read from links.bin when needed; the link features of the
// rows are worked out again when a row is a candidate again (the same
// terms numbered the same way: st.terms is kept). What every row keeps
// stays: sequence, group, signature, dedup maps, link buckets. A rebuild
// spills every so many rows (memory.indexAll), so that its memory holds
// those rows and not every row's records, vectors and links: a reindex of
// 1,000,000 held them all, 5.8 GB (docs/BENCHMARKS.md, session 16). The
// tables then end as an add leaves them (a document table of segments,
// vectors appended), which read as the tables written whole.
func (ix *Index) Spill() error {
	if ix.readOnly {
		return ErrReadOnly
	}
	ix.dirty = true
	if err := ix.flush(); err != nil {
		return err
	}
	lz, err := scanLazy(ix.tab)
	if err != nil {
		return fmt.Errorf("%s: %v: %w", ix.dir, err, ErrCorrupt)
	}
	vecs, err := vector.OpenAppend(filepath.Join(ix.dir, vectorsFile), ix.man.Vecs)
	if err != nil {
		return fmt.Errorf("%s: vectors: %v: %w", ix.dir, err, ErrCorrupt)
	}
	ix.mu.Lock()
	old := ix.vecs
	ix.lazy, ix.recs, ix.byID, ix.vecs, ix.sctx = lz, []docRec{}, map[string]int32{}, vecs, nil
	ix.mu.Unlock()
	_ = old.Close()
	if st := ix.lst; st != nil && st.loaded {
		clear(st.feats)
		clear(st.may)
		clear(st.proj)
		st.links, st.fileN, st.partial = nil, 0, true // links.bin holds them
	}
	return nil
}
