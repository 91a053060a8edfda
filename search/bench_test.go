package search

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gitmem/git-mem/internal/cputime"
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
	docs := synthDocs(n, 42)
	var verbatim int64
	for _, d := range docs {
		verbatim += int64(len(d.Verbatim))
	}
	t0, cpu0 := time.Now(), cputime.Self()
	ix := buildIndex(b, dir, docs)
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "built %d docs in %v (%.0f docs/s, %v CPU); index %d bytes, verbatim %d bytes\n",
		n, time.Since(t0).Round(time.Millisecond), float64(n)/time.Since(t0).Seconds(), (cputime.Self() - cpu0).Round(time.Millisecond),
		dirSize(dir), verbatim)
	benchDirs[n] = dir
	return dir
}

func TestMain(m *testing.M) {
	// As a child of BenchmarkSearchProcess the test binary acts as the
	// CLI: open read-only, search, print, exit.
	if dir := os.Getenv("GITMEM_SEARCH_CHILD"); dir != "" {
		ix, err := OpenReadOnly(dir, Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		hs, err := ix.Search(Query{Text: os.Getenv("GITMEM_SEARCH_QUERY"), Mode: os.Getenv("GITMEM_SEARCH_MODE"), K: 10})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, h := range hs {
			fmt.Println(h.Doc.ID, h.Score)
		}
		ix.Close()
		os.Exit(0)
	}
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
			cpu0 := cputime.Self()
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
			b.ReportMetric((cputime.Self()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
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

// BenchmarkSearchProcess runs each search in a new process (this test binary
// re-executed as a stand-in for `git mem search`): process start, open,
// search, print, exit. The reported p50/p95 are per process.
func BenchmarkSearchProcess(b *testing.B) {
	for _, n := range benchSizes {
		dir := benchIndex(b, n)
		for _, mode := range Modes {
			b.Run(fmt.Sprintf("%d/%s", n, mode), func(b *testing.B) {
				var lat, cpu []time.Duration
				for i := 0; i < b.N; i++ {
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(os.Environ(), "GITMEM_SEARCH_CHILD="+dir, "GITMEM_SEARCH_MODE="+mode,
						"GITMEM_SEARCH_QUERY="+benchQueries[i%len(benchQueries)])
					t0 := time.Now()
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("%v: %s", err, out)
					}
					lat = append(lat, time.Since(t0))
					cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
				}
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
				sort.Slice(cpu, func(i, j int) bool { return cpu[i] < cpu[j] })
				b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "cpu-p50-ms")
			})
		}
	}
}

// BenchmarkSearchCardWeight is the cost of the card field in session-bm25:
// the same warm index and queries with CardWeight 0 and at its default,
// in one process (docs/bench/eval.md, issue 15).
func BenchmarkSearchCardWeight(b *testing.B) {
	dir := benchIndex(b, 15000)
	ix, err := OpenReadOnly(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	def := CardWeight
	for _, w := range []float64{0, def} {
		b.Run(fmt.Sprintf("15000/card-%.2f", w), func(b *testing.B) {
			CardWeight = w
			defer func() { CardWeight = def }()
			for i := 0; i < b.N; i++ {
				if _, err := ix.Search(Query{Text: benchQueries[i%len(benchQueries)], Mode: ModeSessionBM25, K: 10}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
