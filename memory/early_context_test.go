package memory

import (
	"context"
	"reflect"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/search"
)

// A one-shot search (the CLI's, which opens the index with
// search.Options.EarlyContext in the modes that read the session context)
// returns what a search of a long-lived process returns, in every mode,
// and leaves the option off after.
func TestOneShotSearchEarlyContext(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	exs := []*exchange.Exchange{
		ex("a", "s1", "2026-01-02T00:00:00Z", "fix the flaky retry test", "raised the timeout"),
		ex("b", "s1", "2026-01-02T00:05:00Z", "the retry test is flaky again", "made the clock fake"),
		ex("c", "s2", "2026-01-03T00:00:00Z", "rename calcTax", "renamed it"),
	}
	if _, err := m.Add(ctx, exs, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode  string
		reads bool
	}{
		{"", search.ReadsContext(search.DefaultMode)}, // no --mode, no search.mode
		{search.ModeSessionBM25, true},
		{search.ModeVerbatimBM25, true},
		{search.ModeFused, true},
		{search.ModeDistilledBM25, false},
		{search.ModeDistilledVector, false},
	} {
		if got := search.ReadsContext(tc.mode); got != tc.reads {
			t.Errorf("%s: ReadsContext %v, want %v", tc.mode, got, tc.reads)
		}
		q := SearchQuery{Text: "flaky retry test", Mode: tc.mode, K: 3}
		m.OneShot = false
		want, _, err := m.Search(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", tc.mode, err)
		}
		m.OneShot = true
		got, _, err := m.Search(ctx, q)
		m.OneShot = false
		if err != nil {
			t.Fatalf("%s one-shot: %v", tc.mode, err)
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: one-shot %+v, want %+v", tc.mode, got, want)
		}
		if m.earlyContext {
			t.Errorf("%s: earlyContext left on", tc.mode)
		}
	}
}
