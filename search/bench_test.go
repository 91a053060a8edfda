package search

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Benchmarks of what `git mem` pays: building the index, and a search in a
// fresh process (OpenReadOnly + Search + Close, the CLI path) or in a warm
// one. 15,000 docs by default; GIT_MEM_HEAVY=1 adds 100,000.
//
//	go test ./search -run '^$' -bench . -benchtime 20x

var benchSizes = func() []int {
	if os.Getenv("GIT_MEM_HEAVY") == "1" {
		return []int{15000, 100000}
	}
	return []int{15000}
}()

var benchQueries = []string{"retry timeout in authMiddleware", "parseConfig nil pointer dereference panic",
	"error E0042 in pkg/db/pool.go", "deploy helm chart kubernetes pod", "refreshToken expire jwt cookie login"}

var (
	benchMu   sync.Mutex
	benchDirs = map[int]string{}
	benchRoot string
)

// benchIndex builds (once per size and process) an index of n synthetic docs.
func benchIndex(b *testing.B, n int) string {
	benchMu.Lock()
	defer benchMu.Unlock()
	if d, ok := benchDirs[n]; ok {
		return d
	}
	if benchRoot == "" {
		var err error
		if benchRoot, err = os.MkdirTemp("", "gitmem-bench"); err != nil {
			b.Fatal(err)
		}
	}
	dir := filepath.Join(benchRoot, fmt.Sprint(n))
	ix := buildIndex(b, dir, synthDocs(n, 42))
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
	benchDirs[n] = dir
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func BenchmarkIndexBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			docs := synthDocs(n, 42)
			var verbatim int64
			for _, d := range docs {
				verbatim += int64(len(d.Verbatim))
			}
			var size int64
			start := time.Now()
			for i := 0; i < b.N; i++ {
				dir := filepath.Join(b.TempDir(), "index")
				ix := buildIndex(b, dir, docs)
				if err := ix.Close(); err != nil {
					b.Fatal(err)
				}
				size = dirSize(dir)
			}
			b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "docs/s")
			b.ReportMetric(float64(size)/float64(verbatim), "index/verbatim")
			b.ReportMetric(float64(size)/(1<<20), "index-MiB")
			b.ReportMetric(float64(verbatim)/(1<<20), "verbatim-MiB")
		})
	}
}

// BenchmarkSearchCold is one CLI search: open read-only, search, close.
func BenchmarkSearchCold(b *testing.B) {
	for _, n := range benchSizes {
		dir := benchIndex(b, n)
		for _, mode := range Modes {
			b.Run(fmt.Sprintf("%d/%s", n, mode), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					ix, err := OpenReadOnly(dir, Options{})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := ix.Search(Query{Text: benchQueries[i%len(benchQueries)], Mode: mode, K: 10}); err != nil {
						b.Fatal(err)
					}
					ix.Close()
				}
			})
		}
	}
}

// BenchmarkOpen is the open alone (what every CLI search pays first).
func BenchmarkOpen(b *testing.B) {
	for _, n := range benchSizes {
		dir := benchIndex(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ix, err := OpenReadOnly(dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				ix.Close()
			}
		})
	}
}

func BenchmarkSearchWarm(b *testing.B) {
	for _, n := range benchSizes {
		dir := benchIndex(b, n)
		ix, err := OpenReadOnly(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range Modes {
			b.Run(fmt.Sprintf("%d/%s", n, mode), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := ix.Search(Query{Text: benchQueries[i%len(benchQueries)], Mode: mode, K: 10}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		ix.Close()
	}
}
