package vector

import (
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// clustered returns n unit vectors around nc random centres (as embeddings
// of a memory cluster by topic) and nq queries drawn the same way.
func clustered(n, nq, dims, nc int, seed int64) (*Flat, [][]float32) {
	r := rand.New(rand.NewSource(seed))
	centres := make([][]float32, nc)
	for i := range centres {
		centres[i] = randUnit(r, dims, nil, 0)
	}
	f := NewFlat(dims)
	for i := 0; i < n; i++ {
		_ = f.Set(i, randUnit(r, dims, centres[r.Intn(nc)], 0.35))
	}
	qs := make([][]float32, nq)
	for i := range qs {
		qs[i] = randUnit(r, dims, centres[r.Intn(nc)], 0.35)
	}
	return f, qs
}

func randUnit(r *rand.Rand, dims int, centre []float32, spread float64) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		if centre != nil {
			x = float64(centre[i]) + spread*x/math.Sqrt(float64(dims))
		}
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

func exactTop(f *Flat, q []float32, k int) []int {
	s := f.Scores(q)
	idx := make([]int, len(s))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		if s[idx[a]] != s[idx[b]] {
			return s[idx[a]] > s[idx[b]]
		}
		return idx[a] < idx[b]
	})
	return idx[:k]
}

func recallAt10(f *Flat, h *HNSW, qs [][]float32) float64 {
	hit := 0
	for _, q := range qs {
		want := map[int]bool{}
		for _, i := range exactTop(f, q, 10) {
			want[i] = true
		}
		for _, r := range h.Search(q, 10, 0, nil) {
			if want[r.Row] {
				hit++
			}
		}
	}
	return float64(hit) / float64(10*len(qs))
}

func TestHNSWRecall(t *testing.T) {
	n, dims := 20000, 64
	if os.Getenv("GIT_MEM_HEAVY") == "1" {
		n, dims = 100000, 384
	}
	f, qs := clustered(n, 200, dims, 50, 1)
	h := BuildHNSW(f, DefaultHNSWConfig)
	if r := recallAt10(f, h, qs); r < 0.95 {
		t.Fatalf("recall@10 = %.3f at n=%d, want ≥ 0.95", r, n)
	} else {
		t.Logf("recall@10 = %.3f at n=%d dims=%d", r, n, dims)
	}
	// persisted graph answers the same; a rebuild is identical
	p := filepath.Join(t.TempDir(), "g.hnsw")
	if err := h.Write(p); err != nil {
		t.Fatal(err)
	}
	h2, err := ReadHNSW(p, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs[:20] {
		if !reflect.DeepEqual(h.Search(q, 10, 0, nil), h2.Search(q, 10, 0, nil)) {
			t.Fatal("reloaded graph answers differently")
		}
	}
	small, _ := clustered(2000, 1, dims, 10, 2)
	if a, b := BuildHNSW(small, DefaultHNSWConfig), BuildHNSW(small, DefaultHNSWConfig); !reflect.DeepEqual(a.links, b.links) {
		t.Fatal("two builds differ")
	}
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadHNSW(p, f); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated graph: %v", err)
	}
}

func TestHNSWFilter(t *testing.T) {
	f, qs := clustered(3000, 20, 32, 10, 3)
	h := BuildHNSW(f, DefaultHNSWConfig)
	for _, q := range qs {
		for _, r := range h.Search(q, 10, 0, func(row int) bool { return row%2 == 0 }) {
			if r.Row%2 != 0 {
				t.Fatalf("row %d passed the filter", r.Row)
			}
		}
	}
}

func TestFlatFile(t *testing.T) {
	f, _ := clustered(100, 0, 16, 3, 4)
	p := filepath.Join(t.TempDir(), "v.f32")
	if err := f.Write(p); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFlat(p)
	if err != nil || !reflect.DeepEqual(f.Floats(), g.Floats()) || g.Dims != 16 {
		t.Fatalf("round trip: %v", err)
	}
	b, _ := os.ReadFile(p)
	tests := []struct {
		name string
		data []byte
	}{
		{"truncated", b[:len(b)-3]},
		{"short header", b[:10]},
		{"flipped", func() []byte { c := append([]byte(nil), b...); c[headerSize+5] ^= 1; return c }()},
		{"bad magic", append([]byte("XXXXXXXX"), b[8:]...)},
	}
	for _, tc := range tests {
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFlat(p); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
	if err := f.Set(5, make([]float32, 3)); err == nil {
		t.Error("wrong width accepted")
	}
}
