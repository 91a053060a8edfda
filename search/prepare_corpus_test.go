package search

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gitmem/git-mem/distill"
	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/cputime"
	"github.com/gitmem/git-mem/internal/shared"
)

var codingDocsOnce = sync.OnceValues(func() ([]Doc, error) {
	files, _ := filepath.Glob(filepath.Join(shared.Dir(), "eval/coding/*/exchanges.jsonl"))
	var docs []Doc
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		err = exchange.ReadJSONL(fh, f, func(r exchange.Record) error {
			if r.Err != nil {
				return nil
			}
			ex := r.Exchange
			card, err := distill.Heuristic{}.Distill(context.Background(), ex)
			if err != nil {
				return nil
			}
			tm, _ := time.Parse(time.RFC3339, ex.Time)
			d := Doc{ID: ex.ID, Seq: len(docs) + 1, Time: tm, Core: card.Core, Context: card.Context}
			d.Verbatim, d.Output = ex.RenderSplit()
			d.Head, d.Tail = ex.HeadTail()
			docs = append(docs, d)
			return nil
		})
		fh.Close()
		if err != nil {
			return nil, err
		}
	}
	return docs, nil
})

// codingDocs is the real coding exchanges as the indexer's documents
// (heuristic cards, unredacted), skipping the test when they are absent.
func codingDocs(tb testing.TB) []Doc {
	docs, err := codingDocsOnce()
	if err != nil {
		tb.Fatal(err)
	}
	if len(docs) == 0 {
		tb.Skip("no coding exchanges (GIT_MEM_SHARED)")
	}
	return docs
}

// BenchmarkPrepareCoding analyses the coding corpus's documents as an add
// does (prepare: the fields' terms, the signature, the link words), in
// CPU-ms per pass (the machine is shared: wall time does not compare).
func BenchmarkPrepareCoding(b *testing.B) {
	docs := codingDocs(b)
	b.ResetTimer()
	cpu0 := cputime.Self()
	for i := 0; i < b.N; i++ {
		prepare(docs)
	}
	b.ReportMetric((cputime.Self()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/op")
}

// TestPrepareKeptAnalyzers: prepare gives the same analysis whether its
// Analyzers are new or kept from the calls before, and when calls run at
// once (as a writer's next batch is analysed while the last goes in), on
// generated documents and on the coding corpus when it is present.
func TestPrepareKeptAnalyzers(t *testing.T) {
	check := func(t *testing.T, docs []Doc, rounds, calls int) {
		analyzers.Lock()
		analyzers.free = nil // new Analyzers
		analyzers.Unlock()
		want := prepare(docs)
		for round := range rounds {
			var wg sync.WaitGroup
			got := make([][]prep, calls)
			for i := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i] = prepare(docs)
				}()
			}
			wg.Wait()
			for i := range got {
				for j := range docs {
					if !reflect.DeepEqual(got[i][j], want[j]) {
						t.Fatalf("round %d, call %d: doc %d (%s) analysed differently", round, i, j, docs[j].ID)
					}
				}
			}
		}
		analyzers.Lock()
		defer analyzers.Unlock()
		if n := len(analyzers.free); n == 0 || n > runtime.GOMAXPROCS(0) {
			t.Errorf("%d Analyzers kept", n)
		}
	}
	check(t, synthDocs(600, 5), 2, 3)
	t.Run("coding", func(t *testing.T) { check(t, codingDocs(t), 1, 2) })
}
