package redact

import (
	"github.com/gitmem/git-mem/internal/shared"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// TestCorpus redacts the real coding exchanges (already scrubbed by their
// converter, so every hit here is worth a look) and reports the speed. It
// runs only with GIT_MEM_HEAVY=1 and skips when /work/shared is absent.
func TestCorpus(t *testing.T) {
	if os.Getenv("GIT_MEM_HEAVY") == "" {
		t.Skip("set GIT_MEM_HEAVY=1 to run over the shared coding eval")
	}
	files, _ := filepath.Glob(filepath.Join(shared.Dir(), "eval/coding/*/exchanges.jsonl"))
	if len(files) == 0 {
		t.Skip("the shared coding eval is absent")
	}
	var exs []*exchange.Exchange
	size := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		err = exchange.ReadJSONL(fh, f, func(r exchange.Record) error {
			if r.Exchange != nil {
				exs = append(exs, r.Exchange)
				size += len(r.Exchange.Render())
			}
			return nil
		})
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	kinds := regexp.MustCompile(`\[REDACTED:[a-z0-9-]+\]`)
	start := time.Now()
	total := 0
	byKind := map[string]int{}
	for _, ex := range exs {
		if n := Exchange(ex); n > 0 {
			total += n
			for _, m := range kinds.FindAllString(ex.Render(), -1) {
				byKind[m]++
			}
			if testing.Verbose() {
				for _, tu := range ex.Turns {
					for _, loc := range kinds.FindAllStringIndex(tu.Text, -1) {
						a, b := max(0, loc[0]-60), min(len(tu.Text), loc[1]+20)
						t.Logf("%s: %q", ex.ID, tu.Text[a:b])
					}
				}
			}
		}
	}
	d := time.Since(start)
	t.Logf("%d exchanges, %.1f MB rendered, %d redactions %v in %v (%.0f MB/s)",
		len(exs), float64(size)/1e6, total, byKind, d, float64(size)/1e6/d.Seconds())
}
