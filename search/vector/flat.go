// Package vector holds the embeddings of git mem's distilled-vector layer:
// an exact flat cosine scan (the default: at the sizes a personal memory
// reaches it beats a graph once process start is counted) and an HNSW graph
// for very large memories.
package vector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/viterin/vek/vek32"
)

// ErrCorrupt marks a vector file that cannot be trusted (short, bad header,
// checksum mismatch). The index layer turns it into "run git mem reindex".
var ErrCorrupt = errors.New("corrupt vector file")

const (
	flatMagic  = "GMVEC\x00\x03\x00"
	headerSize = 24
	// flagSparse: rows are stored as [scale][bitmap of the non-zero
	// dimensions][those values], after a table of every 64th row's offset.
	flagSparse = 1
	blockRows  = 64
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Flat is a row-major matrix of unit vectors. Row i belongs to document row
// i of the index. Rows are kept as int8 with one float32 scale per row: 4×
// smaller than float32, cosine error well under 1%. Set rounds a vector to
// that precision, so a writer and a later reader rank identically.
//
// On disk a matrix is dense (each row [scale f32][Dims × int8], as a writer
// keeps it in memory) or sparse ([scale f32][bitmap][the non-zero int8s]),
// whichever is smaller: the builtin embedder's rows are half zeros (a card's
// few hundred hashed features in 384 buckets), so sparse rows are 233 bytes
// against 388 (38.8 → 23.3 MB at 100,000 exchanges), while a dense model's
// rows stay dense. A reader scores straight from the mapped file's bytes
// either way: a sparse row is spread into the same float buffer a dense row
// is widened into, so every score is the same float.
//
// A matrix read from a sparse file keeps its rows there and takes new rows
// dense after them, so a writer that only appends (an add) writes the old
// rows' bytes as they are instead of encoding every row again.
//
// A file is appended to (Append): after the image Write made (header,
// block table, rows) come more rows in the same layout, and the file's
// State — rows, committed length, CRC-32C of those bytes — is kept by the
// caller (the index's manifest), not in the header, which describes the
// image only. ReadFlatState reads a file by its State: the rows past the
// image are walked like the image's, bytes past the committed length (a
// killed writer's) are never read.
type Flat struct {
	Dims   int
	sp     *sparse // rows [0, sp.n), mapped; nil: none
	buf    []byte  // the rows after them, dense: [scale f32 LE][Dims × int8] each
	mapped []byte  // the file's memory map behind buf or sp, when read by ReadFlat
	// kept: rows [0, kept) are the file's (read or written) unchanged, so
	// Append writes only the rows after them; fileSparse is that file's
	// layout.
	kept       int
	fileSparse bool
	// hollow (OpenAppend): the State of the file whose rows [0, sp.n) are
	// not read; Fill reads them.
	hollow *State
}

// State is what commits a vector file: its rows, its length and the
// CRC-32C of its bytes up to that length.
type State struct {
	Rows int    `json:"rows"`
	Size int64  `json:"size"`
	CRC  uint32 `json:"crc32c"`
}

// sparse is a mapped sparse matrix (read-only; Set makes it dense first).
type sparse struct {
	n      int
	blocks []byte // (n+63)/64 × u64: offset of rows 0, 64, 128… in rows
	rows   []byte
}

// NewFlat returns an empty matrix of the given width.
func NewFlat(dims int) *Flat { return &Flat{Dims: dims} }

func (f *Flat) rowBytes() int { return 4 + f.Dims }

func bitmapBytes(dims int) int { return (dims + 7) / 8 }

// base is the number of rows kept sparse.
func (f *Flat) base() int {
	if f.sp == nil {
		return 0
	}
	return f.sp.n
}

// Len is the number of rows.
func (f *Flat) Len() int {
	if f.Dims <= 0 {
		return 0
	}
	return f.base() + len(f.buf)/f.rowBytes()
}

// raw returns dense row i's scale and its int8 values (i ≥ base()).
func (f *Flat) raw(i int) (float32, []int8) {
	i -= f.base()
	b := f.buf[i*f.rowBytes() : (i+1)*f.rowBytes()]
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), unsafe.Slice((*int8)(unsafe.Pointer(&b[4])), f.Dims)
}

// sparseRowLen is the length of the sparse row at the start of b.
func sparseRowLen(b []byte, dims int) int {
	bm := b[4 : 4+bitmapBytes(dims)]
	nz := 0
	for len(bm) >= 8 {
		nz += bits.OnesCount64(binary.LittleEndian.Uint64(bm))
		bm = bm[8:]
	}
	for _, x := range bm {
		nz += bits.OnesCount8(x)
	}
	return 4 + bitmapBytes(dims) + nz
}

// sparseOff is where sparse row i starts in sp.rows.
func (f *Flat) sparseOff(i int) int {
	f.mustBeRead()
	off := int(binary.LittleEndian.Uint64(f.sp.blocks[8*(i/blockRows):]))
	for r := i - i%blockRows; r < i; r++ {
		off += sparseRowLen(f.sp.rows[off:], f.Dims)
	}
	return off
}

// spreadRow writes the sparse row at the start of b into out (dims wide:
// zeros where the bitmap has none) and returns its scale and length. The
// caller has checked the row's extent (parseFlat).
func spreadRow[T float32 | int8](b []byte, dims int, out []T) (float32, int) {
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	clear(out)
	bm := b[4 : 4+bitmapBytes(dims)]
	vals := b[4+len(bm):]
	k := 0
	for w := 0; w < len(bm); w += 8 {
		var word uint64
		if w+8 <= len(bm) {
			word = binary.LittleEndian.Uint64(bm[w:])
		} else {
			for j := len(bm) - 1; j >= w; j-- {
				word = word<<8 | uint64(bm[j])
			}
		}
		for word != 0 {
			j := w*8 + bits.TrailingZeros64(word)
			out[j] = T(int8(vals[k]))
			k++
			word &= word - 1
		}
	}
	return scale, 4 + len(bm) + k
}

// rowInt8 copies row i's int8 values into q and returns its scale.
func (f *Flat) rowInt8(i int, q []int8) float32 {
	if i < f.base() {
		scale, _ := spreadRow(f.sp.rows[f.sparseOff(i):], f.Dims, q)
		return scale
	}
	scale, r := f.raw(i)
	copy(q, r)
	return scale
}

// Row returns a float32 copy of row i.
func (f *Flat) Row(i int) []float32 {
	out := make([]float32, f.Dims)
	q := make([]int8, f.Dims)
	dequantize(q, f.rowInt8(i, q), out)
	return out
}

// Floats returns every row as float32 (for the HNSW graph, which computes
// many distances per row).
func (f *Flat) Floats() []float32 {
	out := make([]float32, f.Len()*f.Dims)
	q := make([]int8, f.Dims)
	for i := 0; i < f.Len(); i++ {
		dequantize(q, f.rowInt8(i, q), out[i*f.Dims:(i+1)*f.Dims])
	}
	return out
}

// dense turns a mapped sparse matrix into the dense rows a writer changes.
func (f *Flat) dense() {
	if f.sp == nil {
		return
	}
	f.mustBeRead()
	n := f.sp.n
	buf := make([]byte, n*f.rowBytes(), n*f.rowBytes()+len(f.buf)+(n/32+64)*f.rowBytes())
	off := 0
	for i := 0; i < n; i++ {
		b := buf[i*f.rowBytes() : (i+1)*f.rowBytes()]
		scale, l := spreadRow(f.sp.rows[off:], f.Dims, unsafe.Slice((*int8)(unsafe.Pointer(&b[4])), f.Dims))
		binary.LittleEndian.PutUint32(b, math.Float32bits(scale))
		off += l
	}
	f.buf, f.sp = append(buf, f.buf...), nil
}

// Set writes v at row i, appending when i == Len().
func (f *Flat) Set(i int, v []float32) error {
	if len(v) != f.Dims {
		return fmt.Errorf("vector has %d dims, index has %d", len(v), f.Dims)
	}
	switch {
	case i < f.base():
		f.dense() // a row replaced or emptied: rare, and never in an add of new ids
	case i == f.Len():
		f.buf = append(f.buf, make([]byte, f.rowBytes())...)
	case i > f.Len():
		return fmt.Errorf("vector row %d past the end (%d rows)", i, f.Len())
	}
	f.kept = min(f.kept, i)
	i -= f.base()
	b := f.buf[i*f.rowBytes() : (i+1)*f.rowBytes()]
	q := unsafe.Slice((*int8)(unsafe.Pointer(&b[4])), f.Dims)
	scale := quantize(v, q)
	binary.LittleEndian.PutUint32(b, math.Float32bits(scale))
	return nil
}

// Scores returns the dot product of q with every row (the cosine, rows and
// query being unit vectors). Each row is widened into a small buffer and
// multiplied with SIMD (vek32).
func (f *Flat) Scores(q []float32) []float32 {
	n := f.Len()
	out := make([]float32, n)
	if len(q) != f.Dims || n == 0 {
		return out
	}
	// Large scans are split over the CPUs (rows are independent, so the
	// result does not depend on the split).
	workers := min(runtime.GOMAXPROCS(0), n/4096)
	if workers <= 1 {
		f.scoreRows(q, out, 0, n)
		return out
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	chunk = (chunk + blockRows - 1) / blockRows * blockRows // a sparse chunk starts at a block
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f.scoreRows(q, out, lo, hi)
		}(lo, min(lo+chunk, n))
	}
	wg.Wait()
	return out
}

func (f *Flat) scoreRows(q, out []float32, lo, hi int) {
	tmp := make([]float32, f.Dims)
	if lo < f.base() {
		off := f.sparseOff(lo)
		for ; lo < min(hi, f.base()); lo++ {
			scale, l := spreadRow(f.sp.rows[off:], f.Dims, tmp)
			off += l
			out[lo] = vek32.Dot(tmp, q) * scale
		}
	}
	for i := lo; i < hi; i++ {
		scale, r := f.raw(i)
		for j, x := range r {
			tmp[j] = float32(x)
		}
		out[i] = vek32.Dot(tmp, q) * scale
	}
}

// quantize writes v as int8 into q and returns the scale (max |x| / 127).
func quantize(v []float32, q []int8) float32 {
	var m float32
	for _, x := range v {
		m = max(m, x, -x)
	}
	if m == 0 {
		clear(q)
		return 0
	}
	scale := m / 127
	for i, x := range v {
		q[i] = int8(math.Round(float64(x / scale)))
	}
	return scale
}

func dequantize(q []int8, scale float32, out []float32) {
	for i, x := range q {
		out[i] = float32(x) * scale
	}
}

// Write stores the matrix at path atomically (temp file + rename): header
// (magic, dims, count, CRC-32C of everything after it, flags), then the
// rows, sparse when that is smaller (see Flat).
func (f *Flat) Write(path string) error {
	_, err := f.WriteState(path)
	return err
}

// WriteState is Write, returning the file's State.
func (f *Flat) WriteState(path string) (State, error) {
	n := f.Len()
	hdr := make([]byte, headerSize)
	copy(hdr, flatMagic)
	binary.LittleEndian.PutUint32(hdr[8:], uint32(f.Dims))
	binary.LittleEndian.PutUint32(hdr[12:], uint32(n))
	var parts [][]byte
	sparse := false
	if blocks, old, rows, ok := f.encodeSparse(); ok {
		binary.LittleEndian.PutUint32(hdr[20:], flagSparse)
		parts = [][]byte{blocks, old, rows}
		sparse = true
	} else {
		f.dense()
		parts = [][]byte{f.buf}
	}
	var crc uint32
	size := int64(len(hdr))
	for _, p := range parts {
		crc = crc32.Update(crc, castagnoli, p)
		size += int64(len(p))
	}
	binary.LittleEndian.PutUint32(hdr[16:], crc)
	all := crc32.Checksum(hdr, castagnoli)
	for _, p := range parts {
		all = crc32.Update(all, castagnoli, p)
	}
	err := writeAtomic(path, append([][]byte{hdr}, parts...)...)
	runtime.KeepAlive(f) // the kept rows may lie in its mapping
	if err != nil {
		return State{}, err
	}
	f.kept, f.fileSparse = n, sparse
	return State{Rows: n, Size: size, CRC: all}, nil
}

// CanAppend reports whether Append can commit the matrix onto the file
// whose State is st: its rows are still the matrix's first rows.
func (f *Flat) CanAppend(st State) bool {
	return f.kept == st.Rows && st.Rows >= f.base() && st.Rows <= f.Len() && st.Size > 0
}

// Append writes the rows after st.Rows at the end of the file at path
// (cut to st.Size first: anything past it is a killed writer's), in the
// file's layout, and returns the new State. The caller commits it (the
// index's manifest); until then readers read the file by st.
func (f *Flat) Append(path string, st State) (State, error) {
	if !f.CanAppend(st) {
		return State{}, fmt.Errorf("append %s: rows changed since it was read", path)
	}
	var b []byte
	if f.fileSparse {
		bm := make([]byte, bitmapBytes(f.Dims))
		b = make([]byte, 0, (f.Len()-st.Rows)*f.rowBytes())
		for i := st.Rows; i < f.Len(); i++ {
			scale, q := f.raw(i)
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(scale))
			b = appendSparse(b, bm, unsafe.Slice((*byte)(unsafe.Pointer(&q[0])), len(q)))
		}
	} else {
		b = f.buf[(st.Rows-f.base())*f.rowBytes():]
	}
	fh, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return State{}, fmt.Errorf("append %s: %w", path, err)
	}
	fi, err := fh.Stat()
	if err == nil && fi.Size() < st.Size {
		err = fmt.Errorf("%d bytes, %d committed", fi.Size(), st.Size)
	}
	if err == nil && fi.Size() > st.Size {
		err = fh.Truncate(st.Size)
	}
	if err == nil {
		_, err = fh.WriteAt(b, st.Size)
	}
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return State{}, fmt.Errorf("append %s: %w", path, err)
	}
	f.kept = f.Len()
	return State{Rows: f.Len(), Size: st.Size + int64(len(b)), CRC: crc32.Update(st.CRC, castagnoli, b)}, nil
}

// encodeSparse returns the sparse layout's block table and rows, or false
// when it would not be smaller than the dense rows. Rows kept sparse are
// written as they are: old is those rows' bytes (in the file read, not
// copied: a copy of 23 MB at 100,000 rows was the largest of a writer's
// page faults), rows the rows encoded after them.
func (f *Flat) encodeSparse() (blocks, old, rows []byte, ok bool) {
	f.mustBeRead()
	n := f.Len()
	if f.Dims <= 0 || n == 0 {
		return nil, nil, nil, false
	}
	dense := n * f.rowBytes()
	nb := (n + blockRows - 1) / blockRows
	blocks = make([]byte, 0, 8*nb)
	start := f.base()
	if f.sp != nil {
		blocks = append(blocks, f.sp.blocks...)
		old = f.sp.rows
		rows = make([]byte, 0, (n-start)*f.rowBytes()*2/3)
	} else {
		rows = make([]byte, 0, dense/2)
	}
	bm := make([]byte, bitmapBytes(f.Dims))
	for i := start; i < n; i++ {
		if i%blockRows == 0 {
			blocks = binary.LittleEndian.AppendUint64(blocks, uint64(len(old)+len(rows)))
		}
		scale, q := f.raw(i)
		rows = binary.LittleEndian.AppendUint32(rows, math.Float32bits(scale))
		rows = appendSparse(rows, bm, unsafe.Slice((*byte)(unsafe.Pointer(&q[0])), len(q)))
		if len(blocks)+len(old)+len(rows) >= dense {
			return nil, nil, nil, false
		}
	}
	return blocks, old, rows, true
}

// appendSparse appends q's bitmap of non-zero bytes and those bytes; bm is
// scratch of bitmapBytes(len(q)). Eight bytes at a time: an all-zero word
// (half of the builtin embedder's) costs one test.
func appendSparse(rows, bm, q []byte) []byte {
	clear(bm)
	at := len(rows)
	rows = append(rows, bm...) // the bitmap's place
	j := 0
	for ; j+8 <= len(q); j += 8 {
		w := binary.LittleEndian.Uint64(q[j:])
		if w == 0 {
			continue
		}
		var m byte
		for k := 0; k < 8; k++ {
			if x := byte(w >> (8 * k)); x != 0 {
				m |= 1 << k
				rows = append(rows, x)
			}
		}
		bm[j/8] = m
	}
	for ; j < len(q); j++ {
		if q[j] != 0 {
			bm[j/8] |= 1 << (j % 8)
			rows = append(rows, q[j])
		}
	}
	copy(rows[at:], bm)
	return rows
}

// ReadFlat loads a matrix written by Write. A missing file is returned as
// is (os.ErrNotExist); anything malformed wraps ErrCorrupt.
//
// The file is memory-mapped (private, copy-on-write), not read: a CLI
// search then pays for the pages it touches once, with no copy of the whole
// matrix (38 MB at 100k exchanges). Close releases the mapping.
func ReadFlat(path string) (*Flat, error) { return readFlat(path, nil) }

// ReadFlatState reads a file that may have been appended to by its State
// (see Flat): its checksum is st.CRC over st.Size bytes, its rows st.Rows.
func ReadFlatState(path string, st State) (*Flat, error) { return readFlat(path, &st) }

func readFlat(path string, st *State) (*Flat, error) {
	b, mapped, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	f, err := parseFlat(path, b, st)
	if err != nil {
		if mapped {
			_ = syscall.Munmap(b)
		}
		return nil, err
	}
	if mapped {
		f.mapped = b
	}
	return f, nil
}

// mapFile maps path read-only-shared-on-disk, writable-private in memory;
// where mapping is not possible it reads the file.
func mapFile(path string) (b []byte, mapped bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, false, err
	}
	if fi.Size() > 0 && fi.Size() < 1<<40 {
		if b, err := syscall.Mmap(int(fh.Fd()), 0, int(fi.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE); err == nil {
			return b, true, nil
		}
	}
	b, err = os.ReadFile(path)
	return b, false, err
}

// Close releases the file mapping; the Flat must not be used afterwards.
func (f *Flat) Close() error {
	if f == nil || f.mapped == nil {
		return nil
	}
	err := syscall.Munmap(f.mapped)
	f.mapped, f.buf, f.sp = nil, nil, nil
	return err
}

// OpenAppend returns the matrix of the file st commits for a writer that
// adds rows and reads none of the file's: only the header is read (and the
// file's length checked), so that Len, Set of a new row, CanAppend and
// Append work at once, and the rows' bytes — 223 MB at 1,000,000 rows,
// whose checksum and walk were 0.34 s of an add of 1,000 exchanges — are
// neither read nor checked. Anything that reads a row of the file (Row,
// Scores, Search, Set of such a row, WriteState, BuildHNSW) needs Fill
// first, which reads and checks them as ReadFlatState does; before it,
// such a read panics. Append extends st's checksum over the new rows only,
// so a damaged row of the file still fails the checksum of the State it
// commits.
func OpenAppend(path string, st State) (*Flat, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	var h [headerSize]byte
	if _, err := io.ReadFull(fh, h[:]); err != nil || string(h[:8]) != flatMagic {
		return nil, fmt.Errorf("%s: %w: bad header", path, ErrCorrupt)
	}
	dims := int(binary.LittleEndian.Uint32(h[8:]))
	n0 := int(binary.LittleEndian.Uint32(h[12:]))
	flags := binary.LittleEndian.Uint32(h[20:])
	if dims <= 0 || flags&^flagSparse != 0 {
		return nil, fmt.Errorf("%s: %w: %d dims, flags %#x", path, ErrCorrupt, dims, flags)
	}
	if st.Size < headerSize || fi.Size() < st.Size || st.Rows < n0 {
		return nil, fmt.Errorf("%s: %w: %d bytes, %d rows in the image; committed %d bytes, %d rows", path, ErrCorrupt, fi.Size(), n0, st.Size, st.Rows)
	}
	return &Flat{Dims: dims, sp: &sparse{n: st.Rows}, kept: st.Rows, fileSparse: flags&flagSparse != 0, hollow: &st}, nil
}

// Hollow reports whether the file's rows are still unread (OpenAppend).
func (f *Flat) Hollow() bool { return f.hollow != nil }

// Fill reads the rows OpenAppend left unread, from path by the State it
// was given (rows appended since lie after them, unchanged), checked as
// ReadFlatState checks a file; the rows added since stay as they are.
func (f *Flat) Fill(path string) error {
	if f.hollow == nil {
		return nil
	}
	g, err := ReadFlatState(path, *f.hollow)
	if err != nil {
		return err
	}
	if g.Dims != f.Dims || g.Len() != f.hollow.Rows || g.fileSparse != f.fileSparse {
		g.Close()
		return fmt.Errorf("%s: %w: %d×%d vectors, opened as %d×%d", path, ErrCorrupt, g.Len(), g.Dims, f.hollow.Rows, f.Dims)
	}
	if len(f.buf) > 0 {
		g.buf = append(g.buf[:len(g.buf):len(g.buf)], f.buf...) // not into a mapping
	}
	g.kept = f.kept
	*f = *g
	return nil
}

func (f *Flat) mustBeRead() {
	if f.hollow != nil {
		panic("vector: a row of a matrix opened by OpenAppend read before Fill")
	}
}

// parseFlat parses a file Write made (st nil: its header says its rows
// and checksum) or one appended to since (st: its State says them; the
// header describes the image Write made, which the rows after it continue).
func parseFlat(path string, b []byte, st *State) (*Flat, error) {
	if len(b) < headerSize || string(b[:8]) != flatMagic {
		return nil, fmt.Errorf("%s: %w: bad header", path, ErrCorrupt)
	}
	dims := int(binary.LittleEndian.Uint32(b[8:]))
	n0 := int(binary.LittleEndian.Uint32(b[12:])) // the rows of the image
	sum := binary.LittleEndian.Uint32(b[16:])
	flags := binary.LittleEndian.Uint32(b[20:])
	n := n0
	if st != nil {
		if st.Size < headerSize || int64(len(b)) < st.Size || st.Rows < n0 {
			return nil, fmt.Errorf("%s: %w: %d bytes, %d rows in the image; committed %d bytes, %d rows", path, ErrCorrupt, len(b), n0, st.Size, st.Rows)
		}
		b, n = b[:st.Size], st.Rows
	}
	payload := b[headerSize:]
	if dims <= 0 || flags&^flagSparse != 0 {
		return nil, fmt.Errorf("%s: %w: %d dims, flags %#x", path, ErrCorrupt, dims, flags)
	}
	if st == nil && crc32.Checksum(payload, castagnoli) != sum ||
		st != nil && crc32.Checksum(b, castagnoli) != st.CRC {
		return nil, fmt.Errorf("%s: %w: checksum mismatch", path, ErrCorrupt)
	}
	if flags&flagSparse == 0 {
		if int64(len(payload)) != int64(4+dims)*int64(n) {
			return nil, fmt.Errorf("%s: %w: %d bytes for %d×%d vectors", path, ErrCorrupt, len(payload), n, dims)
		}
		return &Flat{Dims: dims, buf: payload[:len(payload):len(payload)], kept: n}, nil
	}
	nb := (n0 + blockRows - 1) / blockRows
	if uint64(len(payload)) < 8*uint64(nb) {
		return nil, fmt.Errorf("%s: %w: %d bytes for %d row blocks", path, ErrCorrupt, len(payload), nb)
	}
	sp := &sparse{n: n, blocks: payload[:8*nb], rows: payload[8*nb:]}
	if n > n0 && (n+blockRows-1)/blockRows > nb {
		// Appended rows have no block table on disk: theirs is made here,
		// while every row's extent is walked anyway.
		sp.blocks = append(make([]byte, 0, 8*((n+blockRows-1)/blockRows)), sp.blocks...)
	}
	// Every row's extent is checked once, so that no later read runs off
	// the end (the checksum proves the bytes, not that a writer was right).
	off, min := 0, 4+bitmapBytes(dims)
	for i := 0; i < n; i++ {
		if i%blockRows == 0 && i/blockRows >= nb {
			sp.blocks = binary.LittleEndian.AppendUint64(sp.blocks, uint64(off))
		}
		if i%blockRows == 0 && binary.LittleEndian.Uint64(sp.blocks[8*(i/blockRows):]) != uint64(off) {
			return nil, fmt.Errorf("%s: %w: row %d is not where its block says", path, ErrCorrupt, i)
		}
		if len(sp.rows)-off < min {
			return nil, fmt.Errorf("%s: %w: row %d truncated", path, ErrCorrupt, i)
		}
		if pad := dims % 8; pad != 0 && sp.rows[off+min-1]>>pad != 0 {
			return nil, fmt.Errorf("%s: %w: row %d marks a dimension past %d", path, ErrCorrupt, i, dims)
		}
		l := sparseRowLen(sp.rows[off:], dims)
		if len(sp.rows)-off < l {
			return nil, fmt.Errorf("%s: %w: row %d truncated", path, ErrCorrupt, i)
		}
		off += l
	}
	if off != len(sp.rows) {
		return nil, fmt.Errorf("%s: %w: %d bytes after the last row", path, ErrCorrupt, len(sp.rows)-off)
	}
	return &Flat{Dims: dims, sp: sp, kept: n, fileSparse: true}, nil
}

func writeAtomic(path string, parts ...[]byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	for _, p := range parts {
		if _, err := tmp.Write(p); err != nil {
			tmp.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Search is the exact top-k by cosine among allowed rows (nil = all), best
// first, ties to the lower row.
func (f *Flat) Search(q []float32, k int, allowed func(int) bool) []Result {
	if k <= 0 {
		return nil
	}
	scores := f.Scores(q)
	var h maxHeap // worst of the kept on top (largest distance)
	for i, s := range scores {
		if allowed != nil && !allowed(i) {
			continue
		}
		nd := nodeDist{uint32(i), 1 - s}
		if h.len() < k {
			h.push(nd)
		} else if lessND(nd, h.top()) {
			h.pop()
			h.push(nd)
		}
	}
	out := make([]Result, h.len())
	for i := len(out) - 1; i >= 0; i-- {
		nd := h.pop()
		out[i] = Result{Row: int(nd.id), Score: 1 - nd.d}
	}
	return out
}

// MinFileSize is the smallest file Write produces for n rows of dims: every
// row sparse and all zeros, or the dense layout when that is smaller (narrow
// rows). DenseFileSize, the dense layout's size, is the largest.
func MinFileSize(dims, n int) int64 {
	if n == 0 {
		return headerSize
	}
	sparse := int64(headerSize) + 8*int64((n+blockRows-1)/blockRows) + int64(n)*int64(4+bitmapBytes(dims))
	return min(sparse, DenseFileSize(dims, n))
}

// DenseFileSize is the size of the dense layout of n rows of dims.
func DenseFileSize(dims, n int) int64 { return int64(headerSize) + int64(n)*int64(4+dims) }
