package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// blindFolders are the four held-out coding folders of testdata/blind-queries.
var blindFolders = []string{"minsky", "docgen", "ktsu", "chefchopsky"}

// TestBlindQueries checks testdata/blind-queries against the rules its
// README states: 15 queries per folder, qids <folder>-b1..b15, categories
// 5 exact-term, 5 phrase, 5 conceptual in that order; and, with shared/eval,
// that every relevant id is an exchange of the folder in the session of the
// picked one (the first), that picks are one per session, have a user
// message of 60 characters or more and a reply of 200 or more, and are not
// relevant to any query of our other sets or the dev set.
func TestBlindQueries(t *testing.T) {
	want := []string{"exact-term", "phrase", "conceptual"}
	files := map[string][]Query{}
	for _, f := range blindFolders {
		qs := readQueriesFile(t, filepath.Join("..", "testdata", "blind-queries", f+".jsonl"))
		if len(qs) != 15 {
			t.Fatalf("%s: %d queries, want 15", f, len(qs))
		}
		for i, q := range qs {
			if w := fmt.Sprintf("%s-b%d", f, i+1); q.QID != w {
				t.Errorf("%s line %d: qid %q, want %q", f, i+1, q.QID, w)
			}
			if w := want[i/5]; q.Category != w {
				t.Errorf("%s: category %q, want %q", q.QID, q.Category, w)
			}
			if n := len(q.Relevant); n < 1 || n > 2 {
				t.Errorf("%s: %d relevant ids, want the exchange and at most one neighbour", q.QID, n)
			}
		}
		files[f] = qs
	}

	root := sharedEval(t)
	if _, err := os.Stat(filepath.Join(root, "coding", "minsky", ExchangesFile)); err != nil {
		t.Skipf("shared eval data: %v", err)
	}
	// Every id any other set of ours, or the dev set, lists as relevant.
	used := map[string]bool{}
	var others []string
	for _, d := range []string{"coding-queries", "exact-queries", "concept-queries", "typo-queries"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", d, "*.jsonl"))
		others = append(others, m...)
	}
	others = append(others, filepath.Join(root, "coding", "paulukonis", QueriesFile))
	for _, name := range others {
		for _, q := range readQueriesFile(t, name) {
			for _, id := range q.Relevant {
				used[id] = true
			}
		}
	}
	if len(used) < 300 {
		t.Fatalf("only %d ids used by the other sets: not the files the README names?", len(used))
	}
	for _, f := range blindFolders {
		sets, _, err := Load(withQueries(t, filepath.Join(root, "coding", f), "blind-queries/"+f+".jsonl"))
		if err != nil {
			t.Fatal(err) // also: a relevant id that is not an exchange of f
		}
		byID := map[string]int{}
		for i, e := range sets[0].Exchanges {
			byID[e.ID] = i
		}
		sessions := map[string]string{}
		for _, q := range files[f] {
			pick := sets[0].Exchanges[byID[q.Relevant[0]]]
			for _, id := range q.Relevant[1:] {
				if s := sets[0].Exchanges[byID[id]].Session; s != pick.Session {
					t.Errorf("%s: %s is of session %s, not the pick's %s", q.QID, id, s, pick.Session)
				}
			}
			if prev, ok := sessions[pick.Session]; ok {
				t.Errorf("%s: a second pick of session %s (first: %s)", q.QID, pick.Session, prev)
			}
			sessions[pick.Session] = q.QID
			if used[pick.ID] {
				t.Errorf("%s: %s is relevant to a query of another set", q.QID, pick.ID)
			}
			var user, reply strings.Builder
			for _, tu := range pick.Turns {
				switch tu.Role {
				case "user":
					user.WriteString(tu.Text)
				case "assistant":
					reply.WriteString(tu.Text)
				}
			}
			if len([]rune(user.String())) < 60 || len([]rune(reply.String())) < 200 {
				t.Errorf("%s: %s has a user message of %d or a reply of %d characters", q.QID, pick.ID,
					len([]rune(user.String())), len([]rune(reply.String())))
			}
		}
	}
}

// readQueriesFile reads one queries.jsonl.
func readQueriesFile(t *testing.T, name string) []Query {
	t.Helper()
	r, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	qs, err := ReadQueries(r, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}
