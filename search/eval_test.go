package search

import (
	"bufio"
	"encoding/json"
	"github.com/gitmem/git-mem/internal/shared"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// TestSharedEvalSmoke indexes one developer's real exchanges from
// /work/shared/eval (skipped when absent) with a crude card (the first user
// turn as core) and reports MRR per mode on its dev queries. It guards
// against a broken pipeline, not a tuned one: `git mem eval` measures the
// real distillers.
func TestSharedEvalSmoke(t *testing.T) {
	root := filepath.Join(shared.Dir(), "eval/coding/paulukonis")
	if _, err := os.Stat(filepath.Join(root, "queries.jsonl")); err != nil {
		t.Skip("shared eval data not present")
	}
	if testing.Short() {
		t.Skip("short")
	}
	var docs []Doc
	readLines(t, filepath.Join(root, "exchanges.jsonl"), func(line []byte) {
		ex, err := exchange.Parse(line)
		if err != nil {
			return
		}
		core := ex.UserText()
		if r := []rune(core); len(r) > 200 {
			core = string(r[:200])
		}
		docs = append(docs, Doc{Seq: len(docs), ID: ex.Key(), Time: ex.When(time.Time{}), Core: core,
			Project: ex.Project, Agent: ex.Agent, Session: ex.Session, Verbatim: ex.Render()})
	})
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	type query struct {
		Query    string   `json:"query"`
		Relevant []string `json:"relevant"`
	}
	var qs []query
	readLines(t, filepath.Join(root, "queries.jsonl"), func(line []byte) {
		var q query
		if json.Unmarshal(line, &q) == nil {
			qs = append(qs, q)
		}
	})
	for _, mode := range Modes {
		var mrr float64
		for _, q := range qs {
			hs, err := ix.Search(Query{Text: q.Query, Mode: mode, K: 10})
			if err != nil {
				t.Fatal(err)
			}
			for i, h := range hs {
				if contains(q.Relevant, h.Doc.ID) || anyIn(h.Collapsed, q.Relevant) {
					mrr += 1 / float64(i+1)
					break
				}
			}
		}
		mrr /= float64(len(qs))
		t.Logf("%-16s MRR@10 = %.3f over %d queries, %d exchanges", mode, mrr, len(qs), len(docs))
		if mode != ModeDistilledBM25 && mrr < 0.2 {
			t.Errorf("%s: MRR %.3f: the pipeline is broken", mode, mrr)
		}
	}
}

func anyIn(xs, set []string) bool {
	for _, x := range xs {
		if contains(set, x) {
			return true
		}
	}
	return false
}

func readLines(t *testing.T, path string, fn func([]byte)) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), exchange.MaxRecordBytes)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			fn([]byte(line))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
