package search

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// TestPostingCacheScans: a scan served from the cache gives what the
// decoding scan gives — the same postings in the same order, the same
// count for startNorm — for every term and field, read twice (the second
// time from the cache), with a budget that keeps everything and one that
// makes the cache let go of lists as it goes.
func TestPostingCacheScans(t *testing.T) {
	seed := postingsSeed(t)
	// With forgotten exchanges (startNorm declines: their documents map
	// to no row) and without.
	dir, docs := directIndex(t, seed)
	whole := t.TempDir()
	w, err := Open(whole, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range [][]Doc{docs[:400], docs[400:]} {
		if err := w.Add(part); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	vocab := append(vocabulary(docs), "nosuchterm")
	defer func(m int) { minCachedPostings = m }(minCachedPostings)
	minCachedPostings = 1
	ctx := context.Background()
	norms := 0
	for _, c := range []struct {
		dir    string
		budget int64
	}{{dir, 1 << 30}, {dir, 2048}, {whole, 1 << 30}, {whole, 2048}} {
		budget := c.budget
		t.Run(fmt.Sprint(c.dir == whole, budget), func(t *testing.T) {
			ix, _, pr := directReader(t, c.dir, true)
			ix.KeepPostings(budget)
			pc := ix.pcache.Load()
			n := 0
			for _, term := range vocab {
				for _, field := range []string{fieldVerbatim, fieldHead, fieldAsked, fieldOutput, fieldDistilled} {
					want, err := pr.postings(ctx, field, term, nil)
					if err != nil {
						t.Fatal(err)
					}
					wantN, err := pr.normPostings(ctx, field, term, nil)
					if err != nil {
						t.Fatal(err)
					}
					for round := range 3 {
						got := scanRows(t, pr, field, term)
						if !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
							t.Fatalf("round %d, %s:%q: scan %d postings, postings %d; first difference at %d", round, field, term, len(got), len(want), firstDiff(got, want))
						}
						gotN, count, ok := scanNorm(t, pr, field, term)
						if !ok {
							continue // normPostings reads these
						}
						norms++
						if !reflect.DeepEqual(gotN, wantN) && len(gotN)+len(wantN) > 0 || count != len(wantN) {
							t.Fatalf("round %d, %s:%q with norms: scan %d postings (counted %d), normPostings %d", round, field, term, len(gotN), count, len(wantN))
						}
					}
					n += len(want)
				}
			}
			if n == 0 {
				t.Fatal("no postings compared")
			}
			if pc.hits == 0 {
				t.Fatal("no scan was served from the cache")
			}
			if pc.used > budget {
				t.Fatalf("the cache holds %d bytes, over its budget %d", pc.used, budget)
			}
			var sum int64
			for el := pc.lru.Front(); el != nil; el = el.Next() {
				sum += el.Value.(*postingEntry).bytes
			}
			if sum != pc.used || len(pc.entries) != pc.lru.Len() {
				t.Fatalf("the cache counts %d bytes in %d entries; its list holds %d bytes in %d", pc.used, len(pc.entries), sum, pc.lru.Len())
			}
			t.Logf("%d postings compared; %d scans from the cache, %d entries, %d bytes kept", n, pc.hits, len(pc.entries), pc.used)
		})
	}
	if norms == 0 {
		t.Fatal("no startNorm scan compared")
	}
}

// scanRows gathers a start/next scan.
func scanRows(t *testing.T, pr *postingReader, field, term string) []rowFreq {
	t.Helper()
	if err := pr.start(context.Background(), field, term, nil); err != nil {
		t.Fatal(err)
	}
	var out []rowFreq
	for {
		ps, err := pr.next()
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			return out
		}
		out = append(out, ps...)
	}
}

// scanNorm gathers a startNorm/nextNorm scan and its count; ok is false
// where startNorm declines.
func scanNorm(t *testing.T, pr *postingReader, field, term string) ([]cardPosting, int, bool) {
	t.Helper()
	n, ok, err := pr.startNorm(field, term)
	if err != nil {
		t.Fatalf("startNorm %s:%q: %v", field, term, err)
	}
	if !ok {
		return nil, 0, false
	}
	var out []cardPosting
	for {
		ps, err := pr.nextNorm()
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			return out, n, true
		}
		out = append(out, ps...)
	}
}

// TestPostingCacheSame: searches on an index that keeps its postings rank
// the same hits with the same scores (the same floats) as the index that
// decodes them every time, in every mode, query after query (later ones
// served from the cache), with a budget that keeps everything and one that
// keeps a few lists.
func TestPostingCacheSame(t *testing.T) {
	seed := postingsSeed(t)
	dir, docs := directIndex(t, seed)
	vocab := vocabulary(docs)
	defer func(m int) { minCachedPostings = m }(minCachedPostings)
	minCachedPostings = 1
	r := rand.New(rand.NewSource(seed))
	var queries []string
	for range 30 {
		w := make([]string, 1+r.Intn(5))
		for i := range w {
			w[i] = vocab[r.Intn(len(vocab))]
		}
		queries = append(queries, strings.Join(w, " "))
	}
	queries = append(queries, "retry timeout in authMiddleware", "why does parseConfig panic?", "nosuchterm at all")
	plain, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, budget := range []int64{1 << 30, 16 << 10} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			kept, err := OpenReadOnly(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer kept.Close()
			kept.KeepPostings(budget)
			compared := 0
			for round := range 3 {
				for _, q := range queries {
					for _, mode := range Modes {
						want, err := plain.Search(Query{Text: q, Mode: mode, K: 20})
						if err != nil {
							t.Fatal(err)
						}
						got, err := kept.Search(Query{Text: q, Mode: mode, K: 20})
						if err != nil {
							t.Fatal(err)
						}
						if len(got) != len(want) {
							t.Fatalf("round %d, %s %q: %d hits kept, %d decoded", round, mode, q, len(got), len(want))
						}
						for i := range got {
							if got[i].Doc.ID != want[i].Doc.ID || got[i].Score != want[i].Score {
								t.Fatalf("round %d, %s %q, hit %d: %s %v kept, %s %v decoded", round, mode, q, i, got[i].Doc.ID, got[i].Score, want[i].Doc.ID, want[i].Score)
							}
						}
						compared += len(got)
					}
				}
			}
			pc := kept.pcache.Load()
			if compared == 0 || pc.hits == 0 {
				t.Fatalf("%d hits compared, %d scans from the cache", compared, pc.hits)
			}
			if pc.used > budget {
				t.Fatalf("the cache holds %d bytes, over its budget %d", pc.used, budget)
			}
			t.Logf("%d hits compared; %d scans from the cache, %d bytes kept", compared, pc.hits, pc.used)
			if err := kept.Close(); err != nil {
				t.Fatal(err)
			}
			if kept.pcache.Load() != nil {
				t.Fatal("a closed index still holds its postings")
			}
		})
	}
}

// TestPostingCacheSegments: entries read from other segments are never
// served, and a writer's index keeps none.
func TestPostingCacheSegments(t *testing.T) {
	a, b := &scorch.SegmentSnapshot{}, &scorch.SegmentSnapshot{}
	pc := &postingCache{budget: 1 << 20}
	k := postingKey{field: fieldVerbatim, term: "x"}
	e := &postingEntry{key: k, rows: make([]rowFreq, 4), bytes: 4 * int64(unsafe.Sizeof(rowFreq{}))}
	pc.put([]*scorch.SegmentSnapshot{a, b}, e)
	if pc.get([]*scorch.SegmentSnapshot{a, b}, k) != e {
		t.Fatal("an entry of the same segments was not served")
	}
	for _, segs := range [][]*scorch.SegmentSnapshot{{a}, {b, a}, {a, b, b}, nil} {
		if pc.get(segs, k) != nil {
			t.Fatalf("an entry of other segments was served (%d segments)", len(segs))
		}
	}
	if len(pc.entries) != 0 || pc.used != 0 {
		t.Fatalf("%d entries, %d bytes kept after the segments changed", len(pc.entries), pc.used)
	}
	dir := t.TempDir()
	w, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.KeepPostings(1 << 20)
	if w.pcache.Load() != nil {
		t.Fatal("a writer's index keeps postings: its snapshots change under it")
	}
}

// TestPostingCacheAdmit: a list read once is not kept, one read again is;
// a full cache keeps what it has against lists read as often (a rotation
// of queries whose lists do not all fit does not copy lists in and out on
// every search) and gives way to a list read more often; a list let go of
// is freed by the next search, not before.
func TestPostingCacheAdmit(t *testing.T) {
	defer func(m int) { minCachedPostings = m }(minCachedPostings)
	minCachedPostings = 1
	const n = 1 << 14 // 128 KB of rowFreqs: off the heap
	size := int64(unsafe.Sizeof(rowFreq{}))
	segs := []*scorch.SegmentSnapshot{{}}
	pc := &postingCache{budget: 2*n*size + 100}
	key := func(i int) postingKey { return postingKey{field: fieldVerbatim, term: fmt.Sprint("t", i)} }
	// read is one scan of list i that misses the cache: whether it was
	// admitted, and put.
	read := func(i int) (admitted, kept bool) {
		if pc.get(segs, key(i)) != nil {
			t.Fatalf("list %d read while kept", i)
		}
		if !pc.admit(key(i), n, size) {
			return false, false
		}
		e := newRowsEntry(key(i), n)
		e.rows = e.rows[:n]
		if !pc.put(segs, e) {
			e.free()
			return true, false
		}
		return true, true
	}
	if a, _ := read(0); a {
		t.Fatal("a list read once was admitted")
	}
	if _, k := read(0); !k {
		t.Fatal("a list read twice was not kept")
	}
	first := pc.get(segs, key(0))
	if first == nil || first.mem == nil {
		t.Fatalf("kept list: %v (mapped: %v)", first, first != nil && first.mem != nil)
	}
	read(1)
	read(1) // kept: the cache is full
	// A rotation over lists 0, 1, 2: 2 is read as often as the kept ones
	// and never displaces them.
	for round := range 5 {
		if a, k := read(2); k || a && round > 0 {
			t.Fatalf("round %d: list 2 admitted %v, kept %v against lists read as often", round, a, k)
		}
		for _, i := range []int{0, 1} {
			if pc.get(segs, key(i)) == nil {
				t.Fatalf("round %d: list %d was let go of", round, i)
			}
		}
	}
	// Read more often than list 0 (least recently used), list 3 takes its
	// place; list 0's mapping is freed by the next search only.
	pc.get(segs, key(1))
	for range 20 {
		if _, k := read(3); k {
			break
		}
	}
	if pc.get(segs, key(3)) == nil || pc.get(segs, key(0)) != nil {
		t.Fatal("a list read more often did not take the place of the least used one")
	}
	if first.mem != nil && first.mem.released.Load() || len(pc.retired) != 1 {
		t.Fatalf("the list let go of was freed before the next search (%d retired)", len(pc.retired))
	}
	mem := first.mem
	pc.reclaim()
	if !mem.released.Load() || len(pc.retired) != 0 {
		t.Fatal("the next search did not free the list let go of")
	}
	if pc.used > pc.budget || pc.used != 2*n*size {
		t.Fatalf("%d bytes kept (budget %d)", pc.used, pc.budget)
	}
	kept := pc.get(segs, key(3)).mem
	pc.close()
	if !kept.released.Load() || pc.used != 0 {
		t.Fatal("close did not free the lists kept")
	}
}
