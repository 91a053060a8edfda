package eval

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/search"
)

func TestScoreRanking(t *testing.T) {
	l2 := func(i int) float64 { return 1 / math.Log2(float64(i+1)) } // gain at rank i
	tests := []struct {
		name     string
		slots    [][]string
		relevant []string
		want     score
	}{
		{"first", [][]string{{"a"}, {"b"}}, []string{"a"}, score{1, 1, 1, 1, 1}},
		{"third", [][]string{{"x"}, {"y"}, {"a"}}, []string{"a"}, score{1.0 / 3, 1, 1, l2(3), 1}},
		{"none", [][]string{{"x"}, {"y"}}, []string{"a"}, score{}},
		// Recall@n: at least one relevant in the top n; all-evidence: every one.
		{"half of two", [][]string{{"x"}, {"b"}}, []string{"a", "b"}, score{0.5, 1, 1, l2(2) / (l2(1) + l2(2)), 0}},
		{"second beyond 5", [][]string{{"a"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"b"}}, []string{"a", "b"},
			score{1, 1, 1, (1 + l2(7)) / (l2(1) + l2(2)), 1}},
		{"second beyond 10", [][]string{{"a"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"b"}}, []string{"a", "b"},
			score{1, 1, 1, 1 / (l2(1) + l2(2)), 0}},
		{"beyond 10", [][]string{{"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"x"}, {"a"}}, []string{"a"},
			score{1.0 / 11, 0, 0, 0, 0}},
		{"collapsed member", [][]string{{"x"}, {"dup", "a"}}, []string{"a"}, score{0.5, 1, 1, l2(2), 1}},
		{"one slot covers two", [][]string{{"a", "b"}}, []string{"a", "b"}, score{1, 1, 1, 1 / (1 + l2(2)), 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := scoreRanking(tc.slots, tc.relevant)
			g := []float64{got.rr, got.r5, got.r10, got.ndcg, got.all}
			w := []float64{tc.want.rr, tc.want.r5, tc.want.r10, tc.want.ndcg, tc.want.all}
			for i := range g {
				if math.Abs(g[i]-w[i]) > 1e-12 {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}

func TestReadQueries(t *testing.T) {
	in := `{"qid": "a", "query": "q one", "category": 2, "category_name": "temporal", "relevant": ["x"], "adversarial": false}
{"qid": "b", "query": "q two", "category": "conceptual", "relevant": ["x", "y"], "note": "ignored"}

{"qid": "c", "query": "q three", "category": 5, "relevant": ["y"], "adversarial": true}
{"query": "no qid", "relevant": ["x"]}
`
	qs, err := ReadQueries(strings.NewReader(in), "queries.jsonl", map[string]bool{"x": true, "y": true})
	if err != nil {
		t.Fatal(err)
	}
	want := []Query{
		{QID: "a", Text: "q one", Category: "2", CategoryName: "temporal", Relevant: []string{"x"}},
		{QID: "b", Text: "q two", Category: "conceptual", Relevant: []string{"x", "y"}},
		{QID: "c", Text: "q three", Category: "5", Relevant: []string{"y"}, Adversarial: true},
		{QID: "queries.jsonl:5", Text: "no qid", Relevant: []string{"x"}},
	}
	if !reflect.DeepEqual(qs, want) {
		t.Fatalf("got %+v\nwant %+v", qs, want)
	}
	bad := []struct{ line, err string }{
		{`{"qid": "a", "query": "q", "relevant": []}`, `no "relevant"`},
		{`{"qid": "a", "query": " ", "relevant": ["x"]}`, `empty "query"`},
		{`{"qid": "a", "query": "q", "relevant": ["z"]}`, `relevant exchange "z" is not in exchanges.jsonl`},
		{`{"qid": "a", "query": "q", "category": [1], "relevant": ["x"]}`, `"category" must be a number or a string`},
		{`{"qid": "a", "query": "q", "relevant": ["x"]}` + "\n" + `{"qid": "a", "query": "q", "relevant": ["x"]}`, `queries.jsonl:2: qid "a" already used on line 1`},
		{`not json`, `queries.jsonl:1: not a query object`},
	}
	for _, b := range bad {
		_, err := ReadQueries(strings.NewReader(b.line), "queries.jsonl", map[string]bool{"x": true})
		if err == nil || !strings.Contains(err.Error(), b.err) {
			t.Errorf("%s: err = %v, want %q", b.line, err, b.err)
		}
	}
}

func TestLoadLayouts(t *testing.T) {
	dir := t.TempDir()
	ex := `{"id": "e1", "turns": [{"role": "user", "text": "hello"}]}` + "\n"
	q := `{"qid": "q1", "query": "hello", "relevant": ["e1"]}` + "\n"
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "b", ExchangesFile), ex)
	write(filepath.Join(dir, "b", QueriesFile), q)
	write(filepath.Join(dir, "a", ExchangesFile), ex)
	write(filepath.Join(dir, "a", QueriesFile), q)
	write(filepath.Join(dir, "held", ExchangesFile), ex)
	write(filepath.Join(dir, "notes", "README.md"), "x")
	sets, skipped, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[0].Name != "a" || sets[1].Name != "b" || !reflect.DeepEqual(skipped, []string{"held"}) {
		t.Fatalf("sets %v, skipped %v", sets, skipped)
	}
	sets, _, err = Load(filepath.Join(dir, "a"))
	if err != nil || len(sets) != 1 || sets[0].Name != "a" || len(sets[0].Exchanges) != 1 {
		t.Fatalf("single folder: %v %v", sets, err)
	}
	if _, _, err := Load(filepath.Join(dir, "held")); err == nil || !strings.Contains(err.Error(), "no eval set") {
		t.Fatalf("held-out folder: err = %v", err)
	}
	write(filepath.Join(dir, "c", ExchangesFile), ex+"{bad\n")
	write(filepath.Join(dir, "c", QueriesFile), q)
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "exchanges.jsonl:2:") {
		t.Fatalf("bad exchange: err = %v", err)
	}
}

// isolate keeps the user's git mem config out of a test: eval builds its
// memories with the configuration a user would get.
func isolate(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_MEM_EMBEDDER", "")
	t.Setenv("GIT_MEM_DISTILLER", "")
}

// testdataFloor is the MRR each mode must keep on testdata/eval: measured
// (docs/bench/eval.md) minus a margin, so a regression in any layer, in the
// fusion or in collapsing fails the normal test suite.
var testdataFloor = map[string]float64{
	search.ModeVerbatimBM25:    0.90,
	search.ModeSessionBM25:     0.90,
	search.ModeDistilledBM25:   0.82,
	search.ModeDistilledVector: 0.80,
	search.ModeFused:           0.88,
}

// TestTestdata runs the project's own small eval set through the real add
// path: a regression guard for search quality, determinism and the report.
func TestTestdata(t *testing.T) {
	isolate(t)
	sets, skipped, err := Load("../testdata/eval")
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	ctx := context.Background()
	rep, err := Run(ctx, sets, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Modes) != len(search.Modes) {
		t.Fatalf("%d modes reported, want %d", len(rep.Modes), len(search.Modes))
	}
	defaults := 0
	for _, m := range rep.Modes {
		t.Logf("%-16s MRR %.4f R@5 %.4f R@10 %.4f nDCG %.4f", m.Mode, m.MRR, m.RecallAt5, m.RecallAt10, m.NDCGAt10)
		if m.MRR < testdataFloor[m.Mode] {
			t.Errorf("%s: MRR %.4f under the floor %.2f", m.Mode, m.MRR, testdataFloor[m.Mode])
		}
		if m.Queries != 15 || m.Adversarial.Queries != 1 || len(m.ByCategory) != 3 {
			t.Errorf("%s: %d queries, %d adversarial, %d categories", m.Mode, m.Queries, m.Adversarial.Queries, len(m.ByCategory))
		}
		if m.Default {
			defaults++
			if m.Mode != search.DefaultMode {
				t.Errorf("default is %s, search says %s", m.Mode, search.DefaultMode)
			}
		}
		// ev-15 and ev-16 are identical: one slot, shown as the newer,
		// ev-16. The query's relevant exchange is ev-15, the collapsed one.
		if m.PerQuery["ev-q15"] != 1 {
			t.Errorf("%s: a collapsed relevant exchange did not count (RR %.2f)", m.Mode, m.PerQuery["ev-q15"])
		}
		if m.Collapsed == 0 {
			t.Errorf("%s: no collapsed slot counted", m.Mode)
		}
	}
	if defaults != 1 {
		t.Errorf("%d modes marked default", defaults)
	}

	// The JSON shape the CONTRACT promises.
	raw, err := json.Marshal(rep.Modes)
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	if err := json.Unmarshal(raw, &objs); err != nil {
		t.Fatal(err)
	}
	metricKeys := []string{"queries", "mrr", "recall_at_5", "recall_at_10", "ndcg_at_10", "all_evidence_recall_at_10"}
	for _, o := range objs {
		for _, k := range append([]string{"mode", "default", "by_category", "adversarial", "seconds", "bootstrap", "mrr_ci"}, metricKeys...) {
			if _, ok := o[k]; !ok {
				t.Errorf("mode %v: no key %q", o["mode"], k)
			}
		}
		cats, _ := o["by_category"].(map[string]any)
		for _, sub := range []any{cats["conceptual"], o["adversarial"]} {
			m, _ := sub.(map[string]any)
			for _, k := range metricKeys {
				if _, ok := m[k]; !ok {
					t.Errorf("mode %v: a category lacks %q", o["mode"], k)
				}
			}
		}
	}

	// Run to run, the numbers are the same.
	again, err := Run(ctx, sets, Options{TempDir: t.TempDir(), Modes: []string{search.ModeFused, search.ModeVerbatimBM25, search.DefaultMode}})
	if err != nil {
		t.Fatal(err)
	}
	byMode := map[string]ModeReport{}
	for _, m := range rep.Modes {
		byMode[m.Mode] = m
	}
	for _, m := range again.Modes {
		a, b := m, byMode[m.Mode]
		a.Seconds, b.Seconds = 0, 0
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: second run differs:\n%+v\n%+v", m.Mode, a, b)
		}
	}
}

func TestUnknownMode(t *testing.T) {
	_, err := Run(context.Background(), nil, Options{Modes: []string{"bm42"}})
	if err == nil || !strings.Contains(err.Error(), `unknown mode "bm42"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestPool(t *testing.T) {
	ex := func(id, session string) *exchange.Exchange {
		return &exchange.Exchange{ID: id, Session: session, Turns: []exchange.Turn{{Role: "user", Text: "hi " + id}}}
	}
	// The same filler exchange id in both folders (as in LongMemEval).
	a := Set{Name: "a", Exchanges: []*exchange.Exchange{ex("x", "s1"), ex("filler", "f")},
		Queries: []Query{{QID: "q1", Text: "hi x", Relevant: []string{"x"}, Set: "a"}}}
	b := Set{Name: "b", Exchanges: []*exchange.Exchange{ex("filler", "f"), ex("y", "")},
		Queries: []Query{{QID: "q1", Text: "hi y", Relevant: []string{"y", "filler"}, Set: "b"}}}
	p := Pool("pooled", []Set{a, b})
	var ids, sessions []string
	for _, e := range p.Exchanges {
		ids, sessions = append(ids, e.ID), append(sessions, e.Session)
	}
	if want := []string{"a/x", "a/filler", "b/filler", "b/y"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
	if want := []string{"a/s1", "a/f", "b/f", ""}; !reflect.DeepEqual(sessions, want) {
		t.Errorf("sessions %v, want %v", sessions, want)
	}
	if !reflect.DeepEqual(p.Pooled, []string{"a", "b"}) || len(p.Queries) != 2 {
		t.Fatalf("pooled %v, %d queries", p.Pooled, len(p.Queries))
	}
	if q := p.Queries[1]; q.QID != "b/q1" || q.Set != "b" || !reflect.DeepEqual(q.Relevant, []string{"b/y", "b/filler"}) {
		t.Errorf("query %+v", q)
	}
	if a.Exchanges[0].ID != "x" || a.Queries[0].Relevant[0] != "x" {
		t.Error("Pool changed the sets it read")
	}
}

func TestBootstrap(t *testing.T) {
	// A constant difference has a zero-width interval at that value.
	d := diff([]float64{1, 0.5, 1, 0.25}, []float64{0.5, 0, 0.5, -0.25})
	if d.MRR != 0.5 || d.CI != [2]float64{0.5, 0.5} || d.Queries != 4 {
		t.Errorf("constant difference: %+v", d)
	}
	// Half the queries win by 1, half lose by 1: the mean is 0 and the
	// interval holds it, about ±2·σ/√n = ±0.2 wide for n = 100.
	a, b := make([]float64, 100), make([]float64, 100)
	for i := range a {
		a[i] = float64(i % 2)
		b[i] = float64((i + 1) % 2)
	}
	d = diff(a, b)
	t.Logf("seed %d, %d resamples: %+v", BootstrapSeed, BootstrapResamples, d)
	if d.MRR != 0 || d.CI[0] > -0.1 || d.CI[0] < -0.3 || d.CI[1] < 0.1 || d.CI[1] > 0.3 {
		t.Errorf("balanced difference: %+v", d)
	}
	if again := diff(a, b); again != d {
		t.Errorf("not deterministic: %+v then %+v", d, again)
	}
}

// TestPooledRun pools two copies of testdata/eval: every id occurs twice,
// and each query must still find its own folder's exchange.
func TestPooledRun(t *testing.T) {
	isolate(t)
	sets, _, err := Load("../testdata/eval")
	if err != nil {
		t.Fatal(err)
	}
	a, b := sets[0], sets[0]
	a.Name, b.Name = "a", "b"
	for _, s := range []*Set{&a, &b} {
		s.Queries = append([]Query(nil), s.Queries...)
		for i := range s.Queries {
			s.Queries[i].Set = s.Name
		}
	}
	rep, err := Run(context.Background(), []Set{a, b}, Options{TempDir: t.TempDir(), Pooled: true,
		Modes: []string{search.ModeVerbatimBM25, search.DefaultMode}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Exchanges != 2*len(sets[0].Exchanges) {
		t.Errorf("%d exchanges, want %d", rep.Exchanges, 2*len(sets[0].Exchanges))
	}
	for _, m := range rep.Modes {
		t.Logf("%s: MRR %.4f %v by set %v", m.Mode, m.MRR, m.MRRCI, m.BySet)
		if !m.Pooled || !reflect.DeepEqual(m.Sets, []string{"a", "b"}) || len(m.BySet) != 2 || m.Queries != 30 {
			t.Errorf("%s: pooled %v sets %v by_set %d queries %d", m.Mode, m.Pooled, m.Sets, len(m.BySet), m.Queries)
		}
		// The two folders are the same data: identical exchanges collapse
		// into one slot, which is relevant for either folder's query.
		if m.BySet["a"].MRR != m.BySet["b"].MRR || m.BySet["a"].MRR < testdataFloor[m.Mode] {
			t.Errorf("%s: by set %+v", m.Mode, m.BySet)
		}
		if m.Default != (m.VsDefault == nil) || len(m.MRRCI) != 2 || m.MRRCI[0] > m.MRR || m.MRRCI[1] < m.MRR {
			t.Errorf("%s: default %v vs %+v ci %v", m.Mode, m.Default, m.VsDefault, m.MRRCI)
		}
	}
}
