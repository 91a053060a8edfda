package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

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
			if os.Getenv("GIT_MEM_INSPECT_SCORES") != "" {
				if err := scoreBreakdown(qctx, &w, b, q.Text, mode, slots, rank, rel); err != nil {
					t.Fatal(err)
				}
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

// inspectStreams are the session layer's streams, each switched off in
// turn by scoreBreakdown: the score an exchange loses without a stream is
// what that stream gave it.
var inspectStreams = []struct {
	name string
	off  func() func()
}{
	{"ctx", set(&search.ContextWeight, 0.0)},
	{"asked", set(&search.AskedWeight, 0.0)},
	{"title", set(&search.TitleWeight, 0.0)},
	{"card", set(&search.CardWeight, 0.0)},
	{"prompt", set(&search.PromptWeight, 0.0)},
	{"output", set(&search.OutputWeight, 0.0)},
	{"time", set(&search.TimeBoost, 0.0)},
}

// scoreBreakdown prints, for the slots above the first relevant one and
// for the relevant exchanges, the score and what each stream adds to it.
func scoreBreakdown(ctx context.Context, w *strings.Builder, b *built, text, mode string, slots [][]string, rank int, rel map[string]bool) error {
	scoresOf := func() (map[string]float64, error) {
		hits, err := b.ix.SearchContext(ctx, search.Query{Text: text, K: 500, Mode: mode, Verbatim: b.mem.Talks})
		if err != nil {
			return nil, err
		}
		m := map[string]float64{}
		for _, h := range hits {
			m[h.Doc.ID] = h.Score
		}
		return m, nil
	}
	full, err := scoresOf()
	if err != nil {
		return err
	}
	var ids []string
	for i, sl := range slots {
		if i < max(rank, 5) || rel[sl[0]] {
			ids = append(ids, sl[0])
		}
	}
	for r := range rel {
		if !contains(ids, r) {
			ids = append(ids, r)
		}
	}
	off := make([]map[string]float64, len(inspectStreams))
	for i, st := range inspectStreams {
		undo := st.off()
		off[i], err = scoresOf()
		undo()
		if err != nil {
			return err
		}
	}
	if os.Getenv("GIT_MEM_INSPECT_TERMS") != "" {
		// Terms score independently: each word's own score, as a query of
		// that word alone (the first-person and time gates aside).
		words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		var cols []string
		per := map[string]map[string]float64{}
		for _, wd := range words {
			if per[wd] != nil {
				continue
			}
			hits, err := b.ix.SearchContext(ctx, search.Query{Text: wd + " I", K: 500, Mode: mode, Verbatim: b.mem.Talks})
			if err != nil {
				return err
			}
			m := map[string]float64{}
			for _, h := range hits {
				m[h.Doc.ID] = h.Score
			}
			if len(m) > 0 {
				per[wd] = m
				cols = append(cols, wd)
			}
		}
		fmt.Fprintf(w, "  %-34s", "term")
		for _, c := range cols {
			fmt.Fprintf(w, " %7.7s", c)
		}
		w.WriteString("\n")
		for _, id := range ids {
			fmt.Fprintf(w, "  %-34.34s", id)
			for _, c := range cols {
				fmt.Fprintf(w, " %7.3f", per[c][id])
			}
			w.WriteString("\n")
		}
	}
	fmt.Fprintf(w, "  %-34s %8s", "score", "full")
	for _, st := range inspectStreams {
		fmt.Fprintf(w, " %7s", st.name)
	}
	w.WriteString("\n")
	for _, id := range ids {
		mark := "   "
		if rel[id] {
			mark = "***"
		}
		fmt.Fprintf(w, "  %s %-30.30s %8.3f", mark, id, full[id])
		for i := range inspectStreams {
			fmt.Fprintf(w, " %+7.3f", full[id]-off[i][id])
		}
		w.WriteString("\n")
	}
	return nil
}
