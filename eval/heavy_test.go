package eval

import (
	"context"
	"github.com/gitmem/git-mem/internal/shared"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitmem/git-mem/search"
)

// sharedEval is shared/eval beside the checkout (as on the developers'
// machines and in CI); GIT_MEM_SHARED_EVAL overrides it.
func sharedEval(t *testing.T) string {
	if d := os.Getenv("GIT_MEM_SHARED_EVAL"); d != "" {
		return d
	}
	d, err := filepath.Abs(filepath.Join(shared.Dir(), "eval"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// heavyFloors are the numbers of docs/bench/eval.md minus a small margin:
// the default mode must keep them, and must never fall below plain BM25
// (verbatim-bm25) overall or on the coding set's conceptual queries.
var heavyFloors = []struct {
	dir           string
	mrr, r10      float64
	conceptualMRR float64 // 0: no such category
}{
	{"locomo-dev", 0.61, 0.795, 0},
	{"coding/paulukonis", 0.815, 0.85, 0.545},
}

// TestSharedEvalHeavy runs `git mem eval` on shared/eval (LoCoMo dev and
// the coding dev set): about a minute, so only with GIT_MEM_HEAVY=1.
func TestSharedEvalHeavy(t *testing.T) {
	if os.Getenv("GIT_MEM_HEAVY") == "" {
		t.Skip("set GIT_MEM_HEAVY=1 to run the shared/eval benchmarks")
	}
	isolate(t)
	root := sharedEval(t)
	for _, f := range heavyFloors {
		t.Run(f.dir, func(t *testing.T) {
			sets, _, err := Load(filepath.Join(root, f.dir))
			if err != nil {
				t.Skipf("shared eval data: %v", err)
			}
			rep, err := Run(context.Background(), sets, Options{TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			var def, plain *ModeReport
			for i := range rep.Modes {
				m := &rep.Modes[i]
				t.Logf("%-16s MRR %.4f R@5 %.4f R@10 %.4f nDCG %.4f AllEv %.4f conceptual %.4f (%.1fs)", m.Mode, m.MRR,
					m.RecallAt5, m.RecallAt10, m.NDCGAt10, m.AllEvidenceRecallAt10, m.ByCategory["conceptual"].MRR, m.Seconds)
				if m.Default {
					def = m
				}
				if m.Mode == search.ModeVerbatimBM25 {
					plain = m
				}
			}
			if def == nil || plain == nil {
				t.Fatal("no default or no verbatim-bm25 mode reported")
			}
			if def.MRR < f.mrr || def.RecallAt10 < f.r10 {
				t.Errorf("default %s: MRR %.4f R@10 %.4f, floors %.3f / %.3f", def.Mode, def.MRR, def.RecallAt10, f.mrr, f.r10)
			}
			if def.MRR < plain.MRR {
				t.Errorf("default %s MRR %.4f is below plain BM25's %.4f", def.Mode, def.MRR, plain.MRR)
			}
			if f.conceptualMRR > 0 {
				c, p := def.ByCategory["conceptual"].MRR, plain.ByCategory["conceptual"].MRR
				if c < f.conceptualMRR || c < p {
					t.Errorf("default %s: conceptual MRR %.4f, floor %.3f, plain BM25 %.4f", def.Mode, c, f.conceptualMRR, p)
				}
			}
		})
	}
}
