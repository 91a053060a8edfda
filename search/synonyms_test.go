package search

import (
	"testing"
)

func TestSynonymTable(t *testing.T) {
	m := synonyms()
	if len(m) < 20000 {
		t.Fatalf("synonym table: %d terms, want the ~26,000 scripts/wordnet builds", len(m))
	}
	for key, want := range map[string]string{"car": "auto", "error": "mistak", "kid": "child", "begin": "start"} {
		found := false
		for _, s := range m[key] {
			found = found || s.term == want
		}
		if !found {
			t.Errorf("synonyms of %q = %v, want %q among them", key, m[key], want)
		}
	}
}

func TestExpandTerms(t *testing.T) {
	defer func(w float64, s, n int) { SynonymWeight, SynonymSenses, SynonymMax = w, s, n }(SynonymWeight, SynonymSenses, SynonymMax)
	SynonymWeight = 0
	if got := expandTerms([]string{"car", "kid"}, true); len(got) != 2 {
		t.Fatalf("expansion off: %v", got)
	}
	SynonymWeight, SynonymSenses, SynonymMax = 0.25, 1, 2
	got := expandTerms([]string{"car", "auto"}, true)
	if got[0] != (weightedTerm{"car", 1}) || got[1] != (weightedTerm{"auto", 1}) {
		t.Fatalf("query terms first at weight 1: %v", got)
	}
	seen := map[string]bool{}
	for _, w := range got[2:] {
		if w.w != 0.25 || seen[w.t] || w.t == "car" || w.t == "auto" {
			t.Errorf("synonym %v: want weight 0.25, once, not a query term", w)
		}
		seen[w.t] = true
	}
	if len(got[2:]) == 0 || len(got[2:]) > 4 {
		t.Errorf("synonyms %v: want 1..2 per term", got[2:])
	}
	if got := expandTerms([]string{"car"}, false); len(got) != 1 {
		t.Errorf("expand false (verbatim-bm25) added %v", got[1:])
	}
}
