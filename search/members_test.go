package search

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestRowsInSharedGroups: the kept list is every row whose group holds
// another row, in row order, against a count of each group's rows, on
// random group tables (groups named by a member row, as assignGroup names
// them); a group that is not a row number gives none.
func TestRowsInSharedGroups(t *testing.T) {
	seed := postingsSeed(t)
	r := rand.New(rand.NewSource(seed))
	for trial := range 300 {
		n := r.Intn(300)
		groups := make([]int32, n)
		for row := range groups {
			groups[row] = int32(row)
			if row > 0 && r.Intn(3) == 0 { // join an earlier row's group
				groups[row] = groups[r.Intn(row)]
			}
		}
		if trial%50 == 1 && n > 0 {
			groups[r.Intn(n)] = []int32{-1, int32(n), int32(n + 64)}[r.Intn(3)]
		}
		count := map[int32]int{}
		bad := false
		for _, g := range groups {
			count[g]++
			bad = bad || g < 0 || int(g) >= n
		}
		var want []int32
		for row, g := range groups {
			if count[g] > 1 {
				want = append(want, int32(row))
			}
		}
		got, ok := rowsInSharedGroups(groups)
		if ok == bad {
			t.Fatalf("trial %d: ok %v with a group out of range %v", trial, ok, bad)
		}
		if ok && !slices.Equal(got, want) {
			t.Fatalf("trial %d (n %d): rows %v, want %v", trial, n, got, want)
		}
	}
	if got, ok := rowsInSharedGroups([]int32{0, 1, 2}); !ok || got == nil || len(got) != 0 {
		t.Fatalf("no shared group: %v %v, want an empty list", got, ok)
	}
}

// TestHitsSharedGroupsSame: an index keeping the rows of shared groups
// (KeepPostings) gives the same hits as one that is not kept and as its
// own walk over every row — ids, scores, layers and the collapsed
// members in their order — in every mode, with and without filters, for
// memories with many near-identical exchanges; and some hits do fold
// members.
func TestHitsSharedGroupsSame(t *testing.T) {
	seed := postingsSeed(t)
	r := rand.New(rand.NewSource(seed))
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	docs := synthDocs(300, seed)
	status := []string{
		"user: weekly deploy status for the gateway service please\n\nassistant: The deploy pipeline for the gateway service finished, all health checks green, no retry timeout errors, the canary stayed within its error budget",
		"user: nightly backup report for the billing database\n\nassistant: The backup of the billing postgres database completed, the snapshot was verified and the retention policy removed old copies",
		"user: run the flaky auth middleware test again\n\nassistant: The auth middleware test passed this time, the session token refresh raced the cache expiry in the earlier failure",
	}
	for i := range 120 {
		k := r.Intn(len(status))
		v := status[k]
		if r.Intn(2) == 0 {
			v += " today" // near-identical
		}
		docs = append(docs, Doc{ID: fmt.Sprintf("status-%d", i), Session: fmt.Sprintf("s%d", r.Intn(20)),
			Project: []string{"gw", "db"}[r.Intn(2)], Core: v[:40], Verbatim: v, Head: v[:30]})
	}
	r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	for i := range docs {
		docs[i].Seq, docs[i].Time = i, base.Add(time.Duration(i)*time.Hour)
		docs[i].Commit = fmt.Sprintf("%040x", i+1)
	}
	dir := t.TempDir()
	buildIndex(t, dir, docs).Close()
	plain, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	kept, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	kept.KeepPostings(1 << 20)
	if shared, ok := kept.multiRows(); !ok || len(shared) < 100 {
		t.Fatalf("kept rows of shared groups: %d, %v", len(shared), ok)
	}
	if _, ok := plain.multiRows(); ok {
		t.Fatal("an index not kept lists shared groups")
	}
	vocab := vocabulary(docs)
	queries := []string{"weekly deploy status gateway", "billing backup database", "auth middleware test token", "retry timeout"}
	queries = append(queries, randomQueries(r, vocab, 20)...)
	filters := []Filter{{}, {Project: "gw"}, {Since: base.Add(100 * time.Hour)}}
	folded := 0
	defer func() { testWalkAllRows = false }()
	for _, q := range queries {
		for _, mode := range Modes {
			for _, f := range filters {
				for _, k := range []int{3, 20} {
					query := Query{Text: q, Mode: mode, K: k, Filter: f}
					want, err := plain.Search(query)
					if err != nil {
						t.Fatal(err)
					}
					testWalkAllRows = true
					walked, err := kept.Search(query)
					testWalkAllRows = false
					if err != nil {
						t.Fatal(err)
					}
					got, err := kept.Search(query)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(walked, want) {
						t.Fatalf("%s %q %+v k %d: kept\n%+v\nwalked\n%+v\nwant\n%+v", mode, q, f, k, got, walked, want)
					}
					for _, h := range got {
						folded += len(h.Collapsed)
					}
				}
			}
		}
	}
	if folded == 0 {
		t.Fatal("no hit folded a member: the test shows nothing")
	}
	t.Logf("%d queries; %d members folded", len(queries), folded)
}
