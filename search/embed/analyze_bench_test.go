package embed

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitmem/git-mem/internal/cputime"
	"github.com/gitmem/git-mem/internal/shared"
)

// codingTexts is every turn's text of the real coding exchanges, skipping
// the benchmark when they are absent.
func codingTexts(tb testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(shared.Dir(), "eval/coding/*/exchanges.jsonl"))
	if len(files) == 0 {
		tb.Skip("no coding exchanges")
	}
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<28)
		for sc.Scan() {
			var ex struct{ Turns []struct{ Text string } }
			if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
				tb.Fatal(err)
			}
			for _, t := range ex.Turns {
				out = append(out, t.Text)
			}
		}
		fh.Close()
	}
	return out
}

// BenchmarkJoinedCoding analyses every coding turn with one Analyzer, as
// search.Prepare's workers do.
func BenchmarkJoinedCoding(b *testing.B) {
	texts := codingTexts(b)
	b.ResetTimer()
	cpu0 := cputime.Self()
	for i := 0; i < b.N; i++ {
		a := NewAnalyzer()
		for _, t := range texts {
			a.Joined(t)
		}
	}
	// CPU per pass stays meaningful on a busy machine; wall does not.
	b.ReportMetric((cputime.Self()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/op")
}

// BenchmarkVectorCoding embeds every coding turn with the builtin
// embedder, one Analyzer, as each of Embed's workers does.
func BenchmarkVectorCoding(b *testing.B) {
	texts := codingTexts(b)
	b.ResetTimer()
	cpu0 := cputime.Self()
	for i := 0; i < b.N; i++ {
		a := NewAnalyzer()
		for _, t := range texts {
			Builtin{}.vector(a, t)
		}
	}
	b.ReportMetric((cputime.Self()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/op")
}
