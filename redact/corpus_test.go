package redact

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/cputime"
	"github.com/gitmem/git-mem/internal/shared"
)

// TestCorpus redacts the real coding exchanges (already scrubbed by their
// converter, so every hit here is worth a look) with our own layers,
// gitleaks alone and both, and reports the counts and the speed of each
// (docs/bench/redact.md). It runs only with GIT_MEM_HEAVY=1 and skips when
// /work/shared is absent.
func TestCorpus(t *testing.T) {
	if os.Getenv("GIT_MEM_HEAVY") == "" {
		t.Skip("set GIT_MEM_HEAVY=1 to run over the shared coding eval")
	}
	load := func() ([]*exchange.Exchange, int) {
		var exs []*exchange.Exchange
		size := 0
		if !eachCodingExchange(t, func(ex *exchange.Exchange) error {
			exs = append(exs, ex)
			size += len(ex.Render())
			return nil
		}) {
			t.Skip("the shared coding eval is absent")
		}
		return exs, size
	}
	if _, err := detector(); err != nil { // built once, outside the timings
		t.Fatal(err)
	}
	kinds := regexp.MustCompile(`\[REDACTED:[A-Za-z0-9-]+\]`)
	for _, set := range []struct {
		name   string
		layers Layer
	}{{"own", All &^ LayerGitleaks}, {"gitleaks", LayerGitleaks}, {"all", All}} {
		exs, size := load()
		runtime.GC()
		cpu0 := cputime.Self()
		start := time.Now()
		total := 0
		for _, ex := range exs {
			total += ExchangeWith(ex, set.layers)
		}
		d := time.Since(start)
		cpu := cputime.Self() - cpu0
		byKind := map[string]int{}
		hit := 0
		for _, ex := range exs {
			r := ex.Render()
			ms := kinds.FindAllString(r, -1)
			if len(ms) > 0 {
				hit++
			}
			for _, m := range ms {
				byKind[m]++
			}
			if testing.Verbose() && set.layers == All {
				for _, loc := range kinds.FindAllStringIndex(r, -1) {
					a, b := max(0, loc[0]-70), min(len(r), loc[1]+20)
					t.Logf("%s: %q", ex.ID, r[a:b])
				}
			}
		}
		t.Logf("%s: %d exchanges, %.1f MB rendered, %d replacements in %d exchanges %v in %v wall, %v CPU (%.0f µs CPU/exchange, %.1f MB/s CPU)",
			set.name, len(exs), float64(size)/1e6, total, hit, byKind, d.Round(time.Millisecond), cpu.Round(time.Millisecond),
			float64(cpu.Microseconds())/float64(len(exs)), float64(size)/1e6/cpu.Seconds())
	}
}

// eachCodingExchange calls fn with each exchange of the shared coding
// corpus, read afresh (the tests redact them in place), and reports
// whether the corpus is there; an error of fn or of a file fails t.
func eachCodingExchange(t *testing.T, fn func(*exchange.Exchange) error) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(shared.Dir(), "eval/coding/*/exchanges.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		err = exchange.ReadJSONL(fh, f, func(r exchange.Record) error {
			if r.Exchange == nil {
				return nil
			}
			return fn(r.Exchange)
		})
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return len(files) > 0
}
