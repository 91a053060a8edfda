package search

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
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
	whole := buildIndex(t, filepath.Join(t.TempDir(), "whole"), docs)
	want := allModesResults(t, whole, queries)
	whole.Close()
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
			files := []string{sigsFile, vectorsFile}
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
