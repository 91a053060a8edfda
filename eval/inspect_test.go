package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/search"
)

// TestInspect (GIT_MEM_INSPECT=group, with GIT_MEM_BENCH_KEEP) prints, for
// each query of the group whose first relevant slot is not first in
// session-bm25, what ranks above it: the failure analysis behind the ideas
// of docs/bench/eval.md.
func TestInspect(t *testing.T) {
	group := os.Getenv("GIT_MEM_INSPECT")
	keep := os.Getenv("GIT_MEM_BENCH_KEEP")
	if group == "" || keep == "" {
		t.Skip("GIT_MEM_INSPECT=group GIT_MEM_BENCH_KEEP=DIR")
	}
	isolate(t)
	ctx := context.Background()
	gs := loadBenchGroups(t, group)
	if len(gs) != 1 {
		t.Fatalf("%d groups", len(gs))
	}
	mode := os.Getenv("GIT_MEM_INSPECT_MODE")
	if mode == "" {
		mode = search.ModeSessionBM25
	}
	cat := os.Getenv("GIT_MEM_INSPECT_CAT")
	qid := os.Getenv("GIT_MEM_INSPECT_QID")
	if v, err := strconv.ParseFloat(os.Getenv("GIT_MEM_INSPECT_TIME"), 64); err == nil {
		defer set(&search.TimeBoost, v)()()
	}
	if v, err := strconv.ParseFloat(os.Getenv("GIT_MEM_INSPECT_PROMPT"), 64); err == nil {
		defer set(&search.PromptWeight, v)()()
	}
	for _, s := range gs[0].sets {
		b, err := buildIn(ctx, s, filepath.Join(keep, fmt.Sprintf("%s-%d", s.Name, len(s.Exchanges))), true)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]*exchange.Exchange{}
		for _, e := range s.Exchanges {
			byID[e.ID] = e
		}
		for _, q := range s.Queries {
			if q.Adversarial || cat != "" && q.Category != cat || qid != "" && q.QID != qid {
				continue
			}
			qctx := search.WithNow(ctx, q.Now)
			slots, err := b.search(qctx, q.Text, mode, Options{K: 30})
			if err != nil {
				t.Fatal(err)
			}
			rel := map[string]bool{}
			for _, r := range q.Relevant {
				rel[r] = true
			}
			rank := 0
			for i, sl := range slots {
				for _, id := range sl {
					if rank == 0 && rel[id] {
						rank = i + 1
					}
				}
			}
			if rank == 1 {
				continue
			}
			var w strings.Builder
			fmt.Fprintf(&w, "\n### %s [%s] rank %d: %s\n", q.QID, q.Category, rank, q.Text)
			for _, r := range q.Relevant {
				fmt.Fprintf(&w, "  REL %s\n", brief(byID[r]))
			}
			for i, sl := range slots {
				if i >= 5 && i+1 != rank {
					continue
				}
				mark := "   "
				if rel[sl[0]] {
					mark = "***"
				}
				fmt.Fprintf(&w, "  %s %2d %s\n", mark, i+1, brief(byID[sl[0]]))
			}
			t.Log(w.String())
		}
		b.close()
	}
}

func brief(e *exchange.Exchange) string {
	if e == nil {
		return "?"
	}
	n := 0
	var first string
	for i, tr := range e.Turns {
		n += len(tr.Text)
		if i == 0 {
			first = tr.Text
		}
	}
	first = strings.Join(strings.Fields(first), " ")
	if len(first) > 160 {
		first = first[:160]
	}
	return fmt.Sprintf("%s (%s, %s, %d chars, %d turns) %q", e.ID, e.Session, e.Time, n, len(e.Turns), first)
}
