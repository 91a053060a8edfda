package memory

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// TestSearchKept: the warm search process's search answers as a one-shot
// search does or not at all, follows another process's add, catch-up,
// forget and reindex, and never keeps a writer out between searches.
func TestSearchKept(t *testing.T) {
	m := viewMemory(t)
	ctx := context.Background()
	v := NewView(m)
	v.Idle = 0
	defer v.Close()
	// other is another process that writes; same compares with a
	// one-shot search.
	other, err := Open(m.Repo.Dir())
	if err != nil {
		t.Fatal(err)
	}
	same := func(q SearchQuery) []Result {
		t.Helper()
		cold, err := Open(m.Repo.Dir())
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := cold.Search(ctx, q) // catches the index up first
		if err != nil {
			t.Fatal(err)
		}
		kept, err := v.SearchKept(ctx, q)
		if err != nil {
			t.Fatalf("kept %q: %v", q.Text, err)
		}
		if !reflect.DeepEqual(kept, want) {
			t.Fatalf("kept %q:\n%+v\none-shot:\n%+v", q.Text, kept, want)
		}
		return kept
	}

	if res := same(SearchQuery{Text: "calcTax"}); len(res) == 0 || res[0].Exchange != "b" {
		t.Fatalf("search: %+v", res)
	}
	gen := v.Kept()
	if gen == "" {
		t.Fatal("the index is not kept after a search")
	}
	opened := v.Opened()
	same(SearchQuery{Text: "streamed rows", K: 1})
	if v.Opened() != opened {
		t.Error("the index was opened again for a second search")
	}

	// A writer is not kept out between searches (Bleve's bolt lock is let
	// go of), and the kept index follows its catch-up.
	if _, err := other.Add(ctx, []*exchange.Exchange{ex("d", "s3", "2026-01-13T09:00:00Z", "feed the quokka", "fed")}, AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.UpdateIndex(ctx); err != nil {
		t.Fatalf("a writer beside a kept index: %v", err)
	}
	if !v.ReleaseIfChanged() {
		t.Error("the kept index was not let go of after a catch-up rewrote it")
	}
	if res := same(SearchQuery{Text: "quokka"}); len(res) == 0 || res[0].Exchange != "d" {
		t.Fatalf("after the catch-up: %+v", res)
	}
	// Main ahead of the index: no answer, until a catch-up.
	if _, err := other.Add(ctx, []*exchange.Exchange{ex("e", "s3", "2026-01-14T09:00:00Z", "walk the wombat", "walked")}, AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.SearchKept(ctx, SearchQuery{Text: "wombat"}); !errors.Is(err, ErrNotKept) {
		t.Fatalf("main ahead of the index: %v, want ErrNotKept", err)
	}
	if res := same(SearchQuery{Text: "wombat"}); len(res) == 0 || res[0].Exchange != "e" {
		t.Fatalf("after the catch-up: %+v", res)
	}

	// A forget: the forgotten exchange is never answered.
	plan, err := other.ForgetPlan(ctx, ForgetSelect{Refs: []string{"b"}})
	if err != nil || len(plan) != 1 {
		t.Fatalf("plan: %v %v", plan, err)
	}
	if _, err := other.Forget(ctx, plan, ""); err != nil {
		t.Fatal(err)
	}
	res, err := v.SearchKept(ctx, SearchQuery{Text: "calcTax computeTax"})
	if err != nil && !errors.Is(err, ErrNotKept) {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Exchange == "b" {
			t.Fatal("a forgotten exchange was answered")
		}
	}
	same(SearchQuery{Text: "calcTax computeTax"})

	// A reindex switches generations: the kept index follows.
	if _, err := other.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	same(SearchQuery{Text: "flaky retry"})
	if v.Kept() == gen || v.Kept() == "" {
		t.Errorf("kept %q after a reindex, the old generation was %q", v.Kept(), gen)
	}
}

// TestTrimResident: a kept view gives back its mapped pages only when the
// file-backed part of the process's memory is over the budget, and its
// searches after that are the same as before (and as a one-shot
// search's), from the same kept index.
func TestTrimResident(t *testing.T) {
	m := viewMemory(t)
	ctx := context.Background()
	v := NewView(m)
	v.Idle = 0
	defer v.Close()
	q := SearchQuery{Text: "calcTax"}
	before, err := v.SearchKept(ctx, q)
	if err != nil || len(before) == 0 {
		t.Fatalf("kept search: %+v, %v", before, err)
	}
	opened := v.Opened()
	for _, tt := range []struct {
		budget int64
		want   bool
	}{{1 << 50, false}, {0, true}, {-1, true}} {
		if got := v.TrimResident(tt.budget); got != tt.want {
			t.Fatalf("TrimResident(%d) = %v, want %v", tt.budget, got, tt.want)
		}
		after, err := v.SearchKept(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(after, before) {
			t.Fatalf("after TrimResident(%d):\n%+v\nbefore:\n%+v", tt.budget, after, before)
		}
	}
	if v.Opened() != opened || v.Kept() == "" {
		t.Fatal("TrimResident closed or reopened the kept index")
	}
	cold, err := Open(m.Repo.Dir())
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := cold.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, want) {
		t.Fatalf("kept:\n%+v\none-shot:\n%+v", before, want)
	}
	empty := NewView(m) // no index kept: mapfile's part only
	defer empty.Close()
	if !empty.TrimResident(0) {
		t.Fatal("TrimResident(0) without a kept index: want true")
	}
}
