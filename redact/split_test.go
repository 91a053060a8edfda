package redact

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/redact/redacttest"
	"github.com/zricethezav/gitleaks/v8/report"
)

// findingKeys is a detector's answer in a form to compare: one line per
// finding, sorted (gitleaks keeps its rules in a map).
func findingKeys(fs []report.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%s %d:%d-%d:%d %q %q", f.RuleID, f.StartLine, f.StartColumn, f.EndLine, f.EndColumn, f.Secret, f.Match)
	}
	slices.Sort(out)
	return out
}

// checkSplit compares the split detector with gitleaks' whole rule set on
// every fragment of text, as the redactor cuts it.
func checkSplit(t *testing.T, name, text string) (frags, findings int) {
	t.Helper()
	full, err := detector()
	if err != nil {
		t.Fatal(err)
	}
	sd, err := split()
	if err != nil {
		t.Fatal(err)
	}
	fragments(text, func(frag string) {
		frags++
		want := findingKeys(full.DetectString(frag))
		got := findingKeys(sd.detect(frag))
		findings += len(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: fragment %q:\nsplit  %q\nwhole  %q", name, frag, got, want)
		}
	})
	return frags, findings
}

func TestGitleaksSplitTakesTheHotRules(t *testing.T) {
	sd, err := split()
	if err != nil {
		t.Fatal(err)
	}
	// Fewer means a gitleaks upgrade changed a hot rule's regexp: it still
	// runs (in the rest), only slower; derive its condition anew.
	if len(sd.hot) != len(hotRules) {
		t.Errorf("%d of %d hot rules split off", len(sd.hot), len(hotRules))
	}
	if sd.restWords == nil {
		t.Error("a rest rule has no keywords: the rest runs on every fragment")
	}
}

// TestGitleaksSplitIsExact: the split detector finds what the whole rule
// set finds, fragment for fragment, on the labelled corpus, the
// look-alikes, texts made to sit on the edges of the hot rules' conditions,
// and (GIT_MEM_HEAVY=1) the real coding exchanges.
func TestGitleaksSplitIsExact(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		for _, c := range redacttest.Classes(seed) {
			checkSplit(t, c.Class, c.Text)
		}
	}
	for _, s := range redacttest.LookAlikes() {
		checkSplit(t, "look-alike", s)
	}
	g := redacttest.NewGen(7, 7)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	words := append(slices.Clone(genericWords), "API", "Api", "aPI", "PASSWORD", "Token", "hvs.", "s.", "S.", "ey", ".ey")
	ops := []string{"=", ">", ":", "::=", ":::=", "||", "=>", "?=", ",", ";", " "}
	edgeFound := 0
	for i := 0; i < 1000; i++ {
		var b strings.Builder
		for j := 0; j < 1+r.IntN(4); j++ {
			b.WriteString(g.S(redacttest.Alnum+"_.-", r.IntN(6)))
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString(strings.Repeat(" ", r.IntN(26)))
			b.WriteString(strings.Repeat(`"`, r.IntN(4)))
			b.WriteString(ops[r.IntN(len(ops))])
			b.WriteString(strings.Repeat(`'`, r.IntN(7)))
			b.WriteString(g.S(redacttest.B64+"_.=-", 6+r.IntN(30)))
			if r.IntN(8) == 0 {
				b.WriteString([]string{"\u212a", "\u017f", "é"}[r.IntN(3)])
			}
			b.WriteString([]string{" ", "\n", "`", ";", `\n`, ""}[r.IntN(6)])
		}
		b.WriteString("eyJ" + g.S(redacttest.Alnum, r.IntN(30)) + ".eyJ" + g.S(redacttest.URLB64, 20) + "." + g.S(redacttest.URLB64, 12))
		_, k := checkSplit(t, "edge", b.String())
		edgeFound += k
	}
	if edgeFound < 100 {
		t.Errorf("the edge texts gave %d findings: they test nothing", edgeFound)
	}
	// The keyed hot rules, asked only where one of their keywords is.
	for _, h := range hotRules {
		if !h.keyed {
			continue
		}
		found := 0
		for _, s := range namedTexts(r, h.id, 300) {
			_, k := checkSplit(t, h.id, s)
			found += k
		}
		if found < 20 {
			t.Errorf("%s: its texts gave %d findings: they test nothing", h.id, found)
		}
	}
	t.Logf("edge texts: %d findings", edgeFound)
	if os.Getenv("GIT_MEM_HEAVY") == "" {
		return
	}
	frags, found := 0, 0
	if !eachCodingExchange(t, func(ex *exchange.Exchange) error {
		n, k := checkSplit(t, ex.ID, string(ex.Canonical()))
		frags += n
		found += k
		for _, tu := range ex.Turns {
			n, k := checkSplit(t, ex.ID, tu.Text)
			frags += n
			found += k
		}
		return nil
	}) {
		t.Skip("the shared coding eval is absent")
	}
	t.Logf("%d fragments, %d findings, all equal", frags, found)
}
