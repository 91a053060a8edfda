package memory

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// TestReindexSpilled: a reindex that writes its tables and lets go of the
// rows every few rows (rebuildSpill; batches of 3 commits) gives the
// results, counts and clean check of one that holds every row, spills
// inside and across sessions, and the next add into it appends as into any
// index.
func TestReindexSpilled(t *testing.T) {
	ctx := context.Background()
	topics := []string{"retry timeout in the webhook", "webhook signature check", "timeout of the db pool",
		"retry the webhook on 500", "unrelated css change", "pool size raised to 40", "migrate the db schema"}
	var exs []*exchange.Exchange
	for i := range 40 {
		txt := topics[i%len(topics)] + fmt.Sprintf(" step %d", i/3)
		exs = append(exs, ex(fmt.Sprintf("x%02d", i), fmt.Sprintf("s%d", i/4), fmt.Sprintf("2026-01-%02dT00:00:00Z", 1+i%28), txt, "done: "+txt))
	}
	queries := []SearchQuery{{Text: "webhook retry timeout", K: 10}, {Text: "db pool", K: 10, Mode: "session-bm25"},
		{Text: "schema", K: 10, Mode: "verbatim-bm25"}}
	run := func(spill int) (results [][]string, docs int) {
		oldSpill, oldBatch := rebuildSpill, rebuildBatch
		rebuildSpill, rebuildBatch = spill, 3 // batches of 3 commits: spills between them
		defer func() { rebuildSpill, rebuildBatch = oldSpill, oldBatch }()
		m := newMemory(t)
		if _, err := m.Add(ctx, exs[:35], AddOptions{NoIndex: true}); err != nil {
			t.Fatal(err)
		}
		rep, err := m.Reindex(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Add(ctx, exs[35:], AddOptions{}); err != nil { // an add after: appended
			t.Fatal(err)
		}
		for _, q := range queries {
			res, _, err := m.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range res {
				ids = append(ids, r.Exchange)
			}
			results = append(results, ids)
		}
		cr, err := m.Check(ctx, false)
		if err != nil || len(cr.Problems) > 0 {
			t.Fatalf("check after a reindex spilled every %d: %+v %v", spill, cr, err)
		}
		return results, rep.Docs
	}
	want, wantDocs := run(1 << 30)
	for _, spill := range []int{1, 3, 7, 35} {
		t.Run(fmt.Sprint(spill), func(t *testing.T) {
			got, docs := run(spill)
			if docs != wantDocs || !reflect.DeepEqual(got, want) {
				t.Fatalf("spilled every %d: %d docs, results %v; without: %d, %v", spill, docs, got, wantDocs, want)
			}
		})
	}
}
