package search

import (
	"fmt"
	"testing"
)

// TestKeptScratchLayout: an index that keeps postings (the warm search
// process's) asks every query scored by two workers for the same scratch,
// laid out the same (posting buffers sized for every row), whatever its
// terms' lists; one that does not sizes the buffers by the query, so its
// sizes differ. The hits are the same either way (TestPostingCacheSame
// compares them).
func TestKeptScratchLayout(t *testing.T) {
	seed := postingsSeed(t)
	dir, docs := directIndex(t, seed)
	vocab := vocabulary(docs)
	var queries []string
	for i := 0; i+1 < len(vocab) && len(queries) < 40; i += 7 {
		queries = append(queries, vocab[i]+" "+vocab[i+1])
	}
	queries = append(queries, "retry timeout in authMiddleware", "why does parseConfig panic?")
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprint("keep=", keep), func(t *testing.T) {
			ix, err := OpenReadOnly(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if keep {
				ix.KeepPostings(1 << 20)
			}
			sizes, asked := map[int]int{}, 0
			testScratchSize = func(size int) { sizes[size]++; asked++ }
			defer func() { testScratchSize = nil }()
			for _, q := range queries {
				if _, err := ix.Search(Query{Text: q, Mode: "session-bm25", K: 10}); err != nil {
					t.Fatal(err)
				}
			}
			if asked < len(queries)/2 {
				t.Fatalf("%d scratches asked for by %d queries", asked, len(queries))
			}
			// Queries of one term have one worker (another layout): at
			// most two sizes when kept, one per number of workers.
			if keep && len(sizes) > 2 {
				t.Fatalf("kept: %d different scratch sizes %v; want one per number of workers", len(sizes), sizes)
			}
			if !keep && len(sizes) <= 2 {
				t.Fatalf("not kept: %d scratch sizes %v; the queries' buffers should size them apart", len(sizes), sizes)
			}
			t.Logf("seed %d, keep %v: %d scratches, sizes %v", seed, keep, asked, sizes)
		})
	}
}
