package search

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// TestTermCostsKept: a kept index's termCosts (counts kept by term) give
// the same costs, buffer sizes and card counts as counting every time, for
// the plain and the session fields, on an index of three segments with
// forgotten rows, random terms of its vocabulary, absent terms and
// repeats; the second round is answered from the kept counts, and a change
// of segments is never answered from them.
func TestTermCostsKept(t *testing.T) {
	seed := postingsSeed(t)
	dir, docs := directIndex(t, seed)
	vocab := append(vocabulary(docs), "nosuchterm", "zzzz")
	r := rand.New(rand.NewSource(seed))
	ix, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ix.KeepPostings(1 << 20)
	rd, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	cache, release := ix.rowCacheFor(rd)
	defer release()
	if !newPostingReader(ix, rd, cache).direct {
		t.Fatal("the test index is not read directly: nothing is kept")
	}
	var lists [][]weightedTerm
	for range 40 {
		ts := make([]weightedTerm, 1+r.Intn(6))
		for i := range ts {
			ts[i] = weightedTerm{t: vocab[r.Intn(len(vocab))], w: 1}
		}
		lists = append(lists, ts)
	}
	defer func() { testCountTerms = false }()
	for round := range 2 {
		for _, ts := range lists {
			for _, plain := range []bool{false, true} {
				testCountTerms = true
				wc, wm, wd := termCosts(ix, rd, cache, ts, plain)
				testCountTerms = false
				gc, gm, gd := termCosts(ix, rd, cache, ts, plain)
				if !slices.Equal(gc, wc) || !slices.Equal(gm, wm) || !slices.Equal(gd, wd) {
					t.Fatalf("round %d, %v plain %v: kept %v %v %v, counted %v %v %v", round, ts, plain, gc, gm, gd, wc, wm, wd)
				}
			}
		}
	}
	kc := ix.tcounts.Load()
	if kc == nil || len(kc.m) == 0 {
		t.Fatal("no counts kept")
	}
	seen := 0
	for _, ts := range lists {
		for _, w := range ts {
			if _, ok := kc.get(kc.segs, w.t); ok {
				seen++
			}
		}
	}
	if seen == 0 {
		t.Fatal("no term answered from the kept counts")
	}
	// Other segments: never answered; a put for them starts again.
	if _, ok := kc.get(nil, lists[0][0].t); ok {
		t.Fatal("counts kept for other segments answered")
	}
	segs := kc.segs
	kc.put(nil, "x", [len(costFields)]int{1})
	if len(kc.m) != 1 {
		t.Fatalf("after a put for other segments, %d counts kept, want 1", len(kc.m))
	}
	if _, ok := kc.get(segs, lists[0][0].t); ok {
		t.Fatal("counts of the former segments answered after a change")
	}
	// A plain index (not kept) keeps none.
	plain, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if plain.tcounts.Load() != nil {
		t.Fatal("an index not kept keeps counts")
	}
}

// TestKeptIndexConcurrentSearches: searches started at once on a kept
// index from four goroutines (its posting cache, term counts and rows of
// shared groups filled by whichever comes first; the session layers take
// turns under the row cache's lock) give the hits of an index not kept, in
// every mode, three rounds; -race clean.
func TestKeptIndexConcurrentSearches(t *testing.T) {
	seed := postingsSeed(t)
	dir, docs := directIndex(t, seed)
	vocab := vocabulary(docs)
	r := rand.New(rand.NewSource(seed))
	var queries []string
	queries = append(queries, randomQueries(r, vocab, 12)...)
	plain, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	want := map[string][]Hit{}
	for _, q := range queries {
		for _, mode := range Modes {
			hs, err := plain.Search(Query{Text: q, Mode: mode, K: 10})
			if err != nil {
				t.Fatal(err)
			}
			want[mode+"|"+q] = hs
		}
	}
	kept, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	defer func(m int) { minCachedPostings = m }(minCachedPostings)
	minCachedPostings = 1
	kept.KeepPostings(1 << 30)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for round := range 3 {
				for i := range queries {
					q := queries[(i+g)%len(queries)]
					for _, mode := range Modes {
						got, err := kept.Search(Query{Text: q, Mode: mode, K: 10})
						if err != nil {
							errs <- err
							return
						}
						if !reflect.DeepEqual(got, want[mode+"|"+q]) {
							errs <- fmt.Errorf("goroutine %d round %d, %s %q: kept hits differ", g, round, mode, q)
							return
						}
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if kc := kept.tcounts.Load(); kc == nil || len(kc.m) == 0 {
		t.Fatal("no counts kept")
	}
}
