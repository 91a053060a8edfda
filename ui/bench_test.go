package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitmem/git-mem/internal/cputime"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/ui"
)

// BenchmarkPage times the page's answers through the HTTP handler, on the
// memory in $GIT_MEM_UI_BENCH_MEM (made with the CLI, docs/BENCHMARKS.md),
// else on 2,000 synthetic exchanges built here:
//
//	GIT_MEM_UI_BENCH_MEM=/tmp/mem15k go test ./ui -run '^$' -bench Page -benchtime 50x
//
// first-page is what a browser asks for when the page opens (/, app.js,
// /api/facets, /api/log); search is one answer with the view's index kept
// open; search-reopen closes the view first, so it pays what a server that
// opened the index per request would.
func BenchmarkPage(b *testing.B) {
	dir := os.Getenv("GIT_MEM_UI_BENCH_MEM")
	if dir == "" {
		dir = synthMemory(b, 2000)
	}
	b.Setenv("HOME", b.TempDir())
	m, err := memory.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	v := memory.NewView(m)
	v.Idle = time.Hour
	defer v.Close()
	s := ui.New(v, testPort, testToken)
	get := func(b *testing.B, target string) {
		w := request(s, "GET", target, nil)
		if w.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", target, w.Code, w.Body)
		}
	}
	queries := []string{"auth middleware TypeError sessionTTL", "retry loop ECONNREFUSED", "rate limiter panic index out of range",
		"invoice export refactor", "docker image build script"}
	q := func(i int) string { return "/api/search?q=" + url.QueryEscape(queries[i%len(queries)]) }
	get(b, q(0)) // catches the index up, opens it, reads the cards
	_, total, _ := v.Log(memory.Filter{}, 1)
	b.Logf("%d exchanges in %s", total, dir)

	b.Run("first-page", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			for _, t := range []string{"/", "/static/app.js", "/api/facets", "/api/log?n=50"} {
				get(b, t)
			}
		}
	})
	b.Run("search", func(b *testing.B) {
		defer cpuPerOp(b)()
		i := 0
		for b.Loop() {
			get(b, q(i))
			i++
		}
	})
	b.Run("search-filtered", func(b *testing.B) {
		defer cpuPerOp(b)()
		i := 0
		for b.Loop() {
			get(b, q(i)+"&project=billing&since=2025-06-01")
			i++
		}
	})
	b.Run("search-reopen", func(b *testing.B) {
		defer cpuPerOp(b)()
		i := 0
		for b.Loop() {
			v.Close()
			get(b, q(i))
			i++
		}
	})
	b.Run("timeline", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			get(b, "/api/timeline")
		}
	})
	b.Run("palace", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			get(b, "/api/palace")
		}
	})
	b.Run("exchange", func(b *testing.B) {
		list, _, _ := v.Log(memory.Filter{}, 100)
		defer cpuPerOp(b)()
		i := 0
		for b.Loop() {
			get(b, "/api/exchange?ref="+list[i%len(list)].Short)
			i++
		}
	})
}

// synthMemory stores n exchanges of scripts/synth in a temporary memory.
func synthMemory(b *testing.B, n int) string {
	b.Helper()
	b.Setenv("HOME", b.TempDir())
	tmp := b.TempDir()
	out, err := exec.Command("go", "run", "../scripts/synth", "-n", fmt.Sprint(n)).Output()
	if err != nil {
		b.Fatalf("scripts/synth: %v", err)
	}
	path := filepath.Join(tmp, "ex.jsonl")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(tmp, "mem.git")
	m, _, err := memory.Init(dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Add(context.Background(), readFixture(b, path), memory.AddOptions{}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// cpuPerOp reports the process's CPU time per operation (cpu-ms/op) next
// to the wall time: on a shared machine under load the wall time mostly
// measures the wait for a core.
func cpuPerOp(b *testing.B) func() {
	start := cputime.Self()
	return func() { b.ReportMetric(float64((cputime.Self()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op") }
}
