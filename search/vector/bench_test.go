package vector

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// BenchmarkExactScale is the exact int8 scan alone at sizes too large for
// a graph to be built in a benchmark's time (100k × 384 takes tens of
// minutes on 2 cores), e.g. at 1,000,000:
//
//	GIT_MEM_BENCH_VECTORS=1000000 go test ./search/vector -run '^$' -bench ExactScale -benchtime 5x
func BenchmarkExactScale(b *testing.B) {
	env := os.Getenv("GIT_MEM_BENCH_VECTORS")
	if env == "" {
		b.Skip("set GIT_MEM_BENCH_VECTORS=N[,N…]")
	}
	for _, s := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			b.Fatalf("GIT_MEM_BENCH_VECTORS: %q is not a size", s)
		}
		f, qs := clustered(n, 20, 384, 200, 9)
		vp := filepath.Join(b.TempDir(), "v.f32")
		if err := f.Write(vp); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%d/exact-cold", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ff, err := ReadFlat(vp)
				if err != nil {
					b.Fatal(err)
				}
				_ = ff.Search(qs[i%len(qs)], 10, nil)
			}
		})
		b.Run(fmt.Sprintf("%d/exact-warm", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = f.Search(qs[i%len(qs)], 10, nil)
			}
		})
	}
}
