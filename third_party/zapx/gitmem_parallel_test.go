package zap

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// plainField is a text field analysed without locations (no term
// vectors), as git mem's fields are.
func plainField(name, value string, docVals bool) *stubField {
	tfs := make(index.TokenFrequencies)
	n := 0
	for _, tok := range strings.Fields(value) {
		n++
		if tf, ok := tfs[tok]; ok {
			tf.SetFrequency(tf.Frequency() + 1)
			continue
		}
		tf := &index.TokenFreq{Term: []byte(tok)}
		tf.SetFrequency(1)
		tfs[tok] = tf
	}
	opts := index.IndexField
	if docVals {
		opts |= index.DocValues
	}
	return &stubField{name: name, value: []byte(value), encodedType: 't', options: opts,
		analyzedLen: n, analyzedFreqs: tfs}
}

// gitmemVariedDocs makes n documents from seed for the parallel build:
// fields of very different sizes (a few words of a small vocabulary, so
// that lists pass 4,096 documents; long texts of a large one; one term per
// document), fields with and without locations (term vectors), doc values
// on some, documents without a field, non-ASCII terms, frequencies of 0
// and past 32 bits, the composite _all, and, with dup, some documents
// holding a field twice.
func gitmemVariedDocs(seed int64, n int, dup bool) []index.Document {
	r := rand.New(rand.NewSource(seed))
	word := func(vocab int) string {
		if r.Intn(50) == 0 {
			return fmt.Sprintf("wé%dß", r.Intn(vocab))
		}
		return fmt.Sprintf("w%d", r.Intn(vocab))
	}
	words := func(k, vocab int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = word(vocab)
		}
		return strings.Join(ws, " ")
	}
	long := 60 // words of the long fields
	if n > 5000 {
		long = 12
	}
	docs := make([]index.Document, n)
	for i := range docs {
		id := fmt.Sprintf("%d", i)
		head := plainField("head", "common "+words(1+r.Intn(3), 8), false)
		switch r.Intn(200) {
		case 0: // a frequency past 32 bits
			head.analyzedFreqs["common"].SetFrequency(1<<33 + r.Intn(3))
		case 1: // no frequency (the norm is not written)
			head.analyzedFreqs["common"].SetFrequency(0)
		}
		fields := []*stubField{
			newStubFieldSplitString("_id", nil, id, true, false, false),
			head,
		}
		if r.Intn(10) > 0 {
			fields = append(fields, plainField("verbatim", words(1+r.Intn(long), 20000), false))
		}
		if r.Intn(4) > 0 {
			fields = append(fields, plainField("output", words(r.Intn(3*long/2), 50000), false))
		}
		if r.Intn(3) == 0 {
			fields = append(fields, plainField("dv", words(1+r.Intn(3), 30), true))
		}
		if r.Intn(5) == 0 {
			fields = append(fields, newStubFieldSplitString("tv", []uint64{uint64(r.Intn(3))}, words(1+r.Intn(6), 100), false, r.Intn(2) == 0, true))
		}
		if dup && r.Intn(50) == 0 {
			fields = append(fields, plainField("head", words(2, 8), false))
		}
		docs[i] = newStubDocument(id, fields, "_all")
	}
	return docs
}

// TestGitmemParallelSameFile: a segment whose fields are built on 2, 3 and
// 8 goroutines is the file the serial path (1) builds from the same
// documents, byte for byte (each field's (section, address) pairs sorted,
// as zap writes them in a Go map's order), and the serial path's is
// upstream's; documents holding a field twice take the serial path.
func TestGitmemParallelSameFile(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	defer func(w, m int) { gitmemWorkers, gitmemParallelMin = w, m }(gitmemWorkers, gitmemParallelMin)
	gitmemParallelMin = 0
	for _, tc := range []struct {
		name     string
		n        int
		mode     uint32
		dup      bool
		parallel bool // the parallel path is taken
	}{
		{"one", 1, DefaultChunkMode, false, true},
		{"17", 17, DefaultChunkMode, false, true},
		{"2000", 2000, DefaultChunkMode, false, true},
		{"9000 (bitmap containers)", 9000, DefaultChunkMode, false, true},
		{"70000 (two containers)", 70000, DefaultChunkMode, false, true},
		{"3000 legacy chunks", 3000, LegacyChunkMode, false, true},
		{"1500 a field twice", 1500, DefaultChunkMode, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func(workers int, upstream bool) []byte {
				// new documents each time: process merges a field held
				// twice into the first one's frequencies
				docs := gitmemVariedDocs(seed+int64(tc.n), tc.n, tc.dup)
				gitmemWorkers, gitmemUpstream = workers, upstream
				defer func() { gitmemUpstream = false }()
				before := gitmemParallelBuilds.Load()
				seg, _, err := zapPlugin.newWithChunkMode(docs, tc.mode, nil)
				if err != nil {
					t.Fatal(err)
				}
				if par := gitmemParallelBuilds.Load() > before; par != (tc.parallel && workers > 1 && !upstream) {
					t.Fatalf("%d workers: parallel %v", workers, par)
				}
				return gitmemCanonical(t, seg.(*SegmentBase))
			}
			want := build(1, false)
			if up := build(1, true); !bytes.Equal(want, up) {
				t.Fatalf("serial path differs from upstream's (%d, %d bytes)", len(want), len(up))
			}
			for _, workers := range []int{2, 3, 8} {
				got := build(workers, false)
				if !bytes.Equal(want, got) {
					i := 0
					for i < min(len(want), len(got)) && want[i] == got[i] {
						i++
					}
					t.Fatalf("%d workers: %d bytes, serial %d; first difference at %d", workers, len(got), len(want), i)
				}
			}
		})
	}
}

// TestGitmemParallelReused: builds from one pooled interim, parallel and
// serial in turn, of different sizes and fields, each as a fresh serial
// build of the same documents (the kept buffers are reset).
func TestGitmemParallelReused(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	defer func(w, m int) { gitmemWorkers, gitmemParallelMin = w, m }(gitmemWorkers, gitmemParallelMin)
	gitmemParallelMin = 0
	r := rand.New(rand.NewSource(seed))
	for round := range 12 {
		n, dup := 1+r.Intn(3000), r.Intn(3) == 0
		gitmemWorkers = 1 + r.Intn(3)
		seg, _, err := zapPlugin.newWithChunkMode(gitmemVariedDocs(seed+int64(round), n, dup), DefaultChunkMode, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := gitmemCanonical(t, seg.(*SegmentBase))
		gitmemWorkers = 1
		seg2, err := freshBuild(gitmemVariedDocs(seed+int64(round), n, dup))
		if err != nil {
			t.Fatal(err)
		}
		if want := gitmemCanonical(t, seg2.(*SegmentBase)); !bytes.Equal(want, got) {
			t.Fatalf("round %d (%d documents): differs from a fresh serial build", round, n)
		}
	}
}

// freshBuild is newWithChunkMode with a new interim (not the pool's).
func freshBuild(docs []index.Document) (segment.Segment, error) {
	s := &interim{stats: new(segment.Stats)}
	var br bytes.Buffer
	s.results, s.edgeList = flattenNestedDocuments(docs, nil)
	s.chunkMode = DefaultChunkMode
	s.w = NewFileWriterEmpty(NewCountHashWriter(&br))
	storedIndexOffset, sectionsIndexOffset, err := s.convert()
	if err != nil {
		return nil, err
	}
	return InitSegmentBase(br.Bytes(), s.w.Sum32(), DefaultChunkMode,
		uint64(len(s.results)), storedIndexOffset, sectionsIndexOffset, nil, s.stats)
}
