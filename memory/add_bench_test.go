package memory

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitmem/git-mem/internal/cputime"
	"github.com/gitmem/git-mem/internal/shared"
)

// BenchmarkAddCoding adds every real coding exchange of shared/eval/coding
// into a fresh memory, redaction, distillation and indexing included, as
// `git mem add FILE` does (docs/BENCHMARKS.md, "Ingest"). Profile with
// -cpuprofile. It skips without the shared folder.
func BenchmarkAddCoding(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(shared.Path(b, "eval", "coding"), "*", "exchanges.jsonl"))
	if len(files) == 0 {
		b.Skip("no coding exchanges in the shared folder")
	}
	b.Setenv("HOME", b.TempDir())
	ctx := context.Background()
	var n int
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m, _, err := Init(filepath.Join(b.TempDir(), "mem.git"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := cputime.Self()
		rep, err := m.AddFiles(ctx, files, nil, "exchange", AddOptions{})
		if err != nil || rep.IndexErr != "" {
			b.Fatalf("add: %v %s", err, rep.IndexErr)
		}
		cpu += cputime.Self() - c0
		n += rep.Added
	}
	b.ReportMetric(float64(n)/cpu.Seconds(), "exchanges/CPU-s")
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "exchanges/s")
}

// BenchmarkReindex rebuilds the index of the memory named by
// GIT_MEM_BENCH_MEM (e.g. 100,000 synthetic exchanges built by
// scripts/bench-scale.sh); it skips without one.
func BenchmarkReindex(b *testing.B) {
	dir := os.Getenv("GIT_MEM_BENCH_MEM")
	if dir == "" {
		b.Skip("set GIT_MEM_BENCH_MEM to a memory to reindex")
	}
	m, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		c0 := cputime.Self()
		if _, err := m.Reindex(ctx); err != nil {
			b.Fatal(err)
		}
		cpu += cputime.Self() - c0
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "CPU-s/op")
}

// BenchmarkAddInto adds the exchanges of GIT_MEM_BENCH_ADD_FILE into the
// memory GIT_MEM_BENCH_ADD_MEM, indexing included, as `git mem add FILE`
// does (e.g. 1,000 new into a copy of the 100,000 of scripts/bench-scale.sh:
// it writes into that memory, so give it a copy). It skips without both.
func BenchmarkAddInto(b *testing.B) {
	dir, file := os.Getenv("GIT_MEM_BENCH_ADD_MEM"), os.Getenv("GIT_MEM_BENCH_ADD_FILE")
	if dir == "" || file == "" {
		b.Skip("set GIT_MEM_BENCH_ADD_MEM (a copy) and GIT_MEM_BENCH_ADD_FILE")
	}
	m, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		c0 := cputime.Self()
		rep, err := m.AddFiles(context.Background(), []string{file}, nil, "exchange", AddOptions{})
		if err != nil || rep.IndexErr != "" {
			b.Fatalf("add: %v %s", err, rep.IndexErr)
		}
		cpu += cputime.Self() - c0
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "CPU-s/op")
}
