package memory

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/search"
)

// benchDir is the supersession benchmark of issue 20.
var benchDir = filepath.Join("..", "testdata", "bench", "supersede")

type benchTruth struct {
	Supersedes []struct{ New, Old string } `json:"supersedes"`
	Rules      []string                    `json:"rules"`
}

// readExchanges reads a JSON Lines file of exchanges; a missing file
// skips the test (shared data).
func readExchanges(t *testing.T, path string) []*exchange.Exchange {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("eval data: %v", err)
	}
	defer f.Close()
	var exs []*exchange.Exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		ex, err := exchange.Parse(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		exs = append(exs, ex)
	}
	return exs
}

// linkCards are the cards of a memory in time order, as the link rule
// reads them.
func linkCards(t *testing.T, m *Memory) []search.LinkCard {
	t.Helper()
	all, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Time.Before(all[j].Time) })
	cards := make([]search.LinkCard, len(all))
	for i, e := range all {
		cards[i] = search.LinkCard{ID: e.Exchange, Project: e.Project, Time: e.Time, Seq: i, Core: e.Core, Context: e.Context, Rooms: e.Rooms, Files: e.Files}
	}
	return cards
}

func loadBench(t *testing.T) ([]*exchange.Exchange, benchTruth) {
	t.Helper()
	exs := readExchanges(t, filepath.Join(benchDir, "exchanges.jsonl"))
	var truth benchTruth
	raw, err := os.ReadFile(filepath.Join(benchDir, "links.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	return exs, truth
}

// linkScore sorts derived links into true (the later version of a fact
// over an earlier one, directly or across versions), false on a rule, and
// other false ones.
type linkScore struct {
	found, want, onRules, otherFalse int
	falses                           []string
}

func scoreLinks(links []search.Link, truth benchTruth) linkScore {
	fact := map[string]string{} // exchange id → fact key (atlas/port-v2 → port)
	for _, l := range truth.Supersedes {
		for _, id := range []string{l.New, l.Old} {
			k, _, _ := strings.Cut(strings.TrimPrefix(id, "atlas/"), "-v")
			fact[id] = k
		}
	}
	rules := map[string]bool{}
	for _, r := range truth.Rules {
		rules[r] = true
	}
	direct := map[[2]string]bool{}
	for _, l := range truth.Supersedes {
		direct[[2]string{l.New, l.Old}] = true
	}
	s := linkScore{want: len(truth.Supersedes)}
	for _, l := range links {
		switch {
		case direct[[2]string{l.New, l.Old}]:
			s.found++
		case fact[l.New] != "" && fact[l.New] == fact[l.Old]:
			// a later version over an older one, skipping one: true, not counted
		case rules[l.Old]:
			s.onRules++
			s.falses = append(s.falses, fmt.Sprintf("%s → %s (%.3f) RULE", l.New, l.Old, l.Sim))
		default:
			s.otherFalse++
			s.falses = append(s.falses, fmt.Sprintf("%s → %s (%.3f)", l.New, l.Old, l.Sim))
		}
	}
	return s
}

// TestSupersedeBench derives the links of the benchmark through the real
// pipeline (add → index) and checks the floor: no rule is ever
// superseded, and most fact updates are linked. With -v it logs the
// threshold sweep that docs/bench/supersede.md reports.
func TestSupersedeBench(t *testing.T) {
	exs, truth := loadBench(t)
	m := newMemory(t)
	ctx := context.Background()
	if _, err := m.Add(ctx, exs, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := m.Links(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var derived []search.Link
	for n, olds := range l.Supersedes {
		for _, o := range olds {
			derived = append(derived, search.Link{New: n, Old: o})
		}
	}
	s := scoreLinks(derived, truth)
	t.Logf("threshold %.2f: %d of %d fact updates linked, %d false on rules, %d other false %v",
		search.LinkSimilarity, s.found, s.want, s.onRules, s.otherFalse, s.falses)
	if s.onRules != 0 {
		t.Errorf("a rule was superseded: %v", s.falses)
	}
	if s.found*10 < s.want*8 {
		t.Errorf("only %d of %d fact updates linked", s.found, s.want)
	}

	// The sweep: every candidate pair (bucket and signal passed) by
	// similarity, through the same cards.
	cands := search.Candidates(linkCards(t, m))
	for _, th := range []float64{0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60} {
		var kept []search.Link
		for _, c := range cands {
			if c.Sim >= th {
				kept = append(kept, c)
			}
		}
		s := scoreLinks(kept, truth)
		t.Logf("sweep %.2f: found %d/%d, on rules %d, other false %d", th, s.found, s.want, s.onRules, s.otherFalse)
	}
	for _, c := range cands {
		t.Logf("candidate %.3f %s → %s", c.Sim, c.New, c.Old)
	}
}

// TestLinkSweepShared (GIT_MEM_HEAVY=1, shared/eval present) counts the
// links the rule would derive on real coding sessions at each threshold,
// by signal: a setting with two values, or a change word only. There is no
// ground truth there; docs/bench/supersede.md reports the counts and what
// a reading of them found.
func TestLinkSweepShared(t *testing.T) {
	if os.Getenv("GIT_MEM_HEAVY") == "" {
		t.Skip("GIT_MEM_HEAVY=1 runs the sweep over shared/eval/coding")
	}
	for _, folder := range []string{"paulukonis", "minsky", "docgen", "ktsu", "chefchopsky"} {
		exs := readExchanges(t, filepath.Join("..", "..", "shared", "eval", "coding", folder, "exchanges.jsonl"))
		m := newMemory(t)
		if _, err := m.Add(context.Background(), exs, AddOptions{NoIndex: true}); err != nil {
			t.Fatal(err)
		}
		cards := linkCards(t, m)
		saved := search.ChangeWordSimilarity
		search.ChangeWordSimilarity = 2 // a setting with two values only
		conflicts := search.Candidates(cards)
		search.ChangeWordSimilarity = 0
		both := search.Candidates(cards)
		search.ChangeWordSimilarity = saved
		var b strings.Builder
		for _, th := range []float64{0.10, 0.15, 0.20, 0.30, 0.40, 0.50, 0.60, 0.70} {
			c, w := 0, 0
			for _, l := range conflicts {
				if l.Sim >= th {
					c++
				}
			}
			for _, l := range both {
				if l.Sim >= th {
					w++
				}
			}
			fmt.Fprintf(&b, "  %.2f: %d/%d", th, c, w-c)
		}
		t.Logf("%s (%d exchanges), setting/change-word-only links by threshold:%s", folder, len(cards), b.String())
	}
}
