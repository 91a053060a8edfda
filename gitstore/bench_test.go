package gitstore

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/gitmem/git-mem/internal/shared"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// benchEntries loads the LoCoMo dev exchanges (skips when ../shared is
// absent) or makes n synthetic ones.
func benchEntries(b *testing.B, n int) []Entry {
	b.Helper()
	if n == 0 {
		files, _ := filepath.Glob(filepath.Join(shared.Dir(), "eval/locomo-dev/*/exchanges.jsonl"))
		if len(files) == 0 {
			b.Skip("the shared locomo-dev eval is absent")
		}
		var es []Entry
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				b.Fatal(err)
			}
			_ = exchange.ReadJSONL(fh, f, func(r exchange.Record) error {
				if r.Exchange != nil {
					es = append(es, entryOf(r.Exchange))
				}
				return nil
			})
			fh.Close()
		}
		return es
	}
	es := make([]Entry, n)
	for i := range es {
		ex := &exchange.Exchange{ID: fmt.Sprintf("synthetic-%d", i), Session: fmt.Sprintf("s%d", i/20),
			Time: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339),
			Turns: []exchange.Turn{{Role: "user", Text: fmt.Sprintf("please fix bug %d in module %d: the retry loop times out", i, i%97)},
				{Role: "assistant", Text: fmt.Sprintf("Fixed the retry timeout in pkg/m%d/retry.go by raising the limit to %d ms.", i%97, i%5000)}}}
		es[i] = entryOf(ex)
	}
	return es
}

func entryOf(ex *exchange.Exchange) Entry {
	id := ex.Key()
	msg := exchange.FormatMessage(exchange.Card{Core: ex.UserText(), Distiller: "bench/1"}, exchange.Trailers{Exchange: id, Session: ex.Session})
	return Entry{Path: exchange.BlobPath(id), Blob: ex.Canonical(), Message: msg, When: ex.When(time.Now())}
}

// BenchmarkAppend writes all entries in batches of 2,000 (what `git mem add`
// does) into a fresh memory.
func BenchmarkAppendLocomo(b *testing.B)     { benchAppend(b, benchEntries(b, 0)) }
func BenchmarkAppend15000(b *testing.B)      { benchAppend(b, benchEntries(b, 15000)) }
func BenchmarkFastImportLocomo(b *testing.B) { benchFastImport(b, benchEntries(b, 0)) }
func BenchmarkFastImport15000(b *testing.B)  { benchFastImport(b, benchEntries(b, 15000)) }

func benchAppend(b *testing.B, es []Entry) {
	for i := 0; i < b.N; i++ {
		r, _, err := Init(filepath.Join(b.TempDir(), "m.git"))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for s := 0; s < len(es); s += 2000 {
			if _, err := r.Append(es[s:min(s+2000, len(es))], 0); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(es))/time.Since(start).Seconds(), "exchanges/s")
	}
}

// benchFastImport writes the same commits (same paths, blobs, messages,
// dates) with `git fast-import`: the physical limit of writing git objects.
func benchFastImport(b *testing.B, es []Entry) {
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "f.git")
		if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		for k, e := range es {
			fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n", 2*k+1, len(e.Blob), e.Blob)
			fmt.Fprintf(w, "commit refs/heads/main\nauthor git-mem <git-mem@localhost> %d +0000\ncommitter git-mem <git-mem@localhost> %d +0000\ndata %d\n%s\n",
				e.When.Unix(), e.When.Unix(), len(e.Message), e.Message)
			fmt.Fprintf(w, "M 100644 :%d %s\n\n", 2*k+1, e.Path)
		}
		w.Flush()
		start := time.Now()
		cmd := exec.Command("git", "--git-dir", dir, "fast-import", "--quiet")
		cmd.Stdin = &buf
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("fast-import: %v %s", err, out)
		}
		b.ReportMetric(float64(len(es))/time.Since(start).Seconds(), "exchanges/s")
	}
}
