package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/shared"
)

// TestDumpCoding writes the redacted form of every exchange of the shared
// coding corpus to the file named by GIT_MEM_REDACT_DUMP, one JSON line
// each with its count of replacements. A change meant to speed redaction up
// is checked by dumping with the old and the new code and comparing the two
// files byte for byte (docs/BENCHMARKS.md, "Session 13, ingest"): redaction
// must never get weaker, nor change what it writes. The dump holds redacted
// text only, and lives wherever the caller points it (outside the repo).
func TestDumpCoding(t *testing.T) {
	out := os.Getenv("GIT_MEM_REDACT_DUMP")
	if out == "" {
		t.Skip("set GIT_MEM_REDACT_DUMP=FILE to dump the redacted coding corpus")
	}
	files, _ := filepath.Glob(filepath.Join(shared.Dir(), "eval/coding/*/exchanges.jsonl"))
	if len(files) == 0 {
		t.Skip("the shared coding eval is absent")
	}
	fo, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer fo.Close()
	w := bufio.NewWriter(fo)
	n := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		err = exchange.ReadJSONL(fh, f, func(r exchange.Record) error {
			if r.Exchange == nil {
				return nil
			}
			k := Exchange(r.Exchange)
			b, err := json.Marshal(r.Exchange)
			if err != nil {
				return fmt.Errorf("marshal %s: %w", r.Exchange.ID, err)
			}
			fmt.Fprintf(w, "%d\t%s\n", k, b)
			n++
			return nil
		})
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d exchanges dumped to %s", n, out)
}
