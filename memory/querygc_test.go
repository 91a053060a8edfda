package memory

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestOneShotSearchGC checks that a one-shot search ranks with the
// collector off, catches up with it on, and leaves it as it found it; and
// that GOGC set by the user is left alone.
func TestOneShotSearchGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	m := newMemory(t)
	ctx := context.Background()
	// An index, then a commit it lacks: the search catches up in place.
	if _, err := m.Add(ctx, []*exchange.Exchange{ex("a", "s1", "2026-01-02T00:00:00Z", "fix the flaky retry test", "raised the timeout")}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(ctx, []*exchange.Exchange{ex("b", "s2", "2026-01-03T00:00:00Z", "rename calcTax", "renamed it")}, AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	var during []int
	m.Progress = func(done, total int) { during = append(during, gcPercent()) }
	m.OneShot = true
	restore := m.queryGC()
	if p := gcPercent(); p != -1 {
		t.Errorf("queryGC: GC percent %d, want -1 (off)", p)
	}
	restore()
	if p := gcPercent(); p != 100 {
		t.Fatalf("after queryGC's restore: GC percent %d, want 100", p)
	}
	res, _, err := m.Search(ctx, SearchQuery{Text: "flaky retry"})
	if err != nil || len(res) != 1 {
		t.Fatalf("search: %v %v", res, err)
	}
	if len(during) == 0 {
		t.Fatal("the search did not catch up (no progress heard)")
	}
	for _, p := range during {
		if p != 100 {
			t.Errorf("the catch-up ran with GC percent %d, want 100", p)
		}
	}
	if p := gcPercent(); p != 100 {
		t.Errorf("after a one-shot search: GC percent %d, want 100", p)
	}
	t.Setenv("GOGC", "200")
	m.queryGC()()
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC set: queryGC changed the GC percent to %d", p)
	}
	if restore := m.queryGC(); gcPercent() != 100 {
		t.Errorf("GOGC set: queryGC turned the collector off")
		restore()
	}
}
