package vector

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
)

// rowsOf is every row of f as int8 values and scale.
func rowsOf(f *Flat) [][]int8 {
	out := make([][]int8, f.Len())
	for i := range out {
		q := make([]int8, f.Dims+4)
		s := f.rowInt8(i, q[4:])
		b := [4]int8{}
		for j := range b {
			b[j] = int8(uint8(uint32(int32(s*1e6)) >> (8 * j)))
		}
		copy(q, b[:])
		out[i] = q
	}
	return out
}

// grow writes rows [from, to) of src into a Flat read from p by st and
// appends them, returning the new State.
func grow(t *testing.T, p string, st State, src *Flat, from, to int) State {
	t.Helper()
	g, err := ReadFlatState(p, st)
	if err != nil {
		t.Fatalf("read %d rows: %v", st.Rows, err)
	}
	defer g.Close()
	for i := from; i < to; i++ {
		if err := g.Set(i, src.Row(i)); err != nil {
			t.Fatal(err)
		}
	}
	if !g.CanAppend(st) {
		t.Fatalf("cannot append onto %+v", st)
	}
	nst, err := g.Append(p, st)
	if err != nil {
		t.Fatal(err)
	}
	return nst
}

// TestFlatAppendReopen: a file written with some rows and appended to in
// steps (across block boundaries, sparse and dense, rows past the image
// in the image's layout) reads back every row and every score as the
// matrix written whole; a full Write of the reopened matrix is byte for
// byte the whole matrix's file.
func TestFlatAppendReopen(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dims  int
		zeros float64
		steps []int // row counts after each write: the first Write, then Appends
	}{
		{"sparse", 384, 0.55, []int{100, 101, 164, 192, 500}},
		{"sparse from one row", 13, 0.6, []int{1, 63, 64, 65, 200}},
		{"dense", 384, 0.02, []int{70, 130, 131, 300}},
		{"empty first", 64, 0.5, []int{0, 10, 80}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := tc.steps[len(tc.steps)-1]
			src := sparseish(last, tc.dims, tc.zeros, int64(last))
			dir := t.TempDir()
			p := filepath.Join(dir, "v.f32")
			first := NewFlat(tc.dims)
			for i := 0; i < tc.steps[0]; i++ {
				if err := first.Set(i, src.Row(i)); err != nil {
					t.Fatal(err)
				}
			}
			st, err := first.WriteState(p)
			if err != nil {
				t.Fatal(err)
			}
			for k := 1; k < len(tc.steps); k++ {
				if tc.steps[k-1] == 0 { // nothing to read by: Write again
					g := NewFlat(tc.dims)
					for i := 0; i < tc.steps[k]; i++ {
						_ = g.Set(i, src.Row(i))
					}
					if st, err = g.WriteState(p); err != nil {
						t.Fatal(err)
					}
					continue
				}
				st = grow(t, p, st, src, tc.steps[k-1], tc.steps[k])
			}
			if fi, err := os.Stat(p); err != nil || fi.Size() != st.Size || st.Rows != last {
				t.Fatalf("file %v, state %+v", fi.Size(), st)
			}
			got, err := ReadFlatState(p, st)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			if !reflect.DeepEqual(rowsOf(got), rowsOf(src)) {
				t.Fatal("rows differ from the matrix written whole")
			}
			q := src.Row(last / 2)
			if !reflect.DeepEqual(got.Scores(q), src.Scores(q)) {
				t.Fatal("scores differ")
			}
			pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if err := got.Write(pa); err != nil {
				t.Fatal(err)
			}
			if err := src.Write(pb); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(pa)
			b, _ := os.ReadFile(pb)
			if string(a) != string(b) {
				t.Fatal("a full write of the appended matrix is not the whole matrix's file")
			}
		})
	}
}

// TestFlatTornTail: bytes past the committed length (a writer killed in
// the middle of a row, before its State was committed) are not read, and
// the next Append overwrites them; a file shorter than its State is
// refused.
func TestFlatTornTail(t *testing.T) {
	for _, tc := range []struct {
		name  string
		zeros float64
		tail  int
	}{
		{"sparse, part of a row", 0.55, 37},
		{"sparse, many rows", 0.55, 5000},
		{"dense, part of a row", 0.02, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := sparseish(150, 384, tc.zeros, 9)
			p := filepath.Join(t.TempDir(), "v.f32")
			st0 := grow(t, p, mustWrite(t, p, src, 90), src, 90, 100)
			fh, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			junk := make([]byte, tc.tail)
			for i := range junk {
				junk[i] = byte(i*7 + 1)
			}
			fh.Write(junk)
			fh.Close()
			r, err := ReadFlatState(p, st0)
			if err != nil {
				t.Fatalf("read with a tail: %v", err)
			}
			if r.Len() != 100 {
				t.Fatalf("%d rows", r.Len())
			}
			r.Close()
			st1 := grow(t, p, st0, src, 100, 150)
			if fi, _ := os.Stat(p); fi.Size() != st1.Size {
				t.Fatalf("file %d bytes, committed %d: the tail was not cut", fi.Size(), st1.Size)
			}
			got, err := ReadFlatState(p, st1)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			if !reflect.DeepEqual(rowsOf(got), rowsOf(src)) {
				t.Fatal("rows differ after the tail was overwritten")
			}
			if err := os.Truncate(p, st1.Size-1); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadFlatState(p, st1); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("short file read: %v", err)
			}
			if _, err := got.Append(p, st1); err == nil {
				t.Fatal("append onto a short file")
			}
		})
	}
}

func mustWrite(t *testing.T, p string, src *Flat, n int) State {
	t.Helper()
	f := NewFlat(src.Dims)
	for i := 0; i < n; i++ {
		_ = f.Set(i, src.Row(i))
	}
	st, err := f.WriteState(p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestFlatReaderDuringAppend: a reader that mapped the file before
// appends reads its rows and scores unchanged while a writer appends (and
// cuts the file back to its committed length), and after.
func TestFlatReaderDuringAppend(t *testing.T) {
	src := sparseish(64*12, 384, 0.55, 4)
	p := filepath.Join(t.TempDir(), "v.f32")
	st0 := mustWrite(t, p, src, 64)
	st := st0
	r, err := ReadFlatState(p, st)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := src.Row(3)
	want := r.Scores(q)
	wantRows := rowsOf(r)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan string, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if !reflect.DeepEqual(r.Scores(q), want) || !reflect.DeepEqual(rowsOf(r), wantRows) {
				select {
				case errs <- "the early reader's rows changed during an append":
				default:
				}
				return
			}
		}
	}()
	for n := 64; n < src.Len(); n += 64 {
		st = grow(t, p, st, src, n, n+64)
	}
	close(stop)
	wg.Wait()
	select {
	case e := <-errs:
		t.Fatal(e)
	default:
	}
	if !reflect.DeepEqual(r.Scores(q), want) {
		t.Fatal("the early reader's scores changed")
	}
	// Opened by the old State after the appends, the file gives the old rows.
	old, err := ReadFlatState(p, st0)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if !reflect.DeepEqual(rowsOf(old), wantRows) {
		t.Fatal("the old State reads other rows")
	}
	if _, err := ReadFlatState(p, State{Rows: st.Rows, Size: st.Size, CRC: st.CRC ^ 1}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a wrong checksum: %v", err)
	}
}
