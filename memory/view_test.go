package memory

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/search"
)

// TestViewFollowsMainAndLetsGo: a view reads the cards again when main
// moves, keeps the index between searches and gives it back when idle, so
// a writer (a hook's worker catching up) can take it.
func TestViewFollowsMainAndLetsGo(t *testing.T) {
	m := viewMemory(t)
	ctx := context.Background()
	v := NewView(m)
	v.Loc, v.Idle = time.UTC, time.Hour
	defer v.Close()

	s, err := v.Session("s1")
	if err != nil || len(s) != 2 || s[0].Exchange != "a" || s[1].Exchange != "b" {
		t.Fatalf("session s1 oldest first: %v %v", s, err)
	}
	if res, _, err := v.Search(ctx, SearchQuery{Text: "calcTax"}); err != nil || len(res) == 0 || res[0].Exchange != "b" {
		t.Fatalf("search: %+v %v", res, err)
	}
	if !v.IndexOpen() {
		t.Error("the index is not kept after a search")
	}
	// While kept, a writer cannot take the index (Bleve's bolt lock is
	// shared by readers): that is why the view lets go when idle.
	if _, err := m.UpdateIndex(ctx); !errors.Is(err, search.ErrBusy) {
		t.Errorf("a writer while the view holds the index: %v, want ErrBusy", err)
	}
	// Idle: the index is given back (polled, not timed: the test only
	// waits for it to happen).
	v.Idle = 20 * time.Millisecond
	if _, _, err := v.Search(ctx, SearchQuery{Text: "calcTax"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); v.IndexOpen(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the idle view still holds the index")
		}
	}
	// Another process adds; the view sees it in the cards, the sessions,
	// the timeline and search.
	other, err := Open(m.Repo.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Add(ctx, []*exchange.Exchange{ex("d", "s1", "2026-01-05T12:00:00Z", "document computeTax", "added a doc comment")}, AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.UpdateIndex(ctx); err != nil {
		t.Errorf("a writer once the view let go: %v", err)
	}
	if _, all, err := v.Snapshot(); err != nil || len(all) != 4 {
		t.Fatalf("snapshot after an add elsewhere: %d cards, %v", len(all), err)
	}
	if s, _ := v.Session("s1"); len(s) != 3 || s[2].Exchange != "d" {
		t.Errorf("session after the add: %v", s)
	}
	days, err := v.Timeline(Filter{}, false)
	if err != nil || len(days) != 2 || days[0].Count != 3 || days[1].Count != 1 {
		t.Errorf("days: %+v %v", days, err)
	}
	weeks, _ := v.Timeline(Filter{}, true)
	if len(weeks) != 2 || !weeks[0].Start.Equal(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)) || !weeks[0].End.Equal(time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC).Add(-1)) {
		t.Errorf("weeks (from Monday): %+v", weeks)
	}
	if res, _, err := v.Search(ctx, SearchQuery{Text: "doc comment computeTax"}); err != nil || len(res) == 0 || res[0].Exchange != "d" {
		t.Errorf("search after the add: %+v %v", res, err)
	}
}

// viewMemory is a memory of three exchanges in two sessions, indexed.
func viewMemory(t *testing.T) *Memory {
	t.Helper()
	m := newMemory(t)
	if _, err := m.Add(context.Background(), []*exchange.Exchange{
		ex("a", "s1", "2026-01-05T10:00:00Z", "fix the flaky retry test", "raised the timeout"),
		ex("b", "s1", "2026-01-05T11:00:00Z", "rename calcTax", "renamed calcTax to computeTax"),
		ex("c", "s2", "2026-01-12T09:00:00Z", "speed up the export", "streamed the rows"),
	}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}
