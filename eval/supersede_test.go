package eval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/search"
)

// TestSupersedeBenchFloor runs issue 20's benchmark (testdata/bench/supersede)
// through `git mem eval`'s own path and holds the bars as a floor
// on what it computes: rule recall (R@10 of the rule questions) ≥ 0.95 and
// current-fact-first ≥ 0.90 with the default ranking (session-bm25, living
// first). Its questions were fixed before tuning and share no word with
// the pipeline's change or recency signals.
func TestSupersedeBenchFloor(t *testing.T) {
	isolate(t)
	sets, _, err := Load(filepath.Join("..", "testdata", "bench", "supersede"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		for _, q := range s.Queries {
			if search.HasChangeWord(q.Text) || memory.AsksForLatest(q.Text) {
				t.Errorf("question %s shares a trigger word with the pipeline: %q", q.QID, q.Text)
			}
		}
	}
	rep, err := Run(context.Background(), sets, Options{TempDir: t.TempDir(), Modes: []string{search.ModeSessionBM25, search.ModeSessionBM25 + memory.SuffixLiving}})
	if err != nil {
		t.Fatal(err)
	}
	plain, living := rep.Modes[0], rep.Modes[1]
	rules, facts := living.ByCategory["rule-recall"], living.ByCategory["current-fact"]
	t.Logf("living: rule recall@10 %.3f, current-fact-first %.3f (plain %.3f)", rules.RecallAt10, *facts.CurrentFirst, *plain.ByCategory["current-fact"].CurrentFirst)
	if rules.RecallAt10 < 0.95 {
		t.Errorf("rule recall@10 %.3f < 0.95", rules.RecallAt10)
	}
	if facts.CurrentFirst == nil || *facts.CurrentFirst < 0.90 {
		t.Errorf("current-fact-first %v < 0.90", facts.CurrentFirst)
	}
	if *plain.ByCategory["current-fact"].CurrentFirst >= *facts.CurrentFirst {
		t.Errorf("living-first does not help: plain %.3f, living %.3f", *plain.ByCategory["current-fact"].CurrentFirst, *facts.CurrentFirst)
	}
}
