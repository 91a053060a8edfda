package search

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"

	"github.com/gitmem/git-mem/internal/cputime"
)

// capturePlugin is rowOrderPlugin that keeps each new segment's documents
// (by row), for benchmarks of zap's build on real analysed documents.
type capturePlugin struct {
	rowOrderPlugin
	mu  *sync.Mutex
	got *[][]bleveindex.Document
}

func (p capturePlugin) keep(results []bleveindex.Document) {
	p.mu.Lock()
	*p.got = append(*p.got, byRow(results))
	p.mu.Unlock()
}

func (p capturePlugin) New(results []bleveindex.Document) (segment.Segment, uint64, error) {
	p.keep(results)
	return p.rowOrderPlugin.New(results)
}

func (p capturePlugin) NewUsing(results []bleveindex.Document, config map[string]any) (segment.Segment, uint64, error) {
	p.keep(results)
	return p.rowOrderPlugin.NewUsing(results, config)
}

// codingSegmentDocs indexes the coding corpus in Bleve batches of 2,000
// (a rebuild's) and returns each segment's analysed documents.
func codingSegmentDocs(tb testing.TB) [][]bleveindex.Document {
	docs := codingDocs(tb)
	var mu sync.Mutex
	var got [][]bleveindex.Document
	scorch.RegisterSegmentPlugin(capturePlugin{rowOrderPlugin{&zap.ZapPlugin{}}, &mu, &got}, true)
	defer scorch.RegisterSegmentPlugin(rowOrderPlugin{&zap.ZapPlugin{}}, true)
	dir := filepath.Join(tb.TempDir(), "index")
	ix, err := Open(dir, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	ix.SetBleveBatch(2000)
	if err := ix.Add(docs); err != nil {
		tb.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		tb.Fatal(err)
	}
	os.RemoveAll(dir)
	return got
}

// BenchmarkZapNewCoding: zap's build of the coding corpus's first segment
// (2,000 analysed documents), in CPU-ms per build.
func BenchmarkZapNewCoding(b *testing.B) {
	segs := codingSegmentDocs(b)
	var big []bleveindex.Document
	for _, s := range segs {
		if len(s) > len(big) {
			big = s
		}
	}
	b.Logf("%d segments, building one of %d documents", len(segs), len(big))
	p := &zap.ZapPlugin{}
	b.ResetTimer()
	cpu0 := cputime.Self()
	for i := 0; i < b.N; i++ {
		seg, _, err := p.New(big)
		if err != nil {
			b.Fatal(err)
		}
		seg.Close()
	}
	b.ReportMetric((cputime.Self()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/op")
}

// zapCanonical is a zap file's bytes (sb.WriteTo's: data and footer) with
// each field's (section, address) pairs sorted by section and the CRC
// zeroed: zap writes the pairs in a Go map's order, so two builds of the
// same documents differ there (and in the CRC) and nowhere else.
func zapCanonical(tb testing.TB, file []byte) []byte {
	mem := slices.Clone(file)
	// footer, from the end: CRC 4, version 4, chunk mode 4, sections
	// index 8, stored index 8, documents 8, writer id length 4, id
	end := len(mem)
	if end < 40 {
		tb.Fatalf("zap file of %d bytes", end)
	}
	copy(mem[end-4:], []byte{0, 0, 0, 0})
	pos := binary.BigEndian.Uint64(mem[end-20:])
	numFields, n := binary.Uvarint(mem[pos:])
	pos += uint64(n)
	for f := uint64(0); f < numFields; f++ {
		at := binary.BigEndian.Uint64(mem[pos+8*f:])
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
	return mem
}

// TestZapParallelCodingSame: zap's segments of the coding corpus (two
// Bleve batches, 2,000 and 1,099 documents) built with GOMAXPROCS 1 (zap's
// serial path) and 2 (fields built at once) are the same files.
func TestZapParallelCodingSame(t *testing.T) {
	segs := codingSegmentDocs(t)
	p := &zap.ZapPlugin{}
	build := func(procs int, docs []bleveindex.Document) []byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		before := zap.GitmemParallelBuilds()
		seg, _, err := p.New(docs)
		if err != nil {
			t.Fatal(err)
		}
		if par := zap.GitmemParallelBuilds() > before; par != (procs > 1) {
			t.Fatalf("GOMAXPROCS %d: built in parallel %v", procs, par)
		}
		defer seg.Close()
		var buf bytes.Buffer
		if _, err := seg.(*zap.SegmentBase).WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for i, docs := range segs {
		want, got := zapCanonical(t, build(1, docs)), zapCanonical(t, build(2, docs))
		if !bytes.Equal(want, got) {
			t.Fatalf("segment %d (%d documents): %d bytes with GOMAXPROCS 2, %d with 1", i, len(docs), len(got), len(want))
		}
		t.Logf("segment %d: %d documents, %d bytes, same", i, len(docs), len(got))
	}
}
