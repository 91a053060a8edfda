package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestParseTableStateSameAsAppend: the segments' rows decoded by index
// (decodeRows) give the columns, capacities and errors the loop that
// appended each row gave (parseTableStateAppend, kept below as the
// reference), for a table of several segments read as it is and with
// bytes of its segments and fields of their headers damaged (read without
// the checksum, as a search reads it), with the columns from the heap and
// from a mapping.
func TestParseTableStateSameAsAppend(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 25))
	recs := randomRecs(rng, 260)
	p := filepath.Join(t.TempDir(), docsFile)
	st, err := writeTableState(p, recs[:40], 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{41, 120, 121, 260} {
		keep, err := readTableState(p, true, &st)
		if err != nil {
			t.Fatal(err)
		}
		if st, err = appendTable(p, recs[len(keep.seqs):n], keep, st); err != nil {
			t.Fatal(err)
		}
	}
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name string
		b    []byte
	}
	vs := []variant{{"intact", orig}}
	for k := 0; k < 400; k++ {
		i := int(st.Image) + rng.IntN(len(orig)-int(st.Image))
		b := append([]byte(nil), orig...)
		b[i] ^= byte(1 + rng.IntN(255))
		vs = append(vs, variant{fmt.Sprintf("byte %d", i), b})
	}
	for _, fx := range []int{0, 1, 5} { // a first, second and later row's offset of the first segment moved
		at := int(st.Image) + segHeader + fx*tableFixed + 12
		for _, d := range []int32{-1, 1, 1 << 20} {
			b := append([]byte(nil), orig...)
			binary.LittleEndian.PutUint32(b[at:], uint32(int32(binary.LittleEndian.Uint32(b[at:]))+d))
			vs = append(vs, variant{fmt.Sprintf("offset of row %d %+d", fx, d), b})
		}
	}
	for at := st.Image; at+segHeader <= st.Size; at += int64(binary.LittleEndian.Uint32(orig[at+8:])) {
		for _, f := range []int64{8, 12, 16} { // a segment's size, rows and dictionary strings
			for _, d := range []int32{-1, 1, 1 << 30} {
				b := append([]byte(nil), orig...)
				binary.LittleEndian.PutUint32(b[at+f:], uint32(int32(binary.LittleEndian.Uint32(b[at+f:]))+d))
				vs = append(vs, variant{fmt.Sprintf("segment at %d, header field %d %+d", at, f, d), b})
			}
		}
	}
	errs := 0
	for _, v := range vs {
		for _, mapped := range []bool{false, true} {
			got, gm, gerr := parseTableState(v.b, false, st, mapped)
			want, wm, werr := parseTableStateAppend(v.b, false, st, mapped)
			if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
				t.Fatalf("%s, mapped %v: error %v, want %v", v.name, mapped, gerr, werr)
			}
			if gerr != nil {
				errs++
				continue
			}
			same := reflect.DeepEqual(got.seqs, want.seqs) && reflect.DeepEqual(got.groups, want.groups) &&
				reflect.DeepEqual(got.offs, want.offs) && reflect.DeepEqual(got.partLast, want.partLast) &&
				reflect.DeepEqual(got.partEnd, want.partEnd) && reflect.DeepEqual(got.segDict, want.segDict) &&
				got.dictN == want.dictN && got.imgDictN == want.imgDictN && got.parts == want.parts &&
				cap(got.seqs) == cap(want.seqs) && cap(got.groups) == cap(want.groups) && cap(got.offs) == cap(want.offs)
			if !same {
				t.Fatalf("%s, mapped %v: the columns differ from the appending loop's", v.name, mapped)
			}
			gm.release()
			wm.release()
		}
	}
	if errs == 0 {
		t.Fatal("no damage was caught: the damaged cases test nothing")
	}
}

// parseTableStateAppend is parseTableState as it was before session 25:
// each segment row appended to the three columns.
func parseTableStateAppend(b []byte, verify bool, st docsState, mapped bool) (t *table, mem *scratch, err error) {
	if st.Size < st.Image || st.Image < tableHeader || int64(len(b)) < st.Size {
		return nil, nil, fmt.Errorf("%d bytes, committed %d (image %d)", len(b), st.Size, st.Image)
	}
	b = b[:st.Size]
	if verify {
		return nil, nil, errors.New("not the reference's case")
	}
	extra := 0
	for at := st.Image; st.Size-at >= segHeader; {
		total := int64(binary.LittleEndian.Uint32(b[at+8:]))
		if total < segHeader {
			break
		}
		extra += int(binary.LittleEndian.Uint32(b[at+12:]))
		at += total
	}
	if extra < 0 || extra >= len(b)/tableFixed {
		extra = 0
	}
	t, err = parseImage(b[:st.Image], false, func(n int) ([]int, []int32, []uint32) {
		c := withRoom(n + extra)
		if mapped {
			c = n + extra
			mem = newScratch(tableColsSize(c))
		}
		return tableCols(mem, n, c)
	})
	defer func() {
		if err != nil {
			mem.release()
			t, mem = nil, nil
		}
	}()
	if err != nil {
		return nil, mem, err
	}
	t.raw, t.imgDictN = b, t.dictN
	imageRows := len(t.groups)
	for at := st.Image; at < st.Size; {
		if st.Size-at < segHeader || string(b[at:at+8]) != segMagic {
			return nil, nil, fmt.Errorf("segment at %d: bad header", at)
		}
		h := b[at:]
		total := int64(binary.LittleEndian.Uint32(h[8:]))
		n := int64(binary.LittleEndian.Uint32(h[12:]))
		m := int64(binary.LittleEndian.Uint32(h[16:]))
		if total > st.Size-at || segHeader+n*tableFixed+4*(m+1) > total {
			return nil, nil, fmt.Errorf("segment at %d: %d rows, %d strings in %d bytes", at, n, m, total)
		}
		seg := b[at : at+total]
		ends := seg[segHeader+n*tableFixed:]
		strAt := segHeader + n*tableFixed + 4*(m+1)
		prev := uint32(0)
		for i := int64(0); i <= m; i++ {
			e := binary.LittleEndian.Uint32(ends[4*i:])
			if i == 0 && e != 0 || e < prev || strAt+int64(e) > total {
				return nil, nil, fmt.Errorf("segment at %d: dictionary entry %d: bad end", at, i)
			}
			if i > 0 {
				t.segDict = append(t.segDict, [2]uint32{uint32(at + strAt + int64(prev)), uint32(at + strAt + int64(e))})
			}
			prev = e
		}
		t.dictN += int(m)
		recStart, recEnd := uint32(at+strAt+int64(prev)), uint32(at+total)
		last := len(t.seqs) - 1
		t.partLast = append(t.partLast, int32(last))
		t.partEnd = append(t.partEnd, t.offs[last+1])
		seqs, groups, offs := t.seqs, t.groups, t.offs[:last+1]
		fixed := seg[segHeader : segHeader+n*tableFixed]
		prevOff := recStart
		for i := range int(n) {
			fx := fixed[i*tableFixed : i*tableFixed+tableFixed]
			off := binary.LittleEndian.Uint32(fx[12:])
			if off < prevOff || off > recEnd || i == 0 && off != recStart {
				return nil, nil, fmt.Errorf("segment at %d: record %d: bad offset", at, i)
			}
			prevOff = off
			seqs = append(seqs, int(int64(binary.LittleEndian.Uint64(fx))))
			groups = append(groups, int32(binary.LittleEndian.Uint32(fx[8:])))
			offs = append(offs, off)
		}
		t.seqs, t.groups, t.offs = seqs, groups, append(offs, recEnd)
		t.parts++
		at += total
	}
	for i := imageRows; i < len(t.groups); i++ {
		if g := t.groups[i]; g < 0 || int(g) >= len(t.groups) {
			return nil, nil, fmt.Errorf("record %d: bad group", i)
		}
	}
	return t, mem, nil
}
