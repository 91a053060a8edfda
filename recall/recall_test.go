package recall

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/tokens"
)

// readExchanges reads a JSON Lines file of the plain exchange format.
func readExchanges(t testing.TB, path string) []*exchange.Exchange {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var exs []*exchange.Exchange
	err = exchange.ReadJSONL(f, path, func(r exchange.Record) error {
		if r.Err != nil {
			return r.Err
		}
		exs = append(exs, r.Exchange)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

// demoMemory is a temporary memory holding testdata/exchanges.jsonl.
func demoMemory(t testing.TB) *memory.Memory {
	t.Helper()
	t.Setenv("HOME", t.TempDir()) // no user config
	m, _, err := memory.Init(filepath.Join(t.TempDir(), "mem.git"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(context.Background(), readExchanges(t, "../testdata/exchanges.jsonl"), memory.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}

func exchangesOf(cs []Card) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Exchange)
	}
	return out
}

func TestRecall(t *testing.T) {
	m := demoMemory(t)
	ctx := context.Background()
	tests := []struct {
		name      string
		req       Request
		first     string // exchange of the first card
		project   string // every card's project
		wantEmpty bool
	}{
		{name: "query finds the exchange", req: Request{Query: "nil pointer auth middleware"}, first: "demo-3"},
		{name: "project's recent work, newest first", req: Request{Project: "billing"}, project: "billing"},
		{name: "filter project wins over the hook's project", req: Request{Project: "billing", Filter: memory.Filter{Project: "api"}}, project: "api"},
		{name: "unknown project recalls nothing", req: Request{Project: "no-such-project"}, wantEmpty: true},
		{name: "tiny budget recalls nothing", req: Request{Project: "billing", Budget: 5}, wantEmpty: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Recall(ctx, m, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantEmpty {
				if res.Text != "" || len(res.Cards) != 0 {
					t.Fatalf("want nothing, got %d cards:\n%s", len(res.Cards), res.Text)
				}
				return
			}
			if len(res.Cards) == 0 {
				t.Fatalf("no cards")
			}
			if tt.first != "" && res.Cards[0].Exchange != tt.first {
				t.Errorf("first card %s, want %s (all: %v)", res.Cards[0].Exchange, tt.first, exchangesOf(res.Cards))
			}
			for i, c := range res.Cards {
				if tt.project != "" && c.Project != tt.project {
					t.Errorf("card %s is of project %q, want %q", c.Exchange, c.Project, tt.project)
				}
				if tt.req.Query == "" && i > 0 && c.Time.After(res.Cards[i-1].Time) {
					t.Errorf("cards not newest first: %v", exchangesOf(res.Cards))
				}
				if !strings.Contains(res.Text, "["+c.Short+" ") {
					t.Errorf("card %s: short id %s not in the block", c.Exchange, c.Short)
				}
			}
			if n := tokens.Count(res.Text); n != res.Tokens || n > DefaultBudget {
				t.Errorf("block is %d tokens, reported %d, budget %d", n, res.Tokens, DefaultBudget)
			}
			if tt.req.Query == "" && len(res.Rooms) == 0 {
				t.Errorf("no rooms for the project")
			}
		})
	}
}

func TestRecallBadBudget(t *testing.T) {
	for _, b := range []int{-1, MaxBudget + 1} {
		if _, err := Recall(context.Background(), nil, Request{Budget: b}); err == nil {
			t.Errorf("budget %d: no error", b)
		}
	}
}

// TestRecallProjectReadsNewestFirst: reading the newest cards a few at a
// time (as many as the pack can use) gives the block reading every card
// gave, also when the newest cards all collapse into one (a repeated
// standup note) and the ones that fit lie further back.
func TestRecallProjectReadsNewestFirst(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	m, _, err := memory.Init(filepath.Join(t.TempDir(), "mem.git"))
	if err != nil {
		t.Fatal(err)
	}
	var exs []*exchange.Exchange
	for i := 0; i < 40; i++ {
		exs = append(exs, &exchange.Exchange{ID: fmt.Sprintf("old-%d", i), Session: "s1", Project: "web",
			Time: fmt.Sprintf("2026-01-01T%02d:%02d:00Z", i/60, i%60),
			Turns: []exchange.Turn{{Role: "user", Text: fmt.Sprintf("fix the flaky retry test number %d in retry_%d_test.go", i, i)},
				{Role: "assistant", Text: fmt.Sprintf("raised the timeout of case %d to 30s", i)}}})
	}
	for i := 0; i < 30; i++ {
		exs = append(exs, &exchange.Exchange{ID: fmt.Sprintf("standup-%d", i), Session: "s2", Project: "web",
			Time:  fmt.Sprintf("2026-01-02T%02d:%02d:00Z", i/60, i%60),
			Turns: []exchange.Turn{{Role: "user", Text: "daily standup note"}, {Role: "assistant", Text: "noted"}}})
	}
	exs = append(exs, &exchange.Exchange{ID: "other", Session: "s3", Project: "api", Time: "2026-01-03T00:00:00Z",
		Turns: []exchange.Turn{{Role: "user", Text: "rotate the api key"}, {Role: "assistant", Text: "rotated"}}})
	if _, err := m.Add(context.Background(), exs, memory.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	run := func(first int) string {
		t.Helper()
		defer func(n int) { newestFirst = n }(newestFirst)
		newestFirst = first
		res, err := Recall(context.Background(), m, Request{Project: "web", Budget: 400})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	all := run(1 << 30)
	if !strings.Contains(all, "standup-29") || !strings.Contains(all, "old-39") || strings.Contains(all, `"other"`) {
		t.Fatalf("the block reading every card: %s", all)
	}
	for _, first := range []int{1, 2, 5, 31} {
		if got := run(first); got != all {
			t.Fatalf("reading %d first:\n%s\nwant\n%s", first, got, all)
		}
	}
}
