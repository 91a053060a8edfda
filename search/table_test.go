package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// randomRecs are records with the shapes the table must keep exactly:
// commits as lower-case hex of 40 and 64 digits, and as strings that only
// look like hex (upper case, odd length, empty, not hex); repeated and
// unique projects, sessions, rooms, files and facts; empty and missing
// lists; link meta present and absent; times in several zones.
func randomRecs(rng *rand.Rand, n int) []docRec {
	pick := func(ss ...string) string { return ss[rng.IntN(len(ss))] }
	hexs := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = "0123456789abcdef"[rng.IntN(16)]
		}
		return string(b)
	}
	zones := []*time.Location{time.UTC, time.FixedZone("x", 3600*5+1800), time.FixedZone("y", -7*3600)}
	recs := make([]docRec, n)
	for i := range recs {
		r := docRec{Seq: i * 3, Group: int32(rng.IntN(i + 1)), ID: fmt.Sprintf("ex-%d", i),
			Time:    time.Unix(1_700_000_000+int64(rng.IntN(1e8)), int64(rng.IntN(1e9))).In(zones[rng.IntN(len(zones))]),
			Core:    pick("", "Fixed the retry loop", "Set port: 9090 — done ✓"),
			Context: pick("", "in src/api", "ctx\x00with nul"),
			Project: pick("", "billing", "api", fmt.Sprintf("p%d", i)),
			Agent:   pick("claude-code", "codex", ""),
			Session: pick(fmt.Sprintf("s-%d", i/7), fmt.Sprintf("u-%d", i), ""),
			VerbLen: int32(rng.IntN(1 << 20)), DistLen: int32(rng.IntN(100)), OutLen: int32(rng.IntN(1000)),
			HeadLen: int32(rng.IntN(50)), AskLen: int32(rng.IntN(3)), Exact: rng.Uint64()}
		switch rng.IntN(7) {
		case 0, 1, 2:
			r.Commit = hexs(40)
		case 3:
			r.Commit = hexs(64)
		case 4:
			r.Commit = "ABCDEF0123456789ABCDEF0123456789ABCDEF01"
		case 5:
			r.Commit = pick("", "abc", "c01", "zz")
		default:
			r.Commit = hexs(39)
		}
		for k := rng.IntN(4); k > 0; k-- {
			r.Rooms = append(r.Rooms, pick("concept:auth", "file:x.go", "project:billing", fmt.Sprintf("file:f%d", i)))
		}
		for k := rng.IntN(3); k > 0; k-- {
			r.Files = append(r.Files, pick("src/a.ts", "go.mod", fmt.Sprintf("src/f%d.go", i)))
		}
		switch rng.IntN(3) {
		case 0:
		case 1:
			r.Link = &linkMeta{Change: rng.IntN(2) == 0}
		default:
			r.Link = &linkMeta{Change: true, Facts: [][2]string{{"port", pick("9090", "80")}, {"version", fmt.Sprint(i)}}}
		}
		recs[i] = r
	}
	return recs
}

// TestTableRoundTrip: every record read back from docs.bin, one at a time
// (a search) and all at once (a writer), equals what was written, time
// offsets (MarshalBinary keeps the offset, not the zone's name) and the
// bytes of every string included.
func TestTableRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 500} {
		recs := randomRecs(rng, n)
		path := filepath.Join(t.TempDir(), docsFile)
		if err := writeTable(path, recs, 0, nil); err != nil {
			t.Fatal(err)
		}
		tab, err := readTable(path, true)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		all := make([]docRec, n)
		if err := tab.all(all); err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			one, err := tab.rec(i)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range []docRec{one, all[i]} {
				want := recs[i]
				if !got.Time.Equal(want.Time) {
					t.Fatalf("row %d: time %v, want %v", i, got.Time, want.Time)
				}
				_, go1 := got.Time.Zone()
				_, wo := want.Time.Zone()
				if go1 != wo {
					t.Fatalf("row %d: zone offset %d, want %d", i, go1, wo)
				}
				got.Time, want.Time = time.Time{}, time.Time{}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("row %d:\n got %+v\nwant %+v", i, got, want)
				}
			}
		}
		// The same records give the same bytes.
		again := filepath.Join(t.TempDir(), docsFile)
		if err := writeTable(again, recs, 0, nil); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(path)
		b, _ := os.ReadFile(again)
		if string(a) != string(b) {
			t.Fatalf("n=%d: two writes of the same records differ", n)
		}
	}
}

// TestTableDamage: a damaged table is an error, never a panic or a wrong
// record passed off as right: every single byte of a small table changed
// in turn, read without the checksum (as a search reads it).
func TestTableDamage(t *testing.T) {
	recs := randomRecs(rand.New(rand.NewPCG(3, 4)), 12)
	path := filepath.Join(t.TempDir(), docsFile)
	if err := writeTable(path, recs, 0, nil); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range orig {
		for _, v := range []byte{0x00, 0xff, orig[i] ^ 0x01} {
			b := append([]byte(nil), orig...)
			b[i] = v
			tab, err := parseTable(b, false)
			if err != nil {
				continue
			}
			all := make([]docRec, len(tab.seqs))
			_ = tab.all(all)
			for row := range tab.seqs {
				_, _ = tab.rec(row)
			}
			// (the count, bytes 8–11, is checked against the manifest)
			if _, err := parseTable(b, true); err == nil && v != orig[i] && i >= 12 {
				t.Fatalf("byte %d set to %#x: the checksum did not catch it", i, v)
			}
		}
	}
	for cut := 0; cut < len(orig); cut++ {
		if tab, err := parseTable(orig[:cut], false); err == nil {
			for row := range tab.seqs {
				_, _ = tab.rec(row)
			}
		}
	}
}

// TestTableKeepSameBytes: a table written by copying the loaded rows' bytes
// (keep) is byte for byte the one a full encoding of the same records
// writes, for every split of old and new rows, and reads back the same.
func TestTableKeepSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	recs := randomRecs(rng, 300)
	dir := t.TempDir()
	for _, k := range []int{1, 2, 50, 299, 300} {
		oldPath := filepath.Join(dir, fmt.Sprintf("old-%d", k))
		if err := writeTable(oldPath, recs[:k], 0, nil); err != nil {
			t.Fatal(err)
		}
		keep, err := readTable(oldPath, true)
		if err != nil {
			t.Fatal(err)
		}
		full := filepath.Join(dir, fmt.Sprintf("full-%d", k))
		kept := filepath.Join(dir, fmt.Sprintf("kept-%d", k))
		if err := writeTable(full, recs, 0, nil); err != nil {
			t.Fatal(err)
		}
		if err := writeTable(kept, recs, 1000, keep); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(full)
		b, _ := os.ReadFile(kept)
		if len(a) == 0 || string(a) != string(b) {
			t.Fatalf("k=%d: kept table (%d bytes) differs from the full one (%d bytes)", k, len(b), len(a))
		}
		if _, err := readTable(kept, true); err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
	}
}
