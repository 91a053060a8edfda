package vector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// sparseish returns n vectors of dims with about zeros of every 1 dimension
// at zero, and a few rows all zeros (a forgotten row).
func sparseish(n, dims int, zeros float64, seed int64) *Flat {
	r := rand.New(rand.NewSource(seed))
	f := NewFlat(dims)
	for i := 0; i < n; i++ {
		v := make([]float32, dims)
		if i%97 != 5 {
			var norm float64
			for j := range v {
				if r.Float64() >= zeros {
					v[j] = float32(r.NormFloat64())
					norm += float64(v[j]) * float64(v[j])
				}
			}
			for j := range v {
				if norm > 0 {
					v[j] /= float32(math.Sqrt(norm))
				}
			}
		}
		if err := f.Set(i, v); err != nil {
			panic(err)
		}
	}
	return f
}

// TestSparseFlatSameScores: a matrix written sparse and read back (mapped)
// gives bit for bit the scores, rows and floats of the matrix written,
// across block boundaries, with widths that are not a multiple of 8, and
// with enough rows that Scores splits the scan over goroutines; a writer
// that changes a row of it writes what a dense matrix with the same rows
// writes; rows that would not be smaller sparse stay dense.
func TestSparseFlatSameScores(t *testing.T) {
	for _, tc := range []struct {
		n, dims int
		zeros   float64
		sparse  bool
	}{
		{0, 384, 0.5, false},
		{1, 384, 0.5, true},
		{63, 13, 0.6, true},
		{64, 64, 0.5, true},
		{65, 384, 0.55, true},
		{9000, 384, 0.53, true},
		{300, 384, 0.02, false}, // a dense model's vectors
		{5, 4, 0.5, false},      // rows so narrow that a bitmap never pays
		{100, 8, 0.9, true},
	} {
		f := sparseish(tc.n, tc.dims, tc.zeros, int64(tc.n+tc.dims))
		p := filepath.Join(t.TempDir(), "v.f32")
		if err := f.Write(p); err != nil {
			t.Fatal(err)
		}
		g, err := ReadFlat(p)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if (g.sp != nil) != tc.sparse {
			t.Fatalf("%+v: read back sparse=%v", tc, g.sp != nil)
		}
		if st, err := os.Stat(p); err != nil || st.Size() < MinFileSize(tc.dims, tc.n) || st.Size() > DenseFileSize(tc.dims, tc.n) {
			t.Fatalf("%+v: %d bytes, outside [%d, %d]", tc, st.Size(), MinFileSize(tc.dims, tc.n), DenseFileSize(tc.dims, tc.n))
		}
		if g.Len() != tc.n || g.Dims != tc.dims {
			t.Fatalf("%+v: %d×%d", tc, g.Len(), g.Dims)
		}
		r := rand.New(rand.NewSource(7))
		for k := 0; k < 3; k++ {
			q := make([]float32, tc.dims)
			for j := range q {
				q[j] = float32(r.NormFloat64())
			}
			sameScores(t, fmt.Sprintf("%+v", tc), f, g, q)
			if !reflect.DeepEqual(f.Search(q, 10, nil), g.Search(q, 10, nil)) {
				t.Fatalf("%+v: Search differs", tc)
			}
		}
		if !reflect.DeepEqual(f.Floats(), g.Floats()) {
			t.Fatalf("%+v: Floats differ", tc)
		}
		for i := 0; i < tc.n; i += 1 + tc.n/50 {
			if !reflect.DeepEqual(f.Row(i), g.Row(i)) {
				t.Fatalf("%+v: row %d differs", tc, i)
			}
		}
		// A writer appends to the mapped matrix (its rows stay sparse),
		// then replaces a row (they become dense); after each, the same
		// scores and the same file as the matrix built in memory.
		more := sparseish(70, tc.dims, tc.zeros, 99)
		same := func(step string) {
			t.Helper()
			q := make([]float32, tc.dims)
			for j := range q {
				q[j] = float32(r.NormFloat64())
			}
			sameScores(t, fmt.Sprintf("%+v, %s", tc, step), f, g, q)
			pf, pg := filepath.Join(t.TempDir(), "f"), filepath.Join(t.TempDir(), "g")
			if err := f.Write(pf); err != nil {
				t.Fatal(err)
			}
			if err := g.Write(pg); err != nil {
				t.Fatal(err)
			}
			bf, _ := os.ReadFile(pf)
			bg, _ := os.ReadFile(pg)
			if string(bf) != string(bg) {
				t.Fatalf("%+v, %s: the two matrices write different files", tc, step)
			}
		}
		for i := 0; i < more.Len(); i++ {
			for _, m := range []*Flat{f, g} {
				if err := m.Set(m.Len(), more.Row(i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if tc.sparse && g.sp == nil {
			t.Fatalf("%+v: appending made the mapped rows dense", tc)
		}
		same("appended")
		if tc.n > 0 {
			for _, m := range []*Flat{f, g} {
				if err := m.Set(tc.n/2, make([]float32, tc.dims)); err != nil {
					t.Fatal(err)
				}
			}
			same("replaced")
		}
		g.Close()
	}
}

// TestSparseFlatDamage: a sparse file whose checksum is right but whose
// rows are not where they should be, or mark a dimension past the width,
// is corrupt, and no truncation of it reads or panics.
func TestSparseFlatDamage(t *testing.T) {
	f := sparseish(130, 13, 0.5, 1)
	p := filepath.Join(t.TempDir(), "v.f32")
	if err := f.Write(p); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if binary.LittleEndian.Uint32(b[20:]) != flagSparse {
		t.Fatal("not written sparse")
	}
	reseal := func(c []byte) []byte {
		binary.LittleEndian.PutUint32(c[16:], crc32.Checksum(c[headerSize:], castagnoli))
		return c
	}
	nb := 8 * ((130 + blockRows - 1) / blockRows)
	for name, c := range map[string][]byte{
		"block offset": func() []byte { c := append([]byte(nil), b...); c[headerSize+8] ^= 1; return reseal(c) }(),
		"padding bit":  func() []byte { c := append([]byte(nil), b...); c[headerSize+nb+5] |= 0x80; return reseal(c) }(),
		"bitmap bit":   func() []byte { c := append([]byte(nil), b...); c[headerSize+nb+4] ^= 0x10; return reseal(c) }(),
		"flags":        func() []byte { c := append([]byte(nil), b...); c[20] = 2; return c }(),
	} {
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFlat(p); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	for cut := 0; cut < len(b); cut++ {
		c := append([]byte(nil), b[:cut]...)
		if len(c) >= headerSize {
			c = reseal(c)
		}
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFlat(p); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d: err = %v", cut, err)
		}
	}
}

// sameScores fails unless f and g score q alike, bit for bit.
func sameScores(t *testing.T, what string, f, g *Flat, q []float32) {
	t.Helper()
	a, b := f.Scores(q), g.Scores(q)
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s: row %d scores %v, want %v", what, i, b[i], a[i])
		}
	}
}
