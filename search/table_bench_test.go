package search

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkReadTable opens the document table as every search process does
// (docs/BENCHMARKS.md, "Search: what a process reads"): records of the size
// of the synthetic exchanges' (~400 B), then the ten hits decoded.
func BenchmarkReadTable(b *testing.B) {
	for _, n := range []int{15000, 100000} {
		recs := make([]docRec, n)
		for i := range recs {
			recs[i] = docRec{Seq: i, Commit: fmt.Sprintf("%040x", i), ID: fmt.Sprintf("ex-%08d", i),
				Time: time.Unix(int64(1700000000+i), 0).UTC(), Core: strings.Repeat("word ", 40),
				Context: strings.Repeat("more ", 20), Rooms: []string{"file:auth_middleware", "concept:retry"},
				Files: []string{"src/auth/middleware.ts"}, Project: "billing", Agent: "claude-code",
				Session: fmt.Sprintf("s-%05d", i/20), Group: int32(i - i%20)}
		}
		path := filepath.Join(b.TempDir(), docsFile)
		if err := writeTable(path, recs, 0, nil); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				t, err := readTable(path, false)
				if err != nil {
					b.Fatal(err)
				}
				for row := 0; row < n; row += n / 10 {
					if r, err := t.rec(row); err != nil || r.Seq != row {
						b.Fatalf("row %d: %v %d", row, err, r.Seq)
					}
				}
			}
		})
	}
}
