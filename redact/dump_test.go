package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/gitmem/git-mem/exchange"
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
	fo, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer fo.Close()
	w := bufio.NewWriter(fo)
	n := 0
	if !eachCodingExchange(t, func(ex *exchange.Exchange) error {
		k := Exchange(ex)
		b, err := json.Marshal(ex)
		if err != nil {
			return fmt.Errorf("marshal %s: %w", ex.ID, err)
		}
		fmt.Fprintf(w, "%d\t%s\n", k, b)
		n++
		return nil
	}) {
		t.Skip("the shared coding eval is absent")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d exchanges dumped to %s", n, out)
}
