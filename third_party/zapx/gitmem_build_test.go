package zap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	index "github.com/blevesearch/bleve_index_api"
)

// gitmemDocs makes n documents from seed: a field of few words (some in
// nearly every document, so that lists pass roaring's 4,096 of an array
// container), a longer field, a field with doc values, some documents
// holding a field twice (array positions), some without a field, and the
// composite _all.
func gitmemDocs(seed int64, n int) []index.Document {
	r := rand.New(rand.NewSource(seed))
	word := func(vocab int) string { return fmt.Sprintf("w%d", r.Intn(vocab)) }
	words := func(k, vocab int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = word(vocab)
		}
		return strings.Join(ws, " ")
	}
	docs := make([]index.Document, n)
	for i := range docs {
		id := fmt.Sprintf("%d", i)
		fields := []*stubField{
			newStubFieldSplitString("_id", nil, id, true, false, false),
			newStubFieldSplitString("head", nil, "common "+words(1+r.Intn(3), 8), false, false, false),
		}
		if r.Intn(10) > 0 {
			fields = append(fields, newStubFieldSplitString("body", nil, words(1+r.Intn(40), 3000), true, false, r.Intn(2) == 0))
		}
		if r.Intn(3) == 0 {
			fields = append(fields, newStubFieldSplitString("tag", []uint64{0}, words(1+r.Intn(2), 20), false, true, true))
			if r.Intn(2) == 0 {
				fields = append(fields, newStubFieldSplitString("tag", []uint64{1}, words(1+r.Intn(2), 20), false, true, true))
			}
		}
		docs[i] = newStubDocument(id, fields, "_all")
	}
	return docs
}

// TestGitmemBuildSameFile: a segment built by gitmem_build.go's path is the
// file upstream's path builds from the same documents, byte for byte but
// for the order of each field's (section, address) pairs, which zap writes
// in a Go map's order (it differs between two builds of upstream too).
func TestGitmemBuildSameFile(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	for _, tc := range []struct {
		name string
		n    int
		mode uint32
	}{
		{"one", 1, DefaultChunkMode},
		{"500", 500, DefaultChunkMode},
		{"9000 (bitmap containers)", 9000, DefaultChunkMode},
		{"70000 (two containers)", 70000, DefaultChunkMode},
		{"2000 legacy chunks", 2000, LegacyChunkMode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func(upstream bool) []byte {
				gitmemUpstream = upstream
				defer func() { gitmemUpstream = false }()
				seg, _, err := zapPlugin.newWithChunkMode(gitmemDocs(seed, tc.n), tc.mode, nil)
				if err != nil {
					t.Fatal(err)
				}
				return gitmemCanonical(t, seg.(*SegmentBase))
			}
			want, got := build(true), build(false)
			if !bytes.Equal(want, got) {
				i := 0
				for i < min(len(want), len(got)) && want[i] == got[i] {
					i++
				}
				t.Fatalf("segment of %d documents: %d bytes, upstream's %d; first difference at %d", tc.n, len(got), len(want), i)
			}
		})
	}
}

// gitmemCanonical is sb's bytes with each field's (section, address) pairs
// sorted by section.
func gitmemCanonical(t *testing.T, sb *SegmentBase) []byte {
	mem := slices.Clone(sb.mem)
	pos := sb.sectionsIndexOffset
	numFields, n := binary.Uvarint(mem[pos:])
	pos += uint64(n)
	for f := uint64(0); f < numFields; f++ {
		at := binary.BigEndian.Uint64(mem[pos+8*f:])
		// name length, name, options, number of sections, pairs
		l, n := binary.Uvarint(mem[at:])
		at += uint64(n) + l
		_, n = binary.Uvarint(mem[at:])
		at += uint64(n)
		k, n := binary.Uvarint(mem[at:])
		at += uint64(n)
		pairs := make([][]byte, k)
		for i := range pairs {
			pairs[i] = slices.Clone(mem[at+10*uint64(i) : at+10*uint64(i)+10])
		}
		slices.SortFunc(pairs, func(a, b []byte) int { return bytes.Compare(a[:2], b[:2]) })
		copy(mem[at:], bytes.Join(pairs, nil))
	}
	if len(mem) == 0 || numFields == 0 {
		t.Fatal("empty segment")
	}
	return mem
}

// TestGitmemSameDocsSameBytes: a segment's bytes are a function of its
// documents. The sections were persisted and listed in a Go map's order,
// so two builds of the same documents differed (sectionsInOrder).
func TestGitmemSameDocsSameBytes(t *testing.T) {
	if len(segmentSections) < 2 {
		t.Skipf("%d section(s) registered: no order to vary", len(segmentSections))
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	var want []byte
	var wantCRC uint32
	for i := range 16 {
		seg, err := freshBuild(gitmemVariedDocs(seed, 300, false))
		if err != nil {
			t.Fatal(err)
		}
		sb := seg.(*SegmentBase)
		if i == 0 {
			want, wantCRC = sb.mem, sb.memCRC
			continue
		}
		if !bytes.Equal(sb.mem, want) || sb.memCRC != wantCRC {
			t.Fatalf("build %d of the same documents wrote other bytes (%d, first %d)", i, len(sb.mem), len(want))
		}
	}
}
