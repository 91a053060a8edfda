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
	"math"
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
	flatMagic  = "GMVEC\x00\x02\x00"
	headerSize = 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Flat is a row-major matrix of unit vectors. Row i belongs to document row
// i of the index. Rows are kept as int8 with one float32 scale per row, in
// memory exactly as on disk: 4× smaller than float32, cosine error well under
// 1%, and a reader scores straight from the file's bytes with no decoding
// pass or large allocation. Set rounds a vector to that precision, so a
// writer and a later reader rank identically.
type Flat struct {
	Dims   int
	buf    []byte // Len() rows of [scale f32 LE][Dims × int8]
	mapped []byte // the file's memory map behind buf, when read by ReadFlat
}

// NewFlat returns an empty matrix of the given width.
func NewFlat(dims int) *Flat { return &Flat{Dims: dims} }

func (f *Flat) rowBytes() int { return 4 + f.Dims }

// Len is the number of rows.
func (f *Flat) Len() int {
	if f.Dims <= 0 {
		return 0
	}
	return len(f.buf) / f.rowBytes()
}

// raw returns row i's scale and its int8 values.
func (f *Flat) raw(i int) (float32, []int8) {
	b := f.buf[i*f.rowBytes() : (i+1)*f.rowBytes()]
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), unsafe.Slice((*int8)(unsafe.Pointer(&b[4])), f.Dims)
}

// Row returns a float32 copy of row i.
func (f *Flat) Row(i int) []float32 {
	out := make([]float32, f.Dims)
	scale, q := f.raw(i)
	dequantize(q, scale, out)
	return out
}

// Floats returns every row as float32 (for the HNSW graph, which computes
// many distances per row).
func (f *Flat) Floats() []float32 {
	out := make([]float32, f.Len()*f.Dims)
	for i := 0; i < f.Len(); i++ {
		scale, q := f.raw(i)
		dequantize(q, scale, out[i*f.Dims:(i+1)*f.Dims])
	}
	return out
}

// Set writes v at row i, appending when i == Len().
func (f *Flat) Set(i int, v []float32) error {
	if len(v) != f.Dims {
		return fmt.Errorf("vector has %d dims, index has %d", len(v), f.Dims)
	}
	switch {
	case i == f.Len():
		f.buf = append(f.buf, make([]byte, f.rowBytes())...)
	case i > f.Len():
		return fmt.Errorf("vector row %d past the end (%d rows)", i, f.Len())
	}
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
// (magic, dims, count, CRC-32C of the payload), then the rows as kept in
// memory.
func (f *Flat) Write(path string) error {
	hdr := make([]byte, headerSize)
	copy(hdr, flatMagic)
	binary.LittleEndian.PutUint32(hdr[8:], uint32(f.Dims))
	binary.LittleEndian.PutUint32(hdr[12:], uint32(f.Len()))
	binary.LittleEndian.PutUint32(hdr[16:], crc32.Checksum(f.buf, castagnoli))
	return writeAtomic(path, hdr, f.buf)
}

// ReadFlat loads a matrix written by Write. A missing file is returned as
// is (os.ErrNotExist); anything malformed wraps ErrCorrupt.
//
// The file is memory-mapped (private, copy-on-write), not read: a CLI
// search then pays for the pages it touches once, with no copy of the whole
// matrix (38 MB at 100k exchanges). Close releases the mapping.
func ReadFlat(path string) (*Flat, error) {
	b, mapped, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	f, err := parseFlat(path, b)
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
	f.mapped, f.buf = nil, nil
	return err
}

func parseFlat(path string, b []byte) (*Flat, error) {
	if len(b) < headerSize || string(b[:8]) != flatMagic {
		return nil, fmt.Errorf("%s: %w: bad header", path, ErrCorrupt)
	}
	dims := int(binary.LittleEndian.Uint32(b[8:]))
	n := int(binary.LittleEndian.Uint32(b[12:]))
	sum := binary.LittleEndian.Uint32(b[16:])
	payload := b[headerSize:]
	if dims <= 0 || int64(len(payload)) != int64(4+dims)*int64(n) {
		return nil, fmt.Errorf("%s: %w: %d bytes for %d×%d vectors", path, ErrCorrupt, len(payload), n, dims)
	}
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, fmt.Errorf("%s: %w: checksum mismatch", path, ErrCorrupt)
	}
	return &Flat{Dims: dims, buf: payload}, nil
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

// FileSize is the size of the file Write produces for n rows of dims.
func FileSize(dims, n int) int64 { return int64(headerSize) + int64(n)*int64(4+dims) }
