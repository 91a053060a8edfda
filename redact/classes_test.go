package redact

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/redact/redacttest"
)

func corpusSeed(t testing.TB) uint64 {
	seed := uint64(2026)
	if s := os.Getenv("REDACT_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (REDACT_SEED)", seed)
	return seed
}

func redactText(text string, layers Layer) string {
	ex := &exchange.Exchange{Session: "s", Turns: []exchange.Turn{{Role: exchange.RoleUser, Text: text}}}
	ExchangeWith(ex, layers)
	return ex.Turns[0].Text
}

func TestClassCorpus(t *testing.T) {
	for _, c := range redacttest.Classes(corpusSeed(t)) {
		got := redactText(c.Text, All)
		for _, s := range c.Secrets {
			if strings.Contains(got, s) {
				t.Errorf("%s: secret %q survived in %q", c.Class, s, got)
			}
		}
		if len(c.Secrets) == 0 {
			t.Errorf("%s: sample without secrets: %q", c.Class, c.Text)
		}
	}
}

func TestLookAlikeSetSurvives(t *testing.T) {
	for _, s := range redacttest.LookAlikes() {
		for i := 0; i < 5; i++ {
			in := redacttest.Wrap(i, s)
			if got := redactText(in, All); got != in {
				t.Errorf("look-alike changed:\n  %q\n->%q", in, got)
			}
		}
	}
}

// TestLayerTable counts, per rule set alone and all together, the secrets
// caught and missed on the class corpus and the look-alikes changed (false
// positives). It asserts what together must achieve; the table is logged
// for docs/bench/redact.md (go test ./redact -run TestLayerTable -v).
func TestLayerTable(t *testing.T) {
	corpus := redacttest.Classes(corpusSeed(t))
	total := 0
	for _, c := range corpus {
		total += len(c.Secrets)
	}
	sets := append(LayerNames, struct {
		Layer Layer
		Name  string
	}{All &^ LayerGitleaks, "own (all but gitleaks)"}, struct {
		Layer Layer
		Name  string
	}{All, "all"})
	t.Logf("| rule set | secrets caught (of %d) | missed | look-alikes changed (of %d) |", total, 5*len(redacttest.LookAlikes()))
	t.Logf("|---|---|---|---|")
	for _, set := range sets {
		caught := 0
		byClass := map[string]int{}
		for _, c := range corpus {
			got := redactText(c.Text, set.Layer)
			for _, s := range c.Secrets {
				if !strings.Contains(got, s) {
					caught++
					byClass[c.Class]++
				}
			}
		}
		fp := 0
		for _, s := range redacttest.LookAlikes() {
			for i := 0; i < 5; i++ {
				in := redacttest.Wrap(i, s)
				if redactText(in, set.Layer) != in {
					fp++
				}
			}
		}
		t.Logf("| %s | %d | %d | %d |", set.Name, caught, total-caught, fp)
		if testing.Verbose() {
			t.Logf("    by class: %v", byClass)
		}
		if set.Layer == All && (caught != total || fp != 0) {
			t.Errorf("all layers: caught %d of %d, %d false positives", caught, total, fp)
		}
	}
}

func BenchmarkExchangeLayers(b *testing.B) {
	corpus := redacttest.Classes(1)
	for _, set := range append(LayerNames, struct {
		Layer Layer
		Name  string
	}{All, "all"}) {
		b.Run(set.Name, func(b *testing.B) {
			if set.Layer&LayerGitleaks != 0 {
				if _, err := detector(); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; i < b.N; i++ {
				c := corpus[i%len(corpus)]
				redactText(c.Text, set.Layer)
			}
		})
	}
}

func TestGitleaksLoads(t *testing.T) {
	d, err := detector()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.Config.Rules); n < 100 {
		t.Errorf("gitleaks default config has %d rules", n)
	}
}

// The redacted form is the same on every run (exchanges without an id are
// stored under its hash): map order of JSON objects and of gitleaks' rules
// must not change a kind or a count.
func TestExchangeIsDeterministic(t *testing.T) {
	build := func() *exchange.Exchange {
		var turns []exchange.Turn
		for _, c := range redacttest.Classes(7) {
			turns = append(turns, exchange.Turn{Role: "tool", Name: "Bash", Input: map[string]any{
				"a": c.Text, "b": strings.Join(c.Secrets, " "), "c": map[string]any{"password": strings.Join(c.Secrets, ""), "d": c.Text}}, Text: c.Text})
		}
		return &exchange.Exchange{Session: "s", Turns: turns, Extra: map[string]any{"x": "y", "token": "z"}}
	}
	first := build()
	n0 := Exchange(first)
	want := string(first.Canonical())
	for i := 0; i < 10; i++ {
		ex := build()
		if n := Exchange(ex); n != n0 || string(ex.Canonical()) != want {
			t.Fatalf("run %d differs: %d replacements vs %d", i, n, n0)
		}
	}
}

// memory.Add redacts on all cores with one shared gitleaks detector (run
// with -race to check it).
func TestExchangeConcurrent(t *testing.T) {
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for _, c := range redacttest.Classes(uint64(i)) {
				if got := redactText(c.Text, All); strings.Contains(got, c.Secrets[0]) {
					t.Errorf("%s: %q survived", c.Class, c.Secrets[0])
				}
			}
		}()
	}
	for i := 0; i < 4; i++ {
		<-done
	}
}
