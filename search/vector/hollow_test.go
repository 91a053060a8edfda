package vector

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestOpenAppendAsRead: a matrix opened by OpenAppend (its file's rows
// unread) and given new rows appends the same bytes and commits the same
// State as one read whole by ReadFlatState, over two appends (the second
// after the first's State), for sparse and dense files, one appended to
// before and an empty one; filled, it holds every row and score of the
// matrix written whole, a row it added and changed since included, and
// writes the same file whole.
func TestOpenAppendAsRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dims   int
		zeros  float64
		steps  []int // rows written, then after each append
		change int   // a row (≥ the first step) changed after the last append; -1: none
	}{
		{"sparse", 384, 0.55, []int{100, 164, 300}, -1},
		{"dense", 384, 0.02, []int{70, 131, 200}, 150},
		{"sparse, a new row changed", 13, 0.6, []int{64, 65, 130}, 64},
		{"empty file", 64, 0.5, []int{0, 10, 80}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := tc.steps[len(tc.steps)-1]
			src := sparseish(last+1, tc.dims, tc.zeros, int64(last))
			dir := t.TempDir()
			files := []string{filepath.Join(dir, "read"), filepath.Join(dir, "hollow")}
			var states [2]State
			var mats [2]*Flat
			for k, p := range files {
				st := mustWrite(t, p, src, tc.steps[0])
				var f *Flat
				var err error
				if k == 0 {
					f, err = ReadFlatState(p, st)
				} else {
					f, err = OpenAppend(p, st)
				}
				if err != nil {
					t.Fatal(err)
				}
				if f.Hollow() != (k == 1) || f.Len() != tc.steps[0] {
					t.Fatalf("opened %d rows, hollow %v", f.Len(), f.Hollow())
				}
				for s := 1; s < len(tc.steps); s++ {
					for i := tc.steps[s-1]; i < tc.steps[s]; i++ {
						if err := f.Set(i, src.Row(i)); err != nil {
							t.Fatal(err)
						}
					}
					if st, err = f.Append(p, st); err != nil {
						t.Fatal(err)
					}
				}
				states[k], mats[k] = st, f
				defer f.Close()
			}
			a, _ := os.ReadFile(files[0])
			b, _ := os.ReadFile(files[1])
			if states[0] != states[1] || string(a) != string(b) {
				t.Fatalf("states %+v, %+v; files equal %v", states[0], states[1], string(a) == string(b))
			}
			want := src
			if tc.change >= 0 {
				for _, f := range mats {
					if err := f.Set(tc.change, src.Row(last)); err != nil {
						t.Fatal(err)
					}
				}
				want = mats[0]
			}
			h := mats[1]
			if err := h.Fill(files[1]); err != nil {
				t.Fatal(err)
			}
			if h.Hollow() || h.Len() != last {
				t.Fatalf("filled: %d rows, hollow %v", h.Len(), h.Hollow())
			}
			if got := rowsOf(h); !reflect.DeepEqual(got, rowsOf(want)[:last]) {
				t.Fatal("rows differ from the matrix read whole")
			}
			q := src.Row(last / 2)
			if last > 0 && !reflect.DeepEqual(h.Scores(q), mats[0].Scores(q)) {
				t.Fatal("scores differ")
			}
			pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if _, err := mats[0].WriteState(pa); err != nil {
				t.Fatal(err)
			}
			if _, err := h.WriteState(pb); err != nil {
				t.Fatal(err)
			}
			a, _ = os.ReadFile(pa)
			b, _ = os.ReadFile(pb)
			if string(a) != string(b) {
				t.Fatal("the filled matrix written whole is not the read one's file")
			}
		})
	}
}

// TestOpenAppendDamaged: OpenAppend refuses a file shorter than its State
// or with a bad header; a row damaged under the State is found by Fill
// (and by the State an Append commits over it); a row read before Fill
// panics rather than reading nothing.
func TestOpenAppendDamaged(t *testing.T) {
	src := sparseish(200, 96, 0.5, 4)
	for _, tc := range []struct {
		name    string
		damage  func(b []byte) []byte
		atOpen  bool
		atFill  bool
		readRow bool
	}{
		{"cut", func(b []byte) []byte { return b[:len(b)-1] }, true, false, false},
		{"header", func(b []byte) []byte { b[3] ^= 1; return b }, true, false, false},
		{"a row's byte", func(b []byte) []byte { b[len(b)/2] ^= 0x21; return b }, false, true, false},
		{"intact, a row read unfilled", func(b []byte) []byte { return b }, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "v")
			st := mustWrite(t, p, src, 150)
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, tc.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := OpenAppend(p, st)
			if tc.atOpen {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("OpenAppend: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.readRow {
				defer func() {
					if recover() == nil {
						t.Fatal("a row read before Fill did not panic")
					}
				}()
				f.Row(3)
				return
			}
			_ = f.Set(150, src.Row(150))
			nst, err := f.Append(p, st)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ReadFlatState(p, nst); !errors.Is(err, ErrCorrupt) == tc.atFill {
				t.Fatalf("read by the appended State: %v", err)
			}
			if err := f.Fill(p); errors.Is(err, ErrCorrupt) != tc.atFill {
				t.Fatalf("Fill: %v", err)
			}
		})
	}
}
