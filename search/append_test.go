package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"
)

func randSigs(n int, seed int64) [][sigLen]uint32 {
	r := rand.New(rand.NewSource(seed))
	out := make([][sigLen]uint32, n)
	for i := range out {
		for j := range out[i] {
			out[i][j] = r.Uint32()
		}
	}
	return out
}

// TestSigsAppend: minhash.bin written with some rows and appended to in
// steps reads back every row by its last commit (rows, checksum), and by
// any earlier one; a killed writer's tail (part of a row past the
// committed length) is not read and the next append overwrites it; the
// file appended to is byte for byte the file written whole.
func TestSigsAppend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []int
		tail  int // junk bytes left after the second step
	}{
		{"steps", []int{0, 1, 7, 300}, 0},
		{"torn row", []int{5, 6, 40}, sigRowBytes / 3},
		{"torn rows", []int{10, 20, 21}, 5*sigRowBytes + 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := randSigs(tc.steps[len(tc.steps)-1], int64(len(tc.name)))
			dir := t.TempDir()
			p := filepath.Join(dir, sigsFile)
			crc, err := writeSigs(p, all[:tc.steps[0]])
			if err != nil {
				t.Fatal(err)
			}
			crcs := []uint32{crc}
			for k := 1; k < len(tc.steps); k++ {
				if k == 2 && tc.tail > 0 {
					f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
					f.Write(make([]byte, tc.tail))
					f.Close()
					got, err := readSigs(p, tc.steps[1], crc)
					if err != nil || !reflect.DeepEqual(got, all[:tc.steps[1]]) {
						t.Fatalf("read past a torn tail: %v", err)
					}
				}
				if crc, err = appendSigs(p, all[:tc.steps[k]], tc.steps[k-1], crc); err != nil {
					t.Fatal(err)
				}
				crcs = append(crcs, crc)
			}
			if fi, _ := os.Stat(p); fi.Size() != sigsLen(len(all)) {
				t.Fatalf("%d bytes for %d rows", fi.Size(), len(all))
			}
			for k, n := range tc.steps {
				got, err := readSigs(p, n, crcs[k])
				if err != nil {
					t.Fatalf("rows of step %d: %v", k, err)
				}
				if len(got) != n || n > 0 && !reflect.DeepEqual(got, all[:n]) {
					t.Fatalf("rows of step %d differ", k)
				}
			}
			if _, err := readSigs(p, len(all), crc^1); err == nil {
				t.Fatal("a wrong checksum was accepted")
			}
			whole := filepath.Join(dir, "whole")
			wcrc, _ := writeSigs(whole, all)
			a, _ := os.ReadFile(p)
			b, _ := os.ReadFile(whole)
			if string(a) != string(b) || wcrc != crc {
				t.Fatal("the appended file is not the file written whole")
			}
			if err := os.Truncate(p, sigsLen(len(all))-1); err != nil {
				t.Fatal(err)
			}
			if _, err := readSigs(p, len(all), crc); err == nil {
				t.Fatal("a short file was read")
			}
			if _, err := appendSigs(p, all, len(all), crc); err == nil {
				t.Fatal("appended onto a short file")
			}
		})
	}
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestIndexAppendsTables: a writer that adds new ids appends to
// minhash.bin and vectors.f32 (the same files, grown), one that replaces a
// row writes them whole; either way the index reopened reads every row
// (Verify: every checksum, seal and manifest) and searches as an index
// built in one go; and a byte damaged in an appended part is found by the
// seal's checksum even when size and time are put back.
func TestIndexAppendsTables(t *testing.T) {
	docs := synthDocs(900, 21)
	queries := []string{"retry timeout", "parseConfig panic nil pointer", "deploy helm chart"}
	wholeDir := filepath.Join(t.TempDir(), "whole")
	whole := buildIndex(t, wholeDir, docs)
	want := allModesResults(t, whole, queries)
	whole.Close()
	wantLinks, err := os.ReadFile(filepath.Join(wholeDir, linksBinFile))
	if err != nil || len(wantLinks) <= linksHeader {
		t.Fatalf("links.bin of the whole build: %d bytes, %v", len(wantLinks), err)
	}
	for _, tc := range []struct {
		name    string
		replace bool // the last step re-adds an id: files written whole
	}{{"new ids", false}, {"a replaced id", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			ix := buildIndex(t, dir, docs[:400])
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			files := []string{sigsFile, vectorsFile, docsFile}
			ino := map[string]uint64{}
			for _, f := range files {
				ino[f] = inode(t, filepath.Join(dir, f))
			}
			for _, part := range [][2]int{{400, 401}, {401, 650}, {650, 900}} {
				w, err := Open(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				batch := docs[part[0]:part[1]]
				if tc.replace && part[1] == 900 {
					batch = append([]Doc{docs[3]}, batch...)
				}
				if err := w.Add(batch); err != nil {
					t.Fatal(err)
				}
				if err := w.SetLastCommit(docs[part[1]-1].Commit, part[1]-1); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range files {
				same := inode(t, filepath.Join(dir, f)) == ino[f]
				if same == tc.replace {
					t.Errorf("%s: same file %v, a row replaced %v", f, same, tc.replace)
				}
			}
			if got, _ := os.ReadFile(filepath.Join(dir, linksBinFile)); !tc.replace && string(got) != string(wantLinks) {
				t.Errorf("links.bin merged over three adds (%d bytes) is not the whole build's (%d)", len(got), len(wantLinks))
			}
			ro, err := OpenReadOnly(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := ro.Verify(); err != nil {
				t.Fatal(err)
			}
			if got := allModesResults(t, ro, queries); !reflect.DeepEqual(got, want) {
				t.Error("results differ from the index built in one go")
			}
			ro.Close()
			// A byte of an appended row damaged, size and time kept.
			for _, f := range files {
				p := filepath.Join(dir, f)
				fi, _ := os.Stat(p)
				b, _ := os.ReadFile(p)
				b[len(b)-10] ^= 0x40
				os.WriteFile(p, b, 0o644)
				os.Chtimes(p, fi.ModTime(), fi.ModTime())
				ro, err := OpenReadOnly(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := ro.Verify(); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s damaged: Verify says %v", f, err)
				}
				ro.Close()
				b[len(b)-10] ^= 0x40
				os.WriteFile(p, b, 0o644)
				os.Chtimes(p, fi.ModTime(), fi.ModTime())
			}
		})
	}
}

// TestTableAppend: docs.bin written with some rows and appended to in
// segments reads back every record (one at a time and all at once) by
// its last state, and the earlier rows by any earlier state; a killed
// writer's tail is not read and the next append overwrites it; a full
// write of the records read is byte for byte the table written whole; a
// damaged byte fails the writer's checksum.
func TestTableAppend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []int
		tail  int
	}{
		{"steps", []int{1, 2, 40, 41, 300}, 0},
		{"from empty", []int{0, 5, 100}, 0},
		{"torn segment", []int{10, 50, 120}, 77},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := randomRecs(randv2.New(randv2.NewPCG(7, uint64(len(tc.name)))), tc.steps[len(tc.steps)-1])
			dir := t.TempDir()
			p := filepath.Join(dir, docsFile)
			st, err := writeTableState(p, recs[:tc.steps[0]], 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			states := []docsState{st}
			for k := 1; k < len(tc.steps); k++ {
				keep, err := readTableState(p, true, &st)
				if err != nil {
					t.Fatal(err)
				}
				if k == 2 && tc.tail > 0 {
					f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
					f.Write([]byte(segMagic + "partial segment of a killed writer")[:min(tc.tail, 42)])
					f.Close()
				}
				if st, err = appendTable(p, recs[len(keep.seqs):tc.steps[k]], keep, st); err != nil {
					t.Fatal(err)
				}
				states = append(states, st)
			}
			if fi, _ := os.Stat(p); fi.Size() != st.Size || st.Parts != len(tc.steps)-1 {
				t.Fatalf("%d bytes, state %+v", fi.Size(), st)
			}
			for k, n := range tc.steps {
				tab, err := readTableState(p, true, &states[k])
				if err != nil {
					t.Fatalf("state %d: %v", k, err)
				}
				if len(tab.seqs) != n {
					t.Fatalf("state %d: %d rows, want %d", k, len(tab.seqs), n)
				}
				all := make([]docRec, n)
				if err := tab.all(all); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					one, err := tab.rec(i)
					if err != nil {
						t.Fatalf("state %d row %d: %v", k, i, err)
					}
					for _, got := range []docRec{one, all[i]} {
						want := recs[i]
						_, go1 := got.Time.Zone()
						_, wo := want.Time.Zone()
						if !got.Time.Equal(want.Time) || go1 != wo {
							t.Fatalf("state %d row %d: time %v, want %v", k, i, got.Time, want.Time)
						}
						got.Time, want.Time = time.Time{}, time.Time{}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("state %d row %d:\n%+v\nwant %+v", k, i, got, want)
						}
					}
				}
				if k == len(tc.steps)-1 {
					a := filepath.Join(dir, "a")
					b := filepath.Join(dir, "b")
					if _, err := writeTableState(a, all, 0, tab); err != nil {
						t.Fatal(err)
					}
					if err := writeTable(b, recs, 0, nil); err != nil {
						t.Fatal(err)
					}
					x, _ := os.ReadFile(a)
					y, _ := os.ReadFile(b)
					if string(x) != string(y) {
						t.Fatal("a full write of the appended table is not the table written whole")
					}
				}
			}
			b, _ := os.ReadFile(p)
			b[len(b)-3] ^= 1
			os.WriteFile(p, b, 0o644)
			if _, err := readTableState(p, true, &st); err == nil {
				t.Fatal("a damaged byte passed the checksum")
			}
			if _, err := readTableState(p, false, &docsState{Image: st.Image, Size: st.Size + 1, CRC: st.CRC}); err == nil {
				t.Fatal("a state longer than the file was read")
			}
		})
	}
}

// TestMergeLinksAsEncoded: links.bin merged from a file and the links
// added since is byte for byte encodeLinks of all of them: added links on
// rows with and without a node, ids that share a hash (rows with the same
// id), duplicate pairs, none added, none before.
func TestMergeLinksAsEncoded(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, tc := range []struct {
		name           string
		rows, old, add int
		ids            int // distinct ids (fewer than rows: shared hashes)
	}{
		{"adds", 300, 500, 40, 300},
		{"shared ids", 200, 400, 100, 30},
		{"none added", 100, 50, 0, 100},
		{"none before", 100, 0, 60, 100},
		{"many added", 1000, 200, 2000, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := func(r int32) string { return fmt.Sprintf("ex-%d", int(r)%tc.ids) }
			links := make([]linkRec, tc.old+tc.add)
			for i := range links {
				a, b := int32(rng.Intn(tc.rows)), int32(rng.Intn(tc.rows))
				if i%17 == 3 && i > 0 {
					a, b = links[i-1].New, links[i-1].Old // a duplicate pair
				}
				links[i] = linkRec{New: a, Old: b, Sim: math.Round(rng.Float64()*1e4) / 1e4}
			}
			dir := t.TempDir()
			if tc.old > 0 {
				if err := os.WriteFile(filepath.Join(dir, linksBinFile), encodeLinks(append([]linkRec(nil), links[:tc.old]...), ids), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			v, err := openLinks(dir, tc.rows)
			if err != nil {
				t.Fatal(err)
			}
			defer v.close()
			got, err := mergeLinks(v, links[tc.old:], ids)
			if err != nil {
				t.Fatal(err)
			}
			want := encodeLinks(append([]linkRec(nil), links...), ids)
			if string(got) != string(want) {
				t.Fatalf("merged %d bytes, encoded %d: differ", len(got), len(want))
			}
		})
	}
}
