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
// i of the index. Rows are stored as int8 with one float32 scale per row (4×
// smaller on disk, cosine error well under 1%); Set already rounds a vector
// to that precision, so a writer and a later reader rank identically.
type Flat struct {
	Dims int
	Data []float32 // len = Dims * Len()
}

// NewFlat returns an empty matrix of the given width.
func NewFlat(dims int) *Flat { return &Flat{Dims: dims} }

// Len is the number of rows.
func (f *Flat) Len() int {
	if f.Dims == 0 {
		return 0
	}
	return len(f.Data) / f.Dims
}

// Row returns row i (a view, not a copy).
func (f *Flat) Row(i int) []float32 { return f.Data[i*f.Dims : (i+1)*f.Dims] }

// Set writes v at row i, appending when i == Len().
func (f *Flat) Set(i int, v []float32) error {
	if len(v) != f.Dims {
		return fmt.Errorf("vector has %d dims, index has %d", len(v), f.Dims)
	}
	q := make([]int8, len(v))
	scale := quantize(v, q)
	switch {
	case i == f.Len():
		f.Data = append(f.Data, make([]float32, f.Dims)...)
		dequantize(q, scale, f.Row(i))
	case i < f.Len():
		dequantize(q, scale, f.Row(i))
	default:
		return fmt.Errorf("vector row %d past the end (%d rows)", i, f.Len())
	}
	return nil
}

// Scores returns the dot product of q with every row (the cosine, rows and
// query being unit vectors), using SIMD when the CPU has it.
func (f *Flat) Scores(q []float32) []float32 {
	n := f.Len()
	out := make([]float32, n)
	if len(q) != f.Dims || n == 0 {
		return out
	}
	d := f.Dims
	for i := range out {
		out[i] = vek32.Dot(f.Data[i*d:(i+1)*d], q)
	}
	return out
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
// (magic, dims, count, CRC-32C of the payload), then per row a little-endian
// float32 scale and dims int8 values.
func (f *Flat) Write(path string) error {
	rowBytes := 4 + f.Dims
	payload := make([]byte, f.Len()*rowBytes)
	q := make([]int8, f.Dims)
	for i := 0; i < f.Len(); i++ {
		b := payload[i*rowBytes:]
		scale := quantize(f.Row(i), q)
		binary.LittleEndian.PutUint32(b, math.Float32bits(scale))
		for j, x := range q {
			b[4+j] = byte(x)
		}
	}
	hdr := make([]byte, headerSize)
	copy(hdr, flatMagic)
	binary.LittleEndian.PutUint32(hdr[8:], uint32(f.Dims))
	binary.LittleEndian.PutUint32(hdr[12:], uint32(f.Len()))
	binary.LittleEndian.PutUint32(hdr[16:], crc32.Checksum(payload, castagnoli))
	return writeAtomic(path, hdr, payload)
}

// ReadFlat loads a matrix written by Write. A missing file is returned as
// is (os.ErrNotExist); anything malformed wraps ErrCorrupt.
func ReadFlat(path string) (*Flat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < headerSize || string(b[:8]) != flatMagic {
		return nil, fmt.Errorf("%s: %w: bad header", path, ErrCorrupt)
	}
	dims := int(binary.LittleEndian.Uint32(b[8:]))
	n := int(binary.LittleEndian.Uint32(b[12:]))
	sum := binary.LittleEndian.Uint32(b[16:])
	payload := b[headerSize:]
	if dims <= 0 || len(payload) != (4+dims)*n {
		return nil, fmt.Errorf("%s: %w: %d bytes for %d×%d vectors", path, ErrCorrupt, len(payload), n, dims)
	}
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, fmt.Errorf("%s: %w: checksum mismatch", path, ErrCorrupt)
	}
	f := &Flat{Dims: dims, Data: make([]float32, n*dims)}
	rowBytes := 4 + dims
	for i := 0; i < n; i++ {
		b := payload[i*rowBytes : (i+1)*rowBytes]
		scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
		row := f.Data[i*dims : (i+1)*dims]
		for j, x := range b[4:] {
			row[j] = float32(int8(x)) * scale
		}
	}
	return f, nil
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
