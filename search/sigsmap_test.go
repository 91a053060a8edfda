package search

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestMapSigs: minhash.bin mapped for a writer holds the rows readSigs
// reads, at any row count (a page boundary inside a row or not) and with a
// killed writer's tail past the committed length; rows appended into its
// room and appended to the file make the file a whole write makes, the
// tail cut; a damaged byte, a wrong checksum and a short file are refused;
// free may be called twice.
func TestMapSigs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, add  int
		tail    int  // junk bytes past the committed rows
		damage  bool // a committed byte flipped
		short   bool // the file cut inside the committed rows
		wrongCk bool
	}{
		{"rows", 300, 40, 0, false, false, false},
		{"one row", 1, 1000, 0, false, false, false},
		{"a page's rows", 4096 / sigRowBytes * 3, 5, 0, false, false, false},
		{"a killed writer's tail", 77, 10, 3*sigRowBytes + 5, false, false, false},
		{"damaged", 200, 1, 0, true, false, false},
		{"short", 200, 1, 0, false, true, false},
		{"wrong checksum", 200, 1, 0, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := randSigs(tc.n+tc.add, int64(tc.n))
			dir := t.TempDir()
			p := filepath.Join(dir, sigsFile)
			crc, err := writeSigs(p, all[:tc.n])
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(p)
			switch {
			case tc.tail > 0:
				b = append(b, make([]byte, tc.tail)...)
				for i := len(b) - tc.tail; i < len(b); i++ {
					b[i] = 0xa5
				}
			case tc.damage:
				b[len(b)/2] ^= 4
			case tc.short:
				b = b[:len(b)-1]
			case tc.wrongCk:
				crc ^= 1
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			sigs, free, err := mapSigs(p, tc.n, crc)
			if errors.Is(err, errNoMap) {
				t.Skip("not mapped here")
			}
			if tc.damage || tc.short || tc.wrongCk {
				if err == nil {
					free()
					t.Fatal("a damaged file was mapped")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer free()
			read, err := readSigs(p, tc.n, crc)
			if err != nil || !reflect.DeepEqual(sigs, read) {
				t.Fatalf("mapped rows differ from those read (%v)", err)
			}
			if cap(sigs) != withRoom(tc.n) {
				t.Fatalf("room for %d rows, want %d", cap(sigs), withRoom(tc.n))
			}
			sigs[0][0] ^= 1 // a row changed: the process's copy, not the file
			sigs[0][0] ^= 1
			sigs = append(sigs, all[tc.n:]...)
			if crc, err = appendSigs(p, sigs, tc.n, crc); err != nil {
				t.Fatal(err)
			}
			whole := filepath.Join(dir, "whole")
			wcrc, _ := writeSigs(whole, all)
			x, _ := os.ReadFile(p)
			y, _ := os.ReadFile(whole)
			if string(x) != string(y) || wcrc != crc {
				t.Fatal("the file appended to from the mapping is not the file written whole")
			}
			free()
		})
	}
}
