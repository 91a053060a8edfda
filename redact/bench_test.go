package redact

import (
	"os"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/cputime"
)

// BenchmarkCodingStrings redacts every string of the shared coding corpus
// (turn texts, names, tool inputs' and extra fields' strings) one at a
// time with all layers: the rules' work of `git mem add` of the corpus,
// without what the exchange-wide pass adds (values found in one string
// replaced in the others). It runs only with GIT_MEM_HEAVY=1; it reports
// the CPU time of a pass (cpu-ms/op) beside the wall time.
func BenchmarkCodingStrings(b *testing.B) {
	if os.Getenv("GIT_MEM_HEAVY") == "" {
		b.Skip("set GIT_MEM_HEAVY=1 to run over the shared coding eval")
	}
	var strs []string
	t := &testing.T{}
	eachCodingExchange(t, func(ex *exchange.Exchange) error {
		w := &walker{}
		w.strs = append(w.strs, &ex.Session, &ex.Project, &ex.Agent)
		for i := range ex.Turns {
			tu := &ex.Turns[i]
			w.strs = append(w.strs, &tu.Text, &tu.Name)
			tu.Input = w.box("", tu.Input)
			for k := range tu.Extra {
				tu.Extra[k] = w.box(k, tu.Extra[k])
			}
		}
		for k := range ex.Extra {
			ex.Extra[k] = w.box(k, ex.Extra[k])
		}
		for _, p := range w.strs {
			strs = append(strs, *p)
		}
		return nil
	})
	if len(strs) == 0 {
		b.Skip("the shared coding eval is absent")
	}
	if _, err := detector(); err != nil {
		b.Fatal(err)
	}
	size := 0
	for _, s := range strs {
		size += len(s)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	cpu0, n := cputime.Self(), 0
	for b.Loop() {
		for _, s := range strs {
			String(s)
		}
		n++
	}
	// CPU per pass too: on a shared machine the wall time is the load's.
	b.ReportMetric(float64((cputime.Self()-cpu0).Milliseconds())/float64(n), "cpu-ms/op")
}
