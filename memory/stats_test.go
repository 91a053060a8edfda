package memory

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/tokens"
)

// TestStatsTokenCaches: the card token counts are cached by commit and give
// the same totals as counting every card afresh, before and after an add.
func TestStatsTokenCaches(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	add := func(es ...*exchange.Exchange) {
		t.Helper()
		if _, err := m.Add(ctx, es, AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	fresh := func() int64 {
		t.Helper()
		es, err := m.Entries()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, e := range es {
			n += int64(tokens.Count(e.Core + " " + e.Context))
		}
		return n
	}
	add(ex("a", "s1", "2026-01-02T00:00:00Z", "fix the flaky retry test in retry_test.go", "raised the timeout"),
		ex("b", "s1", "2026-01-01T00:00:00Z", "rename calcTax", "renamed calcTax to computeTax everywhere"))
	for round := 0; round < 2; round++ { // the second reads the cache
		st, err := m.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if want := fresh(); st.DistilledTokens != want || want == 0 {
			t.Fatalf("round %d: distilled tokens %d, counted afresh %d", round, st.DistilledTokens, want)
		}
	}
	if _, err := os.Stat(m.cachePath(cardTokensFile)); err != nil {
		t.Fatalf("card token cache not written: %v", err)
	}
	// The whole result is kept for main's head: a second call reads it, and
	// one kept for another head is not used.
	first, _ := m.Stats()
	again, err := m.Stats()
	if err != nil || jsonOf(t, first) != jsonOf(t, again) {
		t.Fatalf("stats read back %s, computed %s (%v)", jsonOf(t, again), jsonOf(t, first), err)
	}
	head, _ := m.Repo.Head()
	for _, stale := range []statsCacheFile{
		{Version: statsCacheVersion, Head: strings.Repeat("ab", 20), Stats: &Stats{Exchanges: 99}},
		{Version: statsCacheVersion + 1, Head: head.String(), Stats: &Stats{Exchanges: 99}},
	} {
		b, _ := json.Marshal(stale)
		if err := os.WriteFile(m.cachePath(statsFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if st, err := m.Stats(); err != nil || st.Exchanges != 2 {
			t.Fatalf("stats kept for head %.8s, version %d was used: %+v %v", stale.Head, stale.Version, st, err)
		}
	}
	add(ex("c", "s2", "2026-01-03T00:00:00Z", "document the webhook handler", "wrote docs/webhooks.md with the retry policy"))
	st, err := m.Stats()
	if err != nil || st.Exchanges != 3 || st.DistilledTokens != fresh() {
		t.Fatalf("after an add: %+v %v, counted afresh %d", st, err, fresh())
	}
	if c := m.loadTokenCache(cardTokensFile); len(c) != 3 {
		t.Fatalf("card token cache holds %d commits, want 3", len(c))
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
