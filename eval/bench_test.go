package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/search"
)

// benchGroup is one row of the all-sets table: sets measured together, as
// `git mem eval` would (pooled when it says so).
type benchGroup struct {
	name string
	sets []Set
	ms   *Memories
}

// loadBenchGroups reads every set the defaults are chosen on: LoCoMo dev,
// coding dev, our queries over the other four coding folders, LongMemEval-S
// dev, our conceptual queries (testdata/concept-queries), our misspelt
// queries (testdata/typo-queries), our blind set over the four held-out
// coding folders (testdata/blind-queries), and the coding and LongMemEval
// folders pooled.
func loadBenchGroups(t *testing.T, only string) []*benchGroup {
	root := sharedEval(t)
	load := func(dir string) []Set {
		sets, _, err := Load(dir)
		if err != nil {
			t.Skipf("shared eval data: %v", err)
		}
		return sets
	}
	var ours []Set
	for _, f := range sharedFloors {
		if f.queries != "" {
			ours = append(ours, load(withQueries(t, filepath.Join(root, f.dir), f.queries))...)
		}
	}
	var exact []Set
	for _, f := range []string{"paulukonis", "minsky", "docgen", "ktsu", "chefchopsky"} {
		exact = append(exact, load(withQueries(t, filepath.Join(root, "coding", f), "exact-queries/"+f+".jsonl"))...)
	}
	var concept []Set
	for _, f := range []string{"paulukonis", "minsky", "docgen", "ktsu", "chefchopsky"} {
		concept = append(concept, load(withQueries(t, filepath.Join(root, "coding", f), "concept-queries/"+f+".jsonl"))...)
	}
	var typo []Set
	for _, f := range []string{"paulukonis", "minsky", "docgen", "ktsu", "chefchopsky"} {
		typo = append(typo, load(withQueries(t, filepath.Join(root, "coding", f), "typo-queries/"+f+".jsonl"))...)
	}
	var blind []Set
	for _, f := range []string{"minsky", "docgen", "ktsu", "chefchopsky"} {
		blind = append(blind, load(withQueries(t, filepath.Join(root, "coding", f), "blind-queries/"+f+".jsonl"))...)
	}
	dev := load(filepath.Join(root, "coding/paulukonis"))
	lme := load(filepath.Join(root, "longmemeval-dev"))
	groups := []*benchGroup{
		{name: "locomo-dev", sets: load(filepath.Join(root, "locomo-dev"))},
		{name: "coding-dev", sets: dev},
		{name: "coding-ours", sets: ours},
		{name: "coding-pooled", sets: []Set{Pool("pooled", append(append([]Set(nil), dev...), ours...))}},
		{name: "exact", sets: exact},
		{name: "exact-pooled", sets: []Set{Pool("pooled", exact)}},
		{name: "concept", sets: concept},
		{name: "concept-pooled", sets: []Set{Pool("pooled", concept)}},
		{name: "typo", sets: typo},
		{name: "typo-pooled", sets: []Set{Pool("pooled", typo)}},
		{name: "blind", sets: blind},
		{name: "blind-pooled", sets: []Set{Pool("pooled", blind)}},
		{name: "lme-dev", sets: lme},
		{name: "lme-pooled", sets: []Set{Pool("pooled", lme)}},
	}
	var out []*benchGroup
	for _, g := range groups {
		if only == "" || strings.Contains(","+only+",", ","+g.name+",") {
			out = append(out, g)
		}
	}
	return out
}

// benchVariant is one idea, switched on by set and off by the returned
// function.
type benchVariant struct {
	name string
	set  func() func()
}

// benchVariants are the ideas measured (docs/bench/eval.md).
var benchVariants = []benchVariant{
	{"baseline", func() func() { return func() {} }},
	{"date-off", set(&search.DateBoost, 0.0)},
	{"lenpow-1", set(&search.SessionLenPow, 1.0)},
	{"lenpow-0.5", set(&search.SessionLenPow, 0.5)},
	{"lenpow-0.7", set(&search.SessionLenPow, 0.7)},
	{"lenpow-0.85", set(&search.SessionLenPow, 0.85)},
	{"lenpow-1.15", set(&search.SessionLenPow, 1.15)},
	{"lenpow-1.1", set(&search.SessionLenPow, 1.1)},
	{"lenpow-1.2-b0.65", both(set(&search.SessionLenPow, 1.2), set(&search.SessionB, 0.65))},
	{"lenpow-1.2-b0.85", both(set(&search.SessionLenPow, 1.2), set(&search.SessionB, 0.85))},
	{"lenpow-1.2-k1.0", both(set(&search.SessionLenPow, 1.2), set(&search.SessionK1, 1.0))},
	{"lenpow-1.2-k1.5", both(set(&search.SessionLenPow, 1.2), set(&search.SessionK1, 1.5))},
	{"lenpow-1.2-ref30", both(set(&search.SessionLenPow, 1.2), set(&search.ContextLenRef, 30))},
	{"lenpow-1.2-ref80", both(set(&search.SessionLenPow, 1.2), set(&search.ContextLenRef, 80))},
	{"lenpow-1.2", set(&search.SessionLenPow, 1.2)},
	{"lenpow-1.25", set(&search.SessionLenPow, 1.25)},
	{"lenpow-1.3", set(&search.SessionLenPow, 1.3)},
	{"lenpow-1.4", set(&search.SessionLenPow, 1.4)},
	{"lenpow-1.5", set(&search.SessionLenPow, 1.5)},
	{"lenpow-1.75", set(&search.SessionLenPow, 1.75)},
	{"sessb-0.85", set(&search.SessionB, 0.85)},
	{"sessb-0.95", set(&search.SessionB, 0.95)},
	{"date-0.25", set(&search.DateBoost, 0.25)},
	{"date-0.5", set(&search.DateBoost, 0.5)},
	{"date-1", set(&search.DateBoost, 1.0)},
	{"date-2", set(&search.DateBoost, 2.0)},
	{"date-1-slack0", both(set(&search.DateBoost, 1.0), set(&search.DateSlack, 0))},
	{"date-1-slack2", both(set(&search.DateBoost, 1.0), set(&search.DateSlack, 2))},
	{"thes-0.05", set(&search.ThesaurusWeight, 0.05)},
	{"thes-0.1", set(&search.ThesaurusWeight, 0.1)},
	{"thes-0.2", set(&search.ThesaurusWeight, 0.2)},
	{"thes-0.3", set(&search.ThesaurusWeight, 0.3)},
	{"thes-0.5", set(&search.ThesaurusWeight, 0.5)},
	{"thes-0.2-m1", both(set(&search.ThesaurusWeight, 0.2), set(&search.ThesaurusMax, 1))},
	{"thes-0.2-m3", both(set(&search.ThesaurusWeight, 0.2), set(&search.ThesaurusMax, 3))},
	{"person-off", both(set(&search.PromptCoverWeight, 0.0), set(&search.OpeningWeight, 0.0))},
	{"cover-off", both(set(&search.PromptCoverWeight, 0.0), set(&search.OpeningWeight, 0.1))},
	{"opening-off", both(set(&search.PromptCoverWeight, 0.2), set(&search.OpeningWeight, 0.0))},
	{"cover-0.1", both(set(&search.PromptCoverWeight, 0.1), set(&search.OpeningWeight, 0.1))},
	{"cover-0.15", both(set(&search.PromptCoverWeight, 0.15), set(&search.OpeningWeight, 0.1))},
	{"cover-0.3", both(set(&search.PromptCoverWeight, 0.3), set(&search.OpeningWeight, 0.1))},
	{"cover-0.4", both(set(&search.PromptCoverWeight, 0.4), set(&search.OpeningWeight, 0.1))},
	{"opening-0.05", both(set(&search.PromptCoverWeight, 0.2), set(&search.OpeningWeight, 0.05))},
	{"opening-0.075", both(set(&search.PromptCoverWeight, 0.2), set(&search.OpeningWeight, 0.075))},
	{"opening-0.125", both(set(&search.PromptCoverWeight, 0.2), set(&search.OpeningWeight, 0.125))},
	{"opening-0.15", both(set(&search.PromptCoverWeight, 0.2), set(&search.OpeningWeight, 0.15))},
	{"opening-0.2", both(set(&search.PromptCoverWeight, 0.2), set(&search.OpeningWeight, 0.2))},
	{"cover-0.15-opening-0.075", both(set(&search.PromptCoverWeight, 0.15), set(&search.OpeningWeight, 0.075))},
	{"cover-0.15-opening-0.125", both(set(&search.PromptCoverWeight, 0.15), set(&search.OpeningWeight, 0.125))},
	{"cover-0.25-opening-0.075", both(set(&search.PromptCoverWeight, 0.25), set(&search.OpeningWeight, 0.075))},
	{"cover-0.25-opening-0.125", both(set(&search.PromptCoverWeight, 0.25), set(&search.OpeningWeight, 0.125))},
	{"typo-0.3", set(&search.TypoWeight, 0.3)},
	{"typo-0.5", set(&search.TypoWeight, 0.5)},
	{"typo-1", set(&search.TypoWeight, 1.0)},
	{"typo-0.5-min6", both(set(&search.TypoWeight, 0.5), set(&search.TypoMinLen, 6))},
	{"typo-0.5-min5", both(set(&search.TypoWeight, 0.5), set(&search.TypoMinLen, 5))},
	{"typo-0.3-min5", both(set(&search.TypoWeight, 0.3), set(&search.TypoMinLen, 5))},
	{"typo-1-min5", both(set(&search.TypoWeight, 1.0), set(&search.TypoMinLen, 5))},
	{"typo-off", set(&search.TypoWeight, 0.0)},
	{"typo-long7", set(&search.TypoLong, 7)},
	{"typo-long8", set(&search.TypoLong, 8)},
	{"typo-long7-0.3", both(set(&search.TypoLong, 7), set(&search.TypoWeight, 0.3))},
	{"typo-long8-0.3", both(set(&search.TypoLong, 8), set(&search.TypoWeight, 0.3))},
	{"cooc-0.05", set(&search.CoocWeight, 0.05)},
	{"cooc-0.1", set(&search.CoocWeight, 0.1)},
	{"cooc-0.2", set(&search.CoocWeight, 0.2)},
	{"cooc-0.1-t3", both(set(&search.CoocWeight, 0.1), set(&search.CoocTerms, 3))},
	{"cooc-0.1-m5", both(set(&search.CoocWeight, 0.1), set(&search.CoocMin, 5))},
	{"outb-0.3", set(&search.OutputB, 0.3)},
	{"outb-0.5", set(&search.OutputB, 0.5)},
	{"outb-0.9", set(&search.OutputB, 0.9)},
	{"titleb-0.3", set(&search.TitleB, 0.3)},
	{"titleb-0.9", set(&search.TitleB, 0.9)},
	{"prompt-off", set(&search.PromptWeight, 0.0)},
	{"prompt-off-time-off", both(set(&search.PromptWeight, 0.0), set(&search.TimeBoost, 0.0))},
	{"prompt1p-0.05", both(set(&search.PromptWeight, 0.05), set(&search.PromptFirstPerson, true))},
	{"prompt1p-0.1", both(set(&search.PromptWeight, 0.1), set(&search.PromptFirstPerson, true))},
	{"prompt1p-0.2", both(set(&search.PromptWeight, 0.2), set(&search.PromptFirstPerson, true))},
	{"prompt1p-0.4", both(set(&search.PromptWeight, 0.4), set(&search.PromptFirstPerson, true))},
	{"time-off", set(&search.TimeBoost, 0.0)},
	{"time-off-prompt-0.05", both(set(&search.TimeBoost, 0.0), set(&search.PromptWeight, 0.05))},
	{"time-1-slack-0", both(set(&search.TimeBoost, 1.0), set(&search.TimeSlack, 0.0))},
	{"time-1-slack-2", both(set(&search.TimeBoost, 1.0), set(&search.TimeSlack, 2.0))},
	{"prompt-0.075", set(&search.PromptWeight, 0.075)},
	{"time-1-prompt-0.075", both(set(&search.TimeBoost, 1.0), set(&search.PromptWeight, 0.075))},
	{"time-1-prompt-0.1", both(set(&search.TimeBoost, 1.0), set(&search.PromptWeight, 0.1))},
	{"time-1-prompt-0.05-tier", both(both(set(&search.TimeBoost, 1.0), set(&search.PromptWeight, 0.05)), both(set(&search.ExactTierN, 10), both(set(&search.ExactQuestions, false), set(&search.ExactOutput, true))))},
	{"prf-0.1", set(&search.PRFWeight, 0.1)},
	{"prf-0.2", set(&search.PRFWeight, 0.2)},
	{"prf-0.4", set(&search.PRFWeight, 0.4)},
	{"prf-0.2-d3", both(set(&search.PRFWeight, 0.2), set(&search.PRFDocs, 3))},
	{"prf-0.2-d10-m3", both(set(&search.PRFWeight, 0.2), both(set(&search.PRFDocs, 10), set(&search.PRFMinDocs, 3)))},
	{"frame-0.5", set(&search.FrameWeight, 0.5)},
	{"frame-0.25", set(&search.FrameWeight, 0.25)},
	{"frame-0", set(&search.FrameWeight, 0.0)},
	{"time-1-prompt-0.05", both(set(&search.TimeBoost, 1.0), set(&search.PromptWeight, 0.05))},
	{"tier-on-now", both(set(&search.ExactTierN, 10), both(set(&search.ExactQuestions, false), set(&search.ExactOutput, true)))},
	{"time-0.25", set(&search.TimeBoost, 0.25)},
	{"time-0.5", set(&search.TimeBoost, 0.5)},
	{"time-1", set(&search.TimeBoost, 1.0)},
	{"time-2", set(&search.TimeBoost, 2.0)},
	{"prompt-0.05", set(&search.PromptWeight, 0.05)},
	{"prompt-0.1", set(&search.PromptWeight, 0.1)},
	{"prompt-0.2", set(&search.PromptWeight, 0.2)},
	{"prompt-0.4", set(&search.PromptWeight, 0.4)},
	{"syn-0.05", set(&search.SynonymWeight, 0.05)},
	{"syn-0.1", set(&search.SynonymWeight, 0.1)},
	{"syn-0.1-m1", both(set(&search.SynonymWeight, 0.1), set(&search.SynonymMax, 1))},
	{"syn-0.2", set(&search.SynonymWeight, 0.2)},
	{"syn-0.3", set(&search.SynonymWeight, 0.3)},
	{"syn-0.5", set(&search.SynonymWeight, 0.5)},
	{"syn-0.2-s2", both(set(&search.SynonymWeight, 0.2), set(&search.SynonymSenses, 2))},
	{"syn-0.2-m1", both(set(&search.SynonymWeight, 0.2), set(&search.SynonymMax, 1))},
	{"syn-0.2-m6", both(set(&search.SynonymWeight, 0.2), set(&search.SynonymMax, 6))},
	{"tier-10", set(&search.ExactTierN, 10)},
	{"tier-20", set(&search.ExactTierN, 20)},
	{"tier-20-noq", both(set(&search.ExactTierN, 20), set(&search.ExactQuestions, false))},
	{"tier-20-out", both(set(&search.ExactTierN, 20), set(&search.ExactOutput, true))},
	{"tier-20-noq-out", both(set(&search.ExactTierN, 20), both(set(&search.ExactQuestions, false), set(&search.ExactOutput, true)))},
	{"tier-20-phrase-noq", both(set(&search.ExactTierN, 20), both(set(&search.ExactQuestions, false), set(&search.ExactTerms, false)))},
	{"tier-50", set(&search.ExactTierN, 50)},
	{"title-0.05", set(&search.TitleWeight, 0.05)},
	{"title-0.1", set(&search.TitleWeight, 0.1)},
	{"title-0.2", set(&search.TitleWeight, 0.2)},
	{"title-0.4", set(&search.TitleWeight, 0.4)},
	{"tier-card", set(&search.ExactCard, true)},
	{"tier-card-20", both(set(&search.ExactTierN, 20), set(&search.ExactCard, true))},
	{"tier-off", set(&search.ExactTierN, 0)},
	{"smax-0.1", set(&search.SessionMaxWeight, 0.1)},
	{"smax-0.3", set(&search.SessionMaxWeight, 0.3)},
	{"tier-on", both(set(&search.ExactTierN, 10), both(set(&search.ExactQuestions, false), set(&search.ExactOutput, true)))},
	{"tier-10-noq", both(set(&search.ExactTierN, 10), set(&search.ExactQuestions, false))},
	{"tier-50-noq", both(set(&search.ExactTierN, 50), set(&search.ExactQuestions, false))},
	{"tier-10-noq-out", both(set(&search.ExactTierN, 10), both(set(&search.ExactQuestions, false), set(&search.ExactOutput, true)))},
	{"tier-50-noq-out", both(set(&search.ExactTierN, 50), both(set(&search.ExactQuestions, false), set(&search.ExactOutput, true)))},
	{"tier-20-phrase", both(set(&search.ExactTierN, 20), set(&search.ExactTerms, false))},
	{"b-0.5", set(&search.SessionB, 0.5)},
	{"b-0.6", set(&search.SessionB, 0.6)},
	{"b-0.9", set(&search.SessionB, 0.9)},
	{"k1-0.9", set(&search.SessionK1, 0.9)},
	{"k1-1.6", set(&search.SessionK1, 1.6)},
	{"k1-2", set(&search.SessionK1, 2)},
	{"card-0.05", set(&search.CardWeight, 0.05)},
	{"card-0.1", set(&search.CardWeight, 0.1)},
	{"card-0.15", set(&search.CardWeight, 0.15)},
	{"card-0.2", set(&search.CardWeight, 0.2)},
	{"card-0.3", set(&search.CardWeight, 0.3)},
	{"exact-code-0.5", set(&search.ExactBoost, 0.5)},
	{"exact-code-ladder", set(&search.ExactBoost, 100)},
	{"exact-all-0.5", both(set(&search.ExactBoost, 0.5), set(&search.ExactAll, true))},
	{"session-0.05", set(&search.SessionWeight, 0.05)},
	{"session-0.2", set(&search.SessionWeight, 0.2)},
	{"recency-0.1", set(&search.RecencyWeight, 0.1)},
	{"recency-0.3", set(&search.RecencyWeight, 0.3)},
	{"fuse-distbm25", func() func() {
		old := search.DefaultFusion
		search.DefaultFusion = search.FusionConfig{K: 60, Layers: []search.LayerWeight{{Layer: search.ModeSessionBM25, Weight: 1}, {Layer: search.ModeDistilledBM25, Weight: 0.5}}}
		return func() { search.DefaultFusion = old }
	}},
	{"fuse-vec-0.3", func() func() {
		old := search.DefaultFusion
		search.DefaultFusion = search.FusionConfig{K: 60, Layers: []search.LayerWeight{{Layer: search.ModeSessionBM25, Weight: 1}, {Layer: search.ModeDistilledVector, Weight: 0.3}}}
		return func() { search.DefaultFusion = old }
	}},
}

// set returns a variant that sets *p to v and an undo.
func set[T any](p *T, v T) func() func() {
	return func() func() { old := *p; *p = v; return func() { *p = old } }
}

func both(a, b func() func()) func() func() {
	return func() func() { ua, ub := a(), b(); return func() { ub(); ua() } }
}

// TestBenchAllSets (GIT_MEM_BENCH=1; GIT_MEM_BENCH_SETS=a,b limits the groups,
// GIT_MEM_BENCH_VARIANTS=a,b the variants) builds every set once through
// the real add path and measures each variant in every mode on all of them:
// the same Build and Measure as `git mem eval`, so its numbers are
// `git mem eval`'s. Per group and mode: MRR, R@10, per category, and the
// paired-bootstrap difference from the baseline's same mode.
func TestBenchAllSets(t *testing.T) {
	if os.Getenv("GIT_MEM_BENCH") == "" {
		t.Skip("GIT_MEM_BENCH=1 runs the all-sets benchmark (minutes)")
	}
	isolate(t)
	groups := loadBenchGroups(t, os.Getenv("GIT_MEM_BENCH_SETS"))
	ctx := context.Background()
	// GIT_MEM_BENCH_KEEP=DIR keeps the memories under DIR and reuses them on
	// the next run (only while the exchanges and the distiller are the same:
	// delete DIR after changing either). The index is rebuilt when its
	// schema changed, as for any memory.
	keep := os.Getenv("GIT_MEM_BENCH_KEEP")
	cats := map[string]string{} // qid → category
	for _, g := range groups {
		for _, s := range g.sets {
			for _, q := range s.Queries {
				cats[q.QID] = q.Category
			}
		}
		if keep == "" {
			ms, err := Build(ctx, g.sets, Options{TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer ms.Close()
			g.ms = ms
		} else {
			g.ms = &Memories{sets: g.sets}
			for _, s := range g.sets {
				// Keyed by the exchanges, not the queries: groups that
				// share a folder share its memory.
				b, err := buildIn(ctx, s, filepath.Join(keep, fmt.Sprintf("%s-%d", s.Name, len(s.Exchanges))), true)
				if err != nil {
					t.Fatal(err)
				}
				g.ms.built = append(g.ms.built, b)
				g.ms.buildSeconds += b.seconds
				g.ms.exchanges += len(s.Exchanges)
			}
			defer g.ms.Close()
		}
		t.Logf("%s: %d exchanges built in %.0fs", g.name, g.ms.exchanges, g.ms.buildSeconds)
	}
	only := os.Getenv("GIT_MEM_BENCH_VARIANTS")
	dump := os.Getenv("GIT_MEM_BENCH_DUMP") // DIR: per-query reciprocal ranks
	baseModes := []string{search.ModeVerbatimBM25, search.ModeSessionBM25}
	if os.Getenv("GIT_MEM_BENCH_ALLMODES") != "" {
		baseModes = nil
	}
	base := map[string]ModeReport{} // group/mode → baseline
	for _, v := range benchVariants {
		if only != "" && v.name != "baseline" && !strings.Contains(","+only+",", ","+v.name+",") {
			continue
		}
		undo := v.set()
		for _, g := range groups {
			modes := baseModes
			if v.name != "baseline" {
				modes = []string{search.ModeSessionBM25}
			}
			rep, err := g.ms.Measure(ctx, Options{Modes: modes})
			if err != nil {
				undo()
				t.Fatal(err)
			}
			var b strings.Builder
			for _, m := range rep.Modes {
				key := g.name + "/" + m.Mode
				if v.name == "baseline" {
					base[key] = m
				}
				fmt.Fprintf(&b, "\n  %-17s %.4f / %.4f", m.Mode, m.MRR, m.RecallAt10)
				if bm, ok := base[key]; ok && v.name != "baseline" {
					d := pairedDiff(m, bm, nil)
					fmt.Fprintf(&b, "  Δ %+.4f [%+.4f, %+.4f]", d.MRR, d.CI[0], d.CI[1])
				}
				plain, hasPlain := base[g.name+"/"+search.ModeVerbatimBM25]
				if hasPlain && m.Mode == search.ModeSessionBM25 {
					d := pairedDiff(m, plain, nil)
					fmt.Fprintf(&b, "  vs plain %+.4f [%+.4f, %+.4f]", d.MRR, d.CI[0], d.CI[1])
				}
				for _, c := range Categories(m) {
					fmt.Fprintf(&b, "\n    %-28s %.3f / %.3f", c, m.ByCategory[c].MRR, m.ByCategory[c].RecallAt10)
					in := func(q string) bool { return cats[q] == c }
					if bm, ok := base[key]; ok && v.name != "baseline" {
						d := pairedDiff(m, bm, in)
						fmt.Fprintf(&b, "  Δ %+.3f [%+.3f, %+.3f]", d.MRR, d.CI[0], d.CI[1])
					}
					if hasPlain && m.Mode == search.ModeSessionBM25 {
						d := pairedDiff(m, plain, in)
						mark := ""
						if d.CI[1] < 0 {
							mark = " BELOW PLAIN"
						}
						fmt.Fprintf(&b, "  vs plain %+.3f [%+.3f, %+.3f]%s", d.MRR, d.CI[0], d.CI[1], mark)
					}
				}
				if len(m.BySet) > 1 && len(m.BySet) <= 6 {
					var ss []string
					for s, x := range m.BySet {
						ss = append(ss, fmt.Sprintf("%s %.3f", s, x.MRR))
					}
					sort.Strings(ss)
					fmt.Fprintf(&b, "\n    sets: %s", strings.Join(ss, ", "))
				}
				if dump != "" {
					var lines []string
					for q, rr := range m.PerQuery {
						lines = append(lines, fmt.Sprintf("%s\t%s\t%.4f", q, cats[q], rr))
					}
					sort.Strings(lines)
					name := filepath.Join(dump, v.name+"."+g.name+"."+m.Mode+".tsv")
					if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, pr := range benchProbes {
				if pr.group != g.name {
					continue
				}
				for _, mode := range []string{search.ModeVerbatimBM25, search.ModeSessionBM25} {
					slots, err := g.ms.built[0].search(ctx, pr.query, mode, Options{K: 20})
					if err != nil {
						t.Fatal(err)
					}
					rank := 0
					for i, sl := range slots {
						if rank == 0 && contains(sl, pr.relevant) {
							rank = i + 1
						}
					}
					fmt.Fprintf(&b, "\n  probe %q %s: rank %d", pr.query, mode, rank)
				}
			}
			t.Logf("%s %s:%s", v.name, g.name, b.String())
		}
		undo()
	}
}

// benchProbes are queries of hand tests, with the exchange they want
// first (rank 0 = not in the top 20).
var benchProbes = []struct{ group, query, relevant string }{
	{"coding-dev", "Cannot read properties of undefined reading flip",
		"paulukonis-polychrome.p5-2025-06-20_03-32Z-sketch-js-is-too-large-and-needs-to-have-4"},
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// pairedDiff is a − b over the non-adversarial queries both ran (those
// keep accepts, when it is not nil).
func pairedDiff(a, b ModeReport, keep func(qid string) bool) Diff {
	var qs []string
	for q := range a.PerQuery {
		if _, ok := b.PerQuery[q]; ok && (keep == nil || keep(q)) {
			qs = append(qs, q)
		}
	}
	sort.Strings(qs)
	x, y := make([]float64, len(qs)), make([]float64, len(qs))
	for i, q := range qs {
		x[i], y[i] = a.PerQuery[q], b.PerQuery[q]
	}
	return diff(x, y)
}
