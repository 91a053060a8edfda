package memory

import (
	"context"
	"errors"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/search"
)

// TestTalksReadsBackAsVerbatim: the exact tier's batch read gives, for
// each exchange, what a read of it alone gives, at the commit that added
// it or (no commit known) from main; an unknown one is an error.
func TestTalksReadsBackAsVerbatim(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	tool := ex("t", "s2", "2026-01-03T00:00:00Z", "run the tests", "they pass now")
	tool.Turns = append(tool.Turns[:1], exchange.Turn{Role: exchange.RoleTool, Name: "bash", Input: map[string]any{"command": "go test ./..."}, Text: "ok  pkg/retry 0.2s"}, tool.Turns[1])
	exs := []*exchange.Exchange{
		ex("a", "s1", "2026-01-01T00:00:00Z", "fix the flaky retry test", "raised the timeout in retry_test.go"),
		ex("b", "s1", "2026-01-02T00:00:00Z", "rename calcTax", "renamed calcTax to computeTax"),
		tool,
	}
	if _, err := m.Add(ctx, exs, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	entries, err := m.Log(Filter{}, 0)
	if err != nil || len(entries) != 3 {
		t.Fatalf("log: %v %v", entries, err)
	}
	var refs []search.ExchangeRef
	for _, e := range entries {
		refs = append(refs, search.ExchangeRef{ID: e.Exchange, Commit: e.Commit})
	}
	refs = append(refs, search.ExchangeRef{ID: "a"}) // no commit: from main
	talk, output, err := m.Talks(refs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range refs {
		x, _, err := m.Verbatim(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		wt, wo := x.RenderSplit()
		if talk[i] != wt || output[i] != wo {
			t.Errorf("%s: Talks gave %q / %q, want %q / %q", r.ID, talk[i], output[i], wt, wo)
		}
	}
	if output[0]+output[1]+output[2] == "" || talk[3] == "" {
		t.Errorf("the tool's output or main's copy not read back: %q %q", talk, output)
	}
	if _, _, err := m.Talks(append(refs, search.ExchangeRef{ID: "nope", Commit: entries[0].Commit})); !errors.Is(err, ErrNoSuchExchange) {
		t.Errorf("unknown exchange: %v, want ErrNoSuchExchange", err)
	}
}

// TestSearchExactTier: through the memory, a pasted error puts the
// exchange holding it as written first, labelled, above exchanges that
// BM25 ranks higher for holding the same words scrambled.
func TestSearchExactTier(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	exs := []*exchange.Exchange{
		ex("scrambled1", "s1", "2026-01-01T00:00:00Z", "reading the properties list: undefined flip cannot flip undefined properties read read", "ok"),
		ex("verbatim", "s2", "2026-01-02T00:00:00Z", "I get TypeError: Cannot read properties of undefined (reading 'flip') in a long paste of a stack trace at sketch.js line 12 column 4 and more words here", "ok"),
		ex("scrambled2", "s3", "2026-01-03T00:00:00Z", "flip undefined read properties cannot, reading flip", "ok"),
		ex("other", "s4", "2026-01-04T00:00:00Z", "nothing to do with it", "ok"),
	}
	if _, err := m.Add(ctx, exs, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	q := SearchQuery{Text: "Cannot read properties of undefined reading flip", K: 5}
	got, _, err := m.Search(ctx, q)
	if err != nil || len(got) == 0 {
		t.Fatalf("search: %v %v", got, err)
	}
	if got[0].Exchange != "verbatim" || got[0].Tier != search.TierPhrase {
		t.Errorf("first: %s (tier %q), want verbatim (%q)", got[0].Exchange, got[0].Tier, search.TierPhrase)
	}
	defer func(n int) { search.ExactTierN = n }(search.ExactTierN)
	search.ExactTierN = 0
	off, _, err := m.Search(ctx, q)
	if err != nil || len(off) == 0 {
		t.Fatalf("search, tier off: %v %v", off, err)
	}
	if off[0].Exchange == "verbatim" {
		t.Errorf("without the tier the verbatim exchange is already first: the test shows nothing")
	}
}
