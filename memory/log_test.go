package memory

import (
	"context"
	"fmt"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// TestLogFirstNMatchesFullLog: log -n reads only the head of the card cache;
// it must return what the full list's first n are, with and without a
// filter, and after main moved past the cache.
func TestLogFirstNMatchesFullLog(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	var es []*exchange.Exchange
	for i := range 12 {
		es = append(es, ex(fmt.Sprintf("x%02d", i), fmt.Sprintf("s%d", i%3),
			fmt.Sprintf("2026-01-%02dT00:00:00Z", 1+(i*7)%12), fmt.Sprintf("task %d", i), "done"))
	}
	if _, err := m.Add(ctx, es, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	check := func(label string) {
		t.Helper()
		for _, f := range []Filter{{}, {Session: "s1"}} {
			all, err := m.Log(f, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 3, len(all), len(all) + 5} {
				got, err := m.Log(f, n)
				if err != nil {
					t.Fatal(err)
				}
				want := all[:min(n, len(all))]
				if len(got) != len(want) {
					t.Fatalf("%s: filter %+v -n %d: %d entries, want %d", label, f, n, len(got), len(want))
				}
				for i := range want {
					if got[i].Commit != want[i].Commit || got[i].Core != want[i].Core || !got[i].Time.Equal(want[i].Time) {
						t.Fatalf("%s: filter %+v -n %d: entry %d is %s, want %s", label, f, n, i, got[i].Exchange, want[i].Exchange)
					}
				}
			}
		}
	}
	check("current cache")
	// The same through prefixes of the cache far smaller than a card, so
	// that every read is cut off and extended.
	saved := entryPrefix
	entryPrefix = 16
	check("short prefixes")
	entryPrefix = saved
	// main moves on: the cache is stale until Entries runs again.
	if _, err := m.Add(ctx, []*exchange.Exchange{ex("new", "s1", "2026-02-01T00:00:00Z", "newest task", "done")}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := m.Log(Filter{}, 1); err != nil || len(got) != 1 || got[0].Exchange != "new" {
		t.Fatalf("after an add, log -n 1 = %v %v, want the new exchange", got, err)
	}
	check("after an add")
}
