package search

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tables a search maps are checked in one pass, the checksum and the
// rows' ranges a chunk at a time (checkChunk): a damaged byte or a row out
// of range must be caught in any chunk, the last one included, and a
// checksum mismatch is reported before a row out of range, as when the
// whole checksum came first.
func TestFusedChecks(t *testing.T) {
	n := 3*ctxChunkRows + 5 // four chunks of the context, more of the links
	rows := make([]ctxRow, n)
	for i := range rows {
		rows[i] = ctxRow{prev: int32(i) - 1, next: int32(i) + 1, verb: int32(i % 7), head: 1, asked: int32(i % 2), out: 3}
	}
	rows[n-1].next = -1
	sessKey := sessCacheKey{n: n, ctxCRC: 5, ctxMTime: 9, w: ContextWeight, a: AskedWeight, ref: ContextLenRef}
	c := newSessionCtx(rows, nil)
	c.titles()
	ix := &Index{seqs: make([]int, n)}
	var key [32]byte
	rowMap := func(m []int32) []byte {
		b := append([]byte(rowMapMagic), key[:]...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m)))
		for _, r := range m {
			b = binary.LittleEndian.AppendUint32(b, uint32(r))
		}
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	}
	ids := make([]int32, n+3)
	for i := range ids {
		ids[i] = int32(i) - 3 // -3 made -1 below: ids without a row
	}
	ids[0], ids[1], ids[2] = -1, -1, -1

	// Each case damages a copy of a good encoding: outOfRange rewrites one
	// row (the checksum made to match), flip changes one byte after it.
	for _, tc := range []struct {
		name       string
		outOfRange int // row made out of range, -1: none
		flip       int // byte flipped, counted from the end, 0: none
		wantErr    string
	}{
		{"undamaged", -1, 0, ""},
		{"row out of range, first chunk", 1, 0, "row 1 out of range"},
		{"row out of range, last chunk", n - 2, 0, "out of range"},
		{"byte flipped, last chunk", -1, 10, "checksum mismatch"},
		{"row out of range and byte flipped", 1, 10, "checksum mismatch"},
	} {
		t.Run("context/"+tc.name, func(t *testing.T) {
			bad := append([]ctxRow(nil), rows...)
			if tc.outOfRange >= 0 {
				bad[tc.outOfRange].next = int32(n)
			}
			b := encodeContext(bad)
			if tc.flip > 0 {
				b[len(b)-tc.flip] ^= 0x40
			}
			for _, inPlace := range []bool{true, false} {
				got, err := parseContext(b, n, inPlace)
				switch {
				case tc.wantErr == "" && (err != nil || len(got) != n || got[n-1] != rows[n-1]):
					t.Errorf("inPlace %v: %d rows, err %v; want the table", inPlace, len(got), err)
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Errorf("inPlace %v: err %v, want %q", inPlace, err, tc.wantErr)
				}
			}
		})
		t.Run("sessctx/"+tc.name, func(t *testing.T) {
			d := &sessionCtx{weight: c.weight, dl: c.dl, outDL: c.outDL, titleDL: c.titleDL, avgdl: c.avgdl,
				outAvg: c.outAvg, plainAvg: c.plainAvg, titleAvg: c.titleAvg, links: append([]link(nil), c.links...)}
			if tc.outOfRange >= 0 {
				d.links[tc.outOfRange].prev = int32(n)
			}
			b := encodeSessCache(d, sessKey)
			if tc.flip > 0 {
				b[len(b)-tc.flip] ^= 0x40
			}
			got := parseSessCache(b, rows, sessKey)
			if (got != nil) != (tc.wantErr == "") {
				t.Errorf("read: %v, want %v", got != nil, tc.wantErr == "")
			}
			if got != nil && (len(got.links) != n || got.links[n-1] != c.links[n-1] || got.dl[n-1] != c.dl[n-1]) {
				t.Error("read back other columns")
			}
		})
		t.Run("rowmap/"+tc.name, func(t *testing.T) {
			m := append([]int32(nil), ids...)
			if tc.outOfRange >= 0 {
				m[tc.outOfRange+3] = int32(n)
			}
			b := rowMap(m)
			if tc.flip > 0 {
				b[len(b)-tc.flip] ^= 0x40
			}
			got := ix.parseRowMap(b, key)
			if (got != nil) != (tc.wantErr == "") {
				t.Errorf("read: %v, want %v", got != nil, tc.wantErr == "")
			}
			if got != nil && (len(got) != len(ids) || got[len(ids)-1] != ids[len(ids)-1]) {
				t.Error("read back other rows")
			}
		})
	}
}

// TestTableSegmentGroups: a group out of range is refused in the image and
// in an appended segment (parseTable checks the image's rows,
// parseTableState the segments' against every row of the table).
func TestTableSegmentGroups(t *testing.T) {
	recs := randomRecs(rand.New(rand.NewPCG(7, 8)), 5)
	for _, tc := range []struct {
		name              string
		imageGroup, group int32 // of the image's last row, of the segment's first
		ok                bool
	}{
		{"in range", 4, 7, true},
		{"segment group past the table", 4, 8, false},
		{"segment group negative", 4, -1, false},
		{"image group past the image", 6, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), docsFile)
			img := append([]docRec(nil), recs...)
			img[4].Group = tc.imageGroup
			st, err := writeTableState(path, img, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			keep, err := readTableState(path, true, &st)
			if tc.imageGroup >= 5 {
				if err == nil {
					t.Fatal("image group past the image accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			added := randomRecs(rand.New(rand.NewPCG(9, 10)), 3)
			added[0].Group = tc.group
			if st, err = appendTable(path, added, keep, st); err != nil {
				t.Fatal(err)
			}
			for _, verify := range []bool{false, true} {
				tab, err := readTableState(path, verify, &st)
				if (err == nil) != tc.ok {
					t.Fatalf("verify %v: err %v, want ok %v", verify, err, tc.ok)
				}
				if err == nil && (len(tab.groups) != 8 || tab.groups[5] != tc.group) {
					t.Errorf("groups %v", tab.groups)
				}
			}
		})
	}
}

// badCtxRow checks a chunk without branches (ctxRowsIn) and walks it row by
// row only when it holds a bad row: it must name the same first bad row as
// the walk alone, for a value at each edge of each field's range, in any
// row of the chunk, one or several bad.
func TestBadCtxRowSameAsWalk(t *testing.T) {
	walk := func(rows []ctxRow, n, first int) int {
		for i, r := range rows {
			if r.prev < -1 || int(r.prev) >= n || r.next < -1 || int(r.next) >= n || r.verb < 0 || r.head < 0 || r.asked < 0 || r.out < 0 {
				return first + i
			}
		}
		return -1
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 26))
	const minI, maxI = -1 << 31, 1<<31 - 1
	for _, n := range []int{1, 2, 7, ctxChunkRows, 1_000_000, 1<<31 - 1} {
		edges := []int64{minI, minI + 1, -2, -1, 0, 1, int64(n) - 2, int64(n) - 1, int64(n), int64(n) + 1, maxI - 1, maxI}
		for round := range 400 {
			rows := make([]ctxRow, 1+rng.IntN(300))
			for i := range rows {
				rows[i] = ctxRow{prev: int32(rng.Int64N(int64(n)+1) - 1), next: int32(rng.Int64N(int64(n)+1) - 1),
					verb: int32(rng.IntN(50)), head: int32(rng.IntN(5)), asked: int32(rng.IntN(2)), out: int32(rng.IntN(90))}
			}
			for range round % 4 { // 0 to 3 fields set to an edge value
				r := &rows[rng.IntN(len(rows))]
				f := []*int32{&r.prev, &r.next, &r.verb, &r.head, &r.asked, &r.out}[rng.IntN(6)]
				*f = int32(edges[rng.IntN(len(edges))])
			}
			first := rng.IntN(1000)
			if got, want := badCtxRow(rows, n, first), walk(rows, n, first); got != want {
				t.Fatalf("n %d round %d: badCtxRow %d, the walk %d (rows %v)", n, round, got, want, rows)
			}
		}
	}
}
