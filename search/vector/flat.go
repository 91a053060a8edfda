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
	"unsafe"

	"github.com/viterin/vek/vek32"
)

// ErrCorrupt marks a vector file that cannot be trusted (short, bad header,
// checksum mismatch). The index layer turns it into "run git mem reindex".
var ErrCorrupt = errors.New("corrupt vector file")

const (
	flatMagic  = "GMVEC\x00\x01\x00"
	headerSize = 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Flat is a row-major matrix of unit vectors. Row i belongs to document row
// i of the index.
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
	switch {
	case i == f.Len():
		f.Data = append(f.Data, v...)
	case i < f.Len():
		copy(f.Row(i), v)
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

// Write stores the matrix at path atomically (temp file + rename): header
// (magic, dims, count, CRC-32C of the payload), then the rows as
// little-endian float32.
func (f *Flat) Write(path string) error {
	payload := floatBytes(f.Data)
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
	if dims <= 0 || len(payload) != dims*n*4 {
		return nil, fmt.Errorf("%s: %w: %d bytes for %d×%d vectors", path, ErrCorrupt, len(payload), n, dims)
	}
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, fmt.Errorf("%s: %w: checksum mismatch", path, ErrCorrupt)
	}
	return &Flat{Dims: dims, Data: bytesFloat(payload)}, nil
}

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// floatBytes views floats as little-endian bytes (copying only on a
// big-endian host).
func floatBytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
	}
	b := make([]byte, len(v)*4)
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(x))
	}
	return b
}

// bytesFloat is the inverse of floatBytes; it copies when b is not aligned.
func bytesFloat(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
	}
	return out
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
