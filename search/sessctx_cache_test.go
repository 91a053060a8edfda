package search

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// sessCacheDocs are sessions of several exchanges (neighbours, asked
// questions, titles), in seeded random order of sessions and lengths.
func sessCacheDocs(from, to int) []Doc {
	var docs []Doc
	for i := from; i < to; i++ {
		talk := fmt.Sprintf("user: the widget w%d of the frobnicator fails", i)
		if i%4 == 1 {
			talk += " again and again with a longer story about the cache and its rows"
		}
		if i%5 == 2 {
			talk += "\nassistant: did you restart the daemon?"
		}
		docs = append(docs, Doc{Seq: i, Commit: fmt.Sprintf("%040d", i), ID: fmt.Sprintf("d%d", i),
			Time: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC), Session: fmt.Sprintf("s%d", (i*7)%9),
			Core: fmt.Sprintf("task %d", i), Verbatim: talk, Output: fmt.Sprintf("log line %d", i%3)})
	}
	return docs
}

// The session cache is written by the first read-only search, mapped by the
// next, and any search ranks and scores as it does without it; a cache
// that is damaged, of another table or of other weights is not used.
func TestSessCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	write := func(docs []Doc) {
		t.Helper()
		ix, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Add(docs); err != nil {
			t.Fatal(err)
		}
		last := docs[len(docs)-1].Seq
		if err := ix.SetLastCommit(fmt.Sprintf("%040d", last), last); err != nil {
			t.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"widget frobnicator", "restart the daemon", "cache rows story", "w7 fails log"}
	// hitsOf is every query's hits, ids and score bits.
	hitsOf := func(ix *Index) string {
		t.Helper()
		var out string
		for _, q := range queries {
			hits, err := ix.Search(Query{Text: q, K: 10, Mode: ModeSessionBM25})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				out += fmt.Sprintf("%s %x; ", h.Doc.ID, math.Float64bits(h.Score))
			}
			out += "\n"
		}
		return out
	}
	// search returns a read-only search's hits, and whether the index's
	// session context came from the cache.
	search := func() (string, bool) {
		t.Helper()
		ix, err := OpenReadOnly(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		out := hitsOf(ix)
		c, err := ix.ensureContext()
		if err != nil {
			t.Fatal(err)
		}
		return out, c.mem == nil && len(c.weight) > 0
	}
	// reference: a writer's context, never cached
	reference := func() string {
		t.Helper()
		ix, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		return hitsOf(ix)
	}
	cache := filepath.Join(dir, sessCacheFile)
	w0, p0 := ContextWeight, SessionLenPow
	t.Cleanup(func() { ContextWeight, SessionLenPow = w0, p0 })
	write(sessCacheDocs(0, 40))
	want := reference()
	for i, step := range []struct {
		name      string
		before    func()
		fromCache bool
	}{
		{"first search computes", func() {}, false},
		{"second maps the cache", func() {}, true},
		{"damaged cache", func() {
			b, err := os.ReadFile(cache)
			if err != nil {
				t.Fatal(err)
			}
			b[sessCacheHeader+8] ^= 1 // a weight
			if err := os.WriteFile(cache, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"rewritten whole", func() {}, true},
		{"a version 1 file", func() {
			b, err := os.ReadFile(cache)
			if err != nil {
				t.Fatal(err)
			}
			// version 1's layout: no spans column before the checksum
			n := int(binary.LittleEndian.Uint32(b[8:]))
			v1 := append([]byte("GMSCTX\x00\x01"), b[8:len(b)-4-4*n]...)
			v1 = binary.LittleEndian.AppendUint32(v1, crc32.Checksum(v1, crcTable))
			if err := os.WriteFile(cache, v1, 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"written again in this version", func() {
			if b, err := os.ReadFile(cache); err != nil || string(b[:8]) != sessCacheMagic {
				t.Errorf("cache after a version 1 file: %q, %v", b[:min(8, len(b))], err)
			}
		}, true},
		{"a version 2 file", func() {
			b, err := os.ReadFile(cache)
			if err != nil {
				t.Fatal(err)
			}
			// version 2's layout: no power in the header, lengths unbent
			v2 := append([]byte("GMSCTX\x00\x02"), b[8:48]...)
			v2 = append(v2, b[56:len(b)-4]...)
			v2 = binary.LittleEndian.AppendUint32(v2, crc32.Checksum(v2, crcTable))
			if err := os.WriteFile(cache, v2, 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"version 3 again", func() {}, true},
		{"other power", func() { SessionLenPow = p0 + 0.1 }, false},
		{"power back", func() { SessionLenPow = p0 }, false},
		{"other weights", func() { ContextWeight = w0 + 0.1 }, false},
		{"weights back", func() { ContextWeight = w0 }, false},
		{"cache of these weights", func() {}, true},
		{"a writer added rows", func() { write(sessCacheDocs(40, 55)); want = reference() }, false},
		{"cache of the new table", func() {}, true},
	} {
		step.before()
		got, cached := search()
		if cached != step.fromCache {
			t.Errorf("%d %s: from the cache %v, want %v", i, step.name, cached, step.fromCache)
		}
		if step.name != "other weights" && step.name != "other power" && got != want {
			t.Errorf("%d %s: hits\n%s want\n%s", i, step.name, got, want)
		}
		if _, err := os.Stat(cache); err != nil {
			t.Errorf("%d %s: no cache saved: %v", i, step.name, err)
		}
		if err := checkSeal(dir, true); err != nil {
			t.Errorf("%d %s: seal: %v", i, step.name, err)
		}
	}
}

// A cache is the context it was made from, column for column; one whose
// links leave the table, under a matching checksum, is refused.
func TestSessCacheRoundTrip(t *testing.T) {
	rows := []ctxRow{{-1, 2, 3, 1, 0, 9}, {-1, -1, 4, 1, 1, 0}, {0, -1, 5, 2, 0, 7}}
	c := newSessionCtx(rows, nil)
	c.titles()
	key := sessCacheKey{n: len(rows), ctxCRC: 7, ctxMTime: 11, w: ContextWeight, a: AskedWeight, ref: ContextLenRef, pow: SessionLenPow}
	b := encodeSessCache(c, key)
	got := parseSessCache(b, rows, key)
	if got == nil {
		t.Fatal("not read back")
	}
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"weight", got.weight, c.weight}, {"dl", got.dl, c.dl}, {"outDL", got.outDL, c.outDL},
		{"titleDL", got.titleDL, c.titleDL}, {"links", got.links, c.links}, {"spans", got.spans, c.titleSpans()},
		{"means", []float64{got.avgdl, got.outAvg, got.plainAvg, got.titleAvg}, []float64{c.avgdl, c.outAvg, c.plainAvg, c.titleAvg}},
		{"power", got.pow, c.pow},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s: %v, want %v", f.name, f.got, f.want)
		}
	}
	for _, other := range []sessCacheKey{
		{n: 3, ctxCRC: 8, ctxMTime: 11, w: key.w, a: key.a, ref: key.ref, pow: key.pow},
		{n: 3, ctxCRC: 7, ctxMTime: 12, w: key.w, a: key.a, ref: key.ref, pow: key.pow},
		{n: 3, ctxCRC: 7, ctxMTime: 11, w: key.w + 1, a: key.a, ref: key.ref, pow: key.pow},
		{n: 2, ctxCRC: 7, ctxMTime: 11, w: key.w, a: key.a, ref: key.ref, pow: key.pow},
		{n: 3, ctxCRC: 7, ctxMTime: 11, w: key.w, a: key.a, ref: key.ref, pow: key.pow + 0.1},
	} {
		if parseSessCache(b, rows, other) != nil {
			t.Errorf("read for key %+v, made for %+v", other, key)
		}
	}
	if want := []int32{0, 1, 0}; !reflect.DeepEqual(c.titleSpans(), want) {
		t.Errorf("spans %v, want %v", c.titleSpans(), want) // row 0 starts 0 → 2, no run; row 1 is one
	}
	for _, bad := range []int32{-1, 4} { // ends past the table, or negative
		keep := c.spans[1]
		c.spans[1] = bad
		if parseSessCache(encodeSessCache(c, key), rows, key) != nil {
			t.Errorf("a span %d of row 1 in 3 rows was accepted", bad)
		}
		c.spans[1] = keep
	}
	if parseSessCache(encodeSessCache(c, key), rows, key) == nil {
		t.Error("spans put back: not read")
	}
	c.links[1].next = 3
	if parseSessCache(encodeSessCache(c, key), rows, key) != nil {
		t.Error("a link out of range was accepted")
	}
}
