package search

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkTimeBoost is a cold search (open + one query, what a CLI call
// pays) of a query with a relative time expression, TimeBoost off and on:
// the boost reads every row's date from the document table.
func BenchmarkTimeBoost(b *testing.B) {
	for _, n := range benchSizes {
		dir := benchIndex(b, n)
		for _, boost := range []float64{0, 1} {
			b.Run(fmt.Sprintf("%d/boost-%g", n, boost), func(b *testing.B) {
				defer func(old float64) { TimeBoost = old }(TimeBoost)
				TimeBoost = boost
				read0 := timeRowsRead.Load()
				defer func() { b.ReportMetric(float64(timeRowsRead.Load()-read0)/float64(b.N), "rows/op") }()
				for i := 0; i < b.N; i++ {
					ix, err := OpenReadOnly(dir, Options{})
					if err != nil {
						b.Fatal(err)
					}
					q := benchQueries[i%len(benchQueries)] + " two weeks ago"
					if _, err := ix.SearchContext(context.Background(), Query{Text: q, Mode: ModeSessionBM25, K: 10}); err != nil {
						b.Fatal(err)
					}
					ix.Close()
				}
			})
		}
	}
}

// BenchmarkRowTime reads 3,000 rows' dates (what timeBoost read per search
// above), the fast way and by decoding each record.
func BenchmarkRowTime(b *testing.B) {
	dir := b.TempDir()
	ix := buildIndex(b, dir, synthDocs(3000, 3))
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ro.Close()
	for _, full := range []bool{false, true} {
		b.Run(fmt.Sprintf("record-%v", full), func(b *testing.B) {
			for b.Loop() {
				for row := int32(0); row < 3000; row++ {
					var err error
					if full {
						_, err = ro.rec(row)
					} else {
						_, err = ro.rowTime(row)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
