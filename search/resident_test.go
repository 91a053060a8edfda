package search

import (
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// residentUnder sums the Rss (bytes) of this process's mappings of files
// under dir whose names end in suffix, and counts those mappings.
func residentUnder(t *testing.T, dir, suffix string) (rss int64, maps int) {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	in := false
	for _, l := range strings.Split(string(raw), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") {
			in = len(f) >= 6 && strings.HasPrefix(f[5], dir+string(filepath.Separator)) && strings.HasSuffix(f[5], suffix)
			if in {
				maps++
			}
			continue
		}
		if in && f[0] == "Rss:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			rss += kb << 10
		}
	}
	return rss, maps
}

// TestDropResident: after a read-only index's DropResident its zap
// segments and mapped tables hold no pages of this process (the mappings
// stay), and searches before and after give the same hits with the same
// scores, in every mode.
func TestDropResident(t *testing.T) {
	seed := postingsSeed(t)
	dir, docs := directIndex(t, seed)
	vocab := vocabulary(docs)
	r := rand.New(rand.NewSource(seed))
	var queries []string
	queries = append(queries, randomQueries(r, vocab, 12)...)
	queries = append(queries, "retry timeout in authMiddleware", "why does parseConfig panic?")
	ix, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	search := func() [][]Hit {
		var all [][]Hit
		for _, q := range queries {
			for _, mode := range Modes {
				hits, err := ix.Search(Query{Text: q, Mode: mode, K: 20})
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, hits)
			}
		}
		return all
	}
	want := search()
	for _, suffix := range []string{".zap", docsFile} {
		if rss, n := residentUnder(t, dir, suffix); n == 0 || rss == 0 {
			t.Fatalf("%s: %d mappings, %d bytes resident after searching; want some", suffix, n, rss)
		}
	}
	ix.DropResident()
	for _, suffix := range []string{".zap", docsFile} {
		if rss, n := residentUnder(t, dir, suffix); n == 0 || rss != 0 {
			t.Fatalf("%s: %d mappings, %d bytes resident after DropResident; want the mappings, no pages", suffix, n, rss)
		}
	}
	got := search()
	compared := 0
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("search %d: %d hits after DropResident, %d before", i, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			if got[i][j].Doc.ID != want[i][j].Doc.ID || got[i][j].Score != want[i][j].Score {
				t.Fatalf("search %d, hit %d: %s %v after DropResident, %s %v before", i, j, got[i][j].Doc.ID, got[i][j].Score, want[i][j].Doc.ID, want[i][j].Score)
			}
			compared++
		}
	}
	if compared == 0 {
		t.Fatal("no hits compared")
	}
	t.Logf("seed %d: %d hits compared", seed, compared)
	var closed *Index
	closed.DropResident() // nil: mapfile's part only, no panic
}
