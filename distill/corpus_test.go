package distill

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/cputime"
	"github.com/gitmem/git-mem/internal/shared"
	"github.com/gitmem/git-mem/tokens"
)

// Shared evaluation data: absent outside the project's workspace, so every
// test that reads it skips cleanly without it.
var (
	codingGlob = filepath.Join(shared.Dir(), "eval/coding/*/exchanges.jsonl")
	locomoGlob = filepath.Join(shared.Dir(), "eval/locomo-dev/*/exchanges.jsonl")
)

func loadExchanges(tb testing.TB, glob string) []*exchange.Exchange {
	tb.Helper()
	files, _ := filepath.Glob(glob)
	if len(files) == 0 {
		tb.Skipf("no data at %s", glob)
	}
	var out []*exchange.Exchange
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatalf("open %s: %v", f, err)
		}
		err = exchange.ReadJSONL(fh, f, func(r exchange.Record) error {
			if r.Err != nil {
				return r.Err
			}
			out = append(out, r.Exchange)
			return nil
		})
		fh.Close()
		if err != nil {
			tb.Fatalf("read %s: %v", f, err)
		}
	}
	return out
}

// checkCard asserts the invariants every heuristic card must hold.
func checkCard(t *testing.T, ex *exchange.Exchange, c exchange.Card) {
	t.Helper()
	if strings.TrimSpace(c.Core) == "" {
		t.Errorf("%s: empty core", ex.ID)
	}
	if n := utf8.RuneCountInString(c.Core); n > exchange.MaxCoreRunes {
		t.Errorf("%s: core is %d runes", ex.ID, n)
	}
	if n := utf8.RuneCountInString(c.Context); n > exchange.MaxContextRunes {
		t.Errorf("%s: context is %d runes", ex.ID, n)
	}
	if len(c.Rooms) < 1 || len(c.Rooms) > 3 {
		t.Errorf("%s: %d rooms %v", ex.ID, len(c.Rooms), c.Rooms)
	}
	for _, r := range c.Rooms {
		if _, err := exchange.ParseRoom(r.String()); err != nil {
			t.Errorf("%s: %v", ex.ID, err)
		}
	}
	if len(c.Files) > MaxFiles {
		t.Errorf("%s: %d files", ex.ID, len(c.Files))
	}
}

// TestCodingCorpus distills every real coding exchange and checks each card.
func TestCodingCorpus(t *testing.T) {
	exs := loadExchanges(t, codingGlob)
	var h Heuristic
	for _, ex := range exs {
		c, err := h.Distill(context.Background(), ex)
		if err != nil {
			t.Fatal(err)
		}
		checkCard(t, ex, c)
	}
	t.Logf("%d coding exchanges distilled", len(exs))
}

// compression is the paper's ratio: BPE tokens of the rendered verbatim
// exchanges over BPE tokens of the cards' core + context.
func compression(exs []*exchange.Exchange) (verb, dist int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	ch := make(chan *exchange.Exchange)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ex := range ch {
				c := heuristicCard(ex)
				v := tokens.Count(ex.Render())
				d := tokens.Count(c.Core + " " + c.Context)
				mu.Lock()
				verb += v
				dist += d
				mu.Unlock()
			}
		}()
	}
	for _, ex := range exs {
		ch <- ex
	}
	close(ch)
	wg.Wait()
	return verb, dist
}

// TestCompression reports the compression ratio on the shared corpora. It
// tokenizes 30 MB, so it runs only with GIT_MEM_HEAVY=1.
func TestCompression(t *testing.T) {
	if os.Getenv("GIT_MEM_HEAVY") == "" {
		t.Skip("set GIT_MEM_HEAVY=1 to measure compression over the shared eval folder")
	}
	for _, c := range []struct {
		name, glob string
		min        float64
	}{{"coding", codingGlob, 11}, {"locomo-dev", locomoGlob, 1}} {
		t.Run(c.name, func(t *testing.T) {
			exs := loadExchanges(t, c.glob)
			verb, dist := compression(exs)
			ratio := float64(verb) / float64(max(dist, 1))
			t.Logf("%s: %d exchanges, verbatim %d tokens (mean %.0f), distilled %d tokens (mean %.1f), compression %.1fx",
				c.name, len(exs), verb, float64(verb)/float64(len(exs)), dist, float64(dist)/float64(len(exs)), ratio)
			if ratio < c.min {
				t.Errorf("compression %.1fx below %.0fx", ratio, c.min)
			}
		})
	}
}

// TestDumpCards prints cards for reading: GIT_MEM_DUMP=N prints every Nth,
// GIT_MEM_DUMP_IDS=a,b the named exchanges.
func TestDumpCards(t *testing.T) {
	step := 0
	fmt.Sscan(os.Getenv("GIT_MEM_DUMP"), &step)
	ids := map[string]bool{}
	for _, id := range strings.Split(os.Getenv("GIT_MEM_DUMP_IDS"), ",") {
		if id != "" {
			ids[id] = true
		}
	}
	if len(ids) > 0 {
		step = 1
	}
	if step <= 0 {
		t.Skip("set GIT_MEM_DUMP=N to print every Nth card")
	}
	glob := codingGlob
	if g := os.Getenv("GIT_MEM_DUMP_GLOB"); g != "" {
		glob = g
	}
	exs := loadExchanges(t, glob)
	for i := 0; i < len(exs); i += step {
		ex := exs[i]
		if len(ids) > 0 && !ids[ex.ID] {
			continue
		}
		c := heuristicCard(ex)
		fmt.Printf("=== %s\nPROMPT: %q\nCORE:   %s\nCTX:    %s\nROOMS:  %v\nFILES:  %v\n", ex.ID, clip(cleanSpaces(ex.UserText()), 300), c.Core, c.Context, exchange.RoomStrings(c.Rooms), c.Files)
	}
}

// BenchmarkHeuristicCoding distills every coding exchange on one goroutine.
// Besides wall-clock throughput it reports exchanges per CPU-second of the
// process, which stays meaningful on a busy machine.
func BenchmarkHeuristicCoding(b *testing.B) {
	exs := loadExchanges(b, codingGlob)
	b.ResetTimer()
	cpu0 := cputime.Self()
	n := 0
	for i := 0; i < b.N; i++ {
		for _, ex := range exs {
			heuristicCard(ex)
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "exchanges/s")
	if cpu := cputime.Self() - cpu0; cpu > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "exchanges/cpu-s")
	}
}
