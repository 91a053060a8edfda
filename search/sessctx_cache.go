package search

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/gitmem/git-mem/internal/mapfile"
)

// The session cache keeps what newSessionCtx works out from the neighbour
// table (each row's stream weight, lengths and links, the means), so that
// a cold search maps it instead of computing it: at 1,000,000 exchanges
// the computation and the zeroing of its 40 MB of fresh pages were a
// quarter of a cold search's CPU (docs/BENCHMARKS.md, session 17). Like the
// row map it is a reader's cache: the first read-only search of a
// generation writes it, later ones map it, and it is keyed by what it is
// derived from (the neighbour table's checksum, time and rows, and the
// weights), so a table a writer replaced, or other weights, make it
// unused and rewritten. Being a cache, it is left out of the seal.
const (
	sessCacheFile = "sessctx.bin"
	// Version 2 adds the title spans (titleSpans), an int32 a row after
	// the links: worked out by a cold search's first term they cost ~7 ms
	// of CPU at 1,000,000 exchanges (docs/BENCHMARKS.md, session 26); a
	// version 1 file is not read, and the next search writes version 2.
	// Version 3 adds SessionLenPow to the key: the lengths it holds are
	// bent by it, and a version 2 file holds them unbent.
	sessCacheMagic = "GMSCTX\x00\x03"
	// magic, rows, the table's checksum, its time, w, a, ref, pow, and the
	// four means; 8-aligned, so the float columns read in place.
	sessCacheHeader = 8 + 4 + 4 + 8 + 4*8 + 4*8
)

// sessCacheKey is what a session cache is derived from.
type sessCacheKey struct {
	n         int
	ctxCRC    uint32
	ctxMTime  int64
	w, a, ref float64
	pow       float64
}

// cachedSessionCtx is a reader's sessionCtx of the neighbour table rows
// mapped in f: the one the first reader of this table saved, or one worked
// out here and saved for the next.
func (ix *Index) cachedSessionCtx(rows []ctxRow, f *ctxFile) *sessionCtx {
	key, ok := ix.sessCacheKeyOf(f, len(rows))
	if !ok {
		return newSessionCtx(rows, f)
	}
	if c := ix.loadSessCache(rows, f, key); c != nil {
		return c
	}
	c := newSessionCtx(rows, f)
	ix.saveSessCache(c, key)
	return c
}

// sessCacheKeyOf returns the key of the neighbour table mapped in f with n
// rows (checked by mapContext), for the current weights.
func (ix *Index) sessCacheKeyOf(f *ctxFile, n int) (sessCacheKey, bool) {
	if f == nil || len(f.b) < 16 {
		return sessCacheKey{}, false
	}
	fi, err := os.Stat(filepath.Join(ix.dir, contextFile))
	if err != nil {
		return sessCacheKey{}, false
	}
	return sessCacheKey{n: n, ctxCRC: binary.LittleEndian.Uint32(f.b[12:]), ctxMTime: fi.ModTime().UnixNano(),
		w: ContextWeight, a: AskedWeight, ref: ContextLenRef, pow: SessionLenPow}, true
}

// loadSessCache maps the saved session cache and returns the sessionCtx it
// holds for rows, or nil when there is none for key, or it is damaged (its
// checksum, or a link out of range).
func (ix *Index) loadSessCache(rows []ctxRow, f *ctxFile, key sessCacheKey) *sessionCtx {
	if !hostLittleEndian {
		return nil
	}
	b, unmap, err := mapfile.ReadOnly(filepath.Join(ix.dir, sessCacheFile))
	if err != nil {
		return nil
	}
	c := parseSessCache(b, rows, key)
	if c == nil {
		unmap()
		return nil
	}
	c.file = f
	// Every session-bm25 search reads most of it: a long-lived process
	// that gives back its mapped pages (DropResident) keeps these.
	mapfile.KeepResident(b)
	// The columns are slices of the mapping: unmapped when c is gone
	// (whoever reads them holds c).
	runtime.AddCleanup(c, func(f func()) { f() }, unmap)
	return c
}

// parseSessCache reads a session cache in place (b must outlive the
// result; b's start 8-aligned, as a mapping's is).
func parseSessCache(b []byte, rows []ctxRow, key sessCacheKey) *sessionCtx {
	n := key.n
	size := sessCacheHeader + n*(4*8+8+4) + 4
	if len(b) != size || string(b[:8]) != sessCacheMagic || int(binary.LittleEndian.Uint32(b[8:])) != n ||
		len(rows) != n || uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		return nil
	}
	le := binary.LittleEndian
	f64 := func(at int) float64 { return math.Float64frombits(le.Uint64(b[at:])) }
	if le.Uint32(b[12:]) != key.ctxCRC || int64(le.Uint64(b[16:])) != key.ctxMTime ||
		f64(24) != key.w || f64(32) != key.a || f64(40) != key.ref || f64(48) != key.pow {
		return nil
	}
	col := func(i int) []float64 {
		if n == 0 {
			return nil
		}
		return unsafe.Slice((*float64)(unsafe.Pointer(&b[sessCacheHeader+i*8*n])), n)
	}
	c := &sessionCtx{rows: rows, w: key.w, a: key.a, ref: key.ref, pow: key.pow,
		avgdl: f64(56), outAvg: f64(64), plainAvg: f64(72), titleAvg: f64(80),
		weight: col(0), dl: col(1), outDL: col(2), titleDL: col(3)}
	if n > 0 {
		c.links = unsafe.Slice((*link)(unsafe.Pointer(&b[sessCacheHeader+4*8*n])), n)
	}
	spansAt := sessCacheHeader + 5*8*n
	var spans []int32
	if n > 0 {
		spans = unsafe.Slice((*int32)(unsafe.Pointer(&b[spansAt])), n)
	}
	// The scorer indexes rows by these links and spans: every link must be
	// a row, every span end within the table. They are checked with the
	// checksum's pass over them (checkChunk).
	linksAt := sessCacheHeader + 4*8*n
	crc := crc32.Checksum(b[:linksAt], crcTable)
	ok := true
	const per = checkChunk / 8
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		crc = crc32.Update(crc, crcTable, b[linksAt+8*lo:linksAt+8*hi])
		ok = ok && linksIn(c.links[lo:hi], n)
	}
	for lo := 0; lo < n; lo += 2 * per {
		hi := min(lo+2*per, n)
		crc = crc32.Update(crc, crcTable, b[spansAt+4*lo:spansAt+4*hi])
		ok = ok && spansIn(spans[lo:hi], lo, n)
	}
	if !ok || crc != le.Uint32(b[size-4:]) {
		return nil
	}
	c.titleOnce.Do(func() {}) // titleDL and titleAvg come filled
	c.spanOnce.Do(func() { c.spans = spans })
	return c
}

// linksIn reports whether every link of ls is a row of n or -1.
func linksIn(ls []link, n int) bool {
	for _, l := range ls {
		if l.prev < -1 || int(l.prev) >= n || l.next < -1 || int(l.next) >= n {
			return false
		}
	}
	return true
}

// spansIn reports whether every span of ss (the spans of rows first, …)
// ends within a table of n rows: 0 ≤ span ≤ n − row.
func spansIn(ss []int32, first, n int) bool {
	for i, l := range ss {
		if l < 0 || int(l) > n-(first+i) {
			return false
		}
	}
	return true
}

// encodeSessCache is the cache file of c (its titles filled) for key.
func encodeSessCache(c *sessionCtx, key sessCacheKey) []byte {
	n := key.n
	b := make([]byte, 0, sessCacheHeader+n*(4*8+8+4)+4)
	le := binary.LittleEndian
	b = append(b, sessCacheMagic...)
	b = le.AppendUint32(b, uint32(n))
	b = le.AppendUint32(b, key.ctxCRC)
	b = le.AppendUint64(b, uint64(key.ctxMTime))
	for _, v := range []float64{key.w, key.a, key.ref, key.pow, c.avgdl, c.outAvg, c.plainAvg, c.titleAvg} {
		b = le.AppendUint64(b, math.Float64bits(v))
	}
	for _, col := range [][]float64{c.weight, c.dl, c.outDL, c.titleDL} {
		for _, v := range col {
			b = le.AppendUint64(b, math.Float64bits(v))
		}
	}
	for _, l := range c.links {
		b = le.AppendUint32(b, uint32(l.prev))
		b = le.AppendUint32(b, uint32(l.next))
	}
	for _, l := range c.titleSpans() {
		b = le.AppendUint32(b, uint32(l))
	}
	return le.AppendUint32(b, crc32.Checksum(b, crcTable))
}

// saveSessCache writes c's cache for key (best effort, as the row map's):
// a temporary file renamed over the old one, so a reader maps either
// whole. Written only when the neighbour table is still the one c was
// made from.
func (ix *Index) saveSessCache(c *sessionCtx, key sessCacheKey) {
	c.titles()
	b := encodeSessCache(c, key)
	tmp, err := os.CreateTemp(ix.dir, sessCacheFile+".tmp*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if fi, err := os.Stat(filepath.Join(ix.dir, contextFile)); werr != nil || cerr != nil || err != nil ||
		fi.ModTime().UnixNano() != key.ctxMTime || os.Rename(tmp.Name(), filepath.Join(ix.dir, sessCacheFile)) != nil {
		os.Remove(tmp.Name())
	}
}
