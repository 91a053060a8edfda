package search

import (
	"reflect"
	"strings"
	"testing"
)

// term is the analysed form of one word.
func term(t *testing.T, w string) string {
	t.Helper()
	q := queryTerms(w)
	if len(q) == 0 {
		t.Fatalf("%q analyses to nothing", w)
	}
	return q[0]
}

func TestThesaurusTable(t *testing.T) {
	m := thesaurus()
	if len(m) < 600 {
		t.Fatalf("thesaurus: %d terms, want the ~790 of search/thesaurus/words.txt", len(m))
	}
	for _, c := range []struct{ word, syn string }{
		{"crash", "segfault"}, {"crashed", "panic"}, {"hang", "stuck"}, {"hangs", "freeze"},
		{"delete", "remove"}, {"deleting", "rm"}, {"config", "configuration"}, {"config", "options"},
		{"repo", "repository"}, {"dir", "folder"}, {"env", "environment"}, {"db", "database"},
		{"deps", "dependencies"}, {"login", "signin"}, {"login", "auth"}, {"bug", "defect"},
		{"slow", "latency"}, {"k8s", "kubernetes"},
	} {
		a, b := term(t, c.word), term(t, c.syn)
		found := false
		for _, s := range m[a] {
			found = found || s == b
		}
		if !found {
			t.Errorf("thesaurus[%q] = %v, want %q (%q) among them", a, m[a], b, c.syn)
		}
	}
	for a, ss := range m {
		seen := map[string]bool{}
		for _, b := range ss {
			if b == a || seen[b] {
				t.Errorf("thesaurus[%q] = %v: itself or a word twice", a, ss)
			}
			seen[b] = true
			back := false
			for _, c := range m[b] {
				back = back || c == a
			}
			if !back {
				t.Errorf("%q → %q but not back", a, b)
			}
		}
	}
	// A word the analyser splits gives itself, not its parts.
	for _, s := range m[term(t, "kubernetes")] {
		if s == "k" || s == "8" || s == "s" {
			t.Errorf("thesaurus[kubernetes] holds the part %q of k8s", s)
		}
	}
}

func TestParseThesaurus(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       map[string][]string
	}{
		{"empty and comments", "# a comment\n\n   \n# crash panic\n", map[string][]string{}},
		{"one group, analysed", "Crash PANICS segfault\n", map[string][]string{
			"crash": {"panic", "segfault"}, "panic": {"crash", "segfault"}, "segfault": {"crash", "panic"}}},
		{"union of groups, each once, table order", "crash panic\ncrash exception panic\n", map[string][]string{
			"crash": {"panic", "except"}, "panic": {"crash", "except"}, "except": {"crash", "panic"}}},
		{"a stop word and a repeat give nothing", "the crash crashes\n", map[string][]string{}},
		{"split word whole", "k8s kubernetes\n", map[string][]string{"k8s": {"kubernet"}, "kubernet": {"k8s"}}},
	} {
		if got := parseThesaurus(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestExpandThesaurus(t *testing.T) {
	defer func(w, sw float64, m int) { ThesaurusWeight, SynonymWeight, ThesaurusMax = w, sw, m }(ThesaurusWeight, SynonymWeight, ThesaurusMax)
	q := queryTerms("the test run hangs after I delete the repo")
	ThesaurusWeight, SynonymWeight, ThesaurusMax = 0, 0, 0
	if got := expandTerms(q, true); len(got) != len(q) {
		t.Fatalf("thesaurus off (the default): %v", got)
	}
	for _, c := range []struct {
		w   float64
		max int
	}{{0.2, 0}, {0.1, 1}, {0.5, 3}} {
		ThesaurusWeight, ThesaurusMax = c.w, c.max
		got := expandTerms(q, true)
		for i, t0 := range q {
			if got[i] != (weightedTerm{t0, 1}) {
				t.Fatalf("weight %v: query terms first at weight 1: %v", c.w, got)
			}
		}
		added := got[len(q):]
		seen := map[string]bool{}
		for _, x := range q {
			seen[x] = true
		}
		for _, x := range added {
			if x.w != c.w || seen[x.t] {
				t.Errorf("weight %v: added %v: want weight %v, once, not a query term", c.w, x, c.w)
			}
			seen[x.t] = true
		}
		has := func(w string) bool { return seen[term(t, w)] }
		if c.max == 0 && (!has("stuck") || !has("remove") || !has("repository")) {
			t.Errorf("weight %v: %v lacks stuck, remove or repository", c.w, added)
		}
		if c.max > 0 && len(added) > c.max*len(q) {
			t.Errorf("max %d: %d words added for %d terms", c.max, len(added), len(q))
		}
		if len(added) == 0 {
			t.Errorf("weight %v: nothing added to %v", c.w, q)
		}
		if got := expandTerms(q, false); len(got) != len(q) {
			t.Errorf("expand false (verbatim-bm25) added %v", got[len(q):])
		}
	}
	// With WordNet on too, no word comes twice.
	ThesaurusWeight, SynonymWeight, ThesaurusMax = 0.2, 0.2, 0
	seen := map[string]bool{}
	for _, x := range expandTerms(queryTerms("crash bug fix"), true) {
		if seen[x.t] {
			t.Errorf("%q twice", x.t)
		}
		seen[x.t] = true
	}
	if !strings.Contains(thesaurusText, "written") {
		t.Error("the table lost its header saying how it was written")
	}
}
