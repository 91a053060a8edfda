package vector

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCrossover compares, at the builtin embedder's width (384), the
// exact scan and the HNSW graph as a CLI process pays them ("cold": read the
// files, then one top-10 search) and as a long-lived process does ("warm":
// search only). recall@10 of the graph against exact is reported too.
//
//	go test ./search/vector -run '^$' -bench Crossover -benchtime 20x
//	GIT_MEM_HEAVY=1 go test ./search/vector -run '^$' -bench Crossover -benchtime 10x -timeout 60m
func BenchmarkCrossover(b *testing.B) {
	sizes := []int{15000}
	if os.Getenv("GIT_MEM_HEAVY") == "1" {
		sizes = append(sizes, 50000, 100000)
	}
	for _, n := range sizes {
		f, qs := clustered(n, 100, 384, 200, 9)
		dir := b.TempDir()
		vp, gp := filepath.Join(dir, "v.f32"), filepath.Join(dir, "g.hnsw")
		if err := f.Write(vp); err != nil {
			b.Fatal(err)
		}
		g := BuildHNSW(f, DefaultHNSWConfig)
		if err := g.Write(gp); err != nil {
			b.Fatal(err)
		}
		recall := recallAt10(f, g, qs)
		b.Run(fmt.Sprintf("%d/exact-cold", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ff, err := ReadFlat(vp)
				if err != nil {
					b.Fatal(err)
				}
				_ = ff.Search(qs[i%len(qs)], 10, nil)
			}
		})
		b.Run(fmt.Sprintf("%d/hnsw-cold", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ff, err := ReadFlat(vp)
				if err != nil {
					b.Fatal(err)
				}
				gg, err := ReadHNSW(gp, ff)
				if err != nil {
					b.Fatal(err)
				}
				_ = gg.Search(qs[i%len(qs)], 10, 0, nil)
			}
			b.ReportMetric(recall, "recall@10")
		})
		b.Run(fmt.Sprintf("%d/exact-warm", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = f.Search(qs[i%len(qs)], 10, nil)
			}
		})
		b.Run(fmt.Sprintf("%d/hnsw-warm", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = g.Search(qs[i%len(qs)], 10, 0, nil)
			}
			b.ReportMetric(recall, "recall@10")
		})
	}
}

// BenchmarkScores is the exact scan alone at 15k × 384.
func BenchmarkScores(b *testing.B) {
	f, qs := clustered(15000, 10, 384, 50, 5)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = f.Scores(qs[i%len(qs)])
	}
}
