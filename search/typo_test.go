package search

import (
	"reflect"
	"testing"
)

// TestTypoCorrection: a misspelt word finds the exchange that holds the
// word spelt right; a query whose words the memory holds ranks exactly as
// with correction off; a word with no near neighbour adds nothing.
func TestTypoCorrection(t *testing.T) {
	defer func(w float64, n int) { TypoWeight, TypoMinLen = w, n }(TypoWeight, TypoMinLen)
	docs := []Doc{
		{Seq: 0, ID: "a", Verbatim: "the session middleware sets sessionTTL from the config"},
		{Seq: 1, ID: "b", Verbatim: "database connection pool exhausted under load"},
		{Seq: 2, ID: "c", Verbatim: "the flaky playwright test waits for the navigation"},
		{Seq: 3, ID: "d", Verbatim: "lunch plans and a walk in the park"},
	}
	for i := range docs {
		docs[i].Session = docs[i].ID // one exchange per session: no neighbours
		docs[i].Core = "card " + docs[i].ID
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	search := func(q string) []string {
		t.Helper()
		hits, err := ix.Search(Query{Text: q, Mode: ModeSessionBM25, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return ids(hits)
	}
	tests := []struct {
		query   string
		off, on []string
	}{
		{"databse connection", []string{"b"}, []string{"b"}},            // one word still matches: same hit
		{"databse", nil, []string{"b"}},                                 // one edit
		{"middlewere", nil, []string{"a"}},                              // one edit, 10 letters
		{"playwrigth navigaton", nil, []string{"c"}},                    // a swap counts two edits (8+ letters)
		{"xqzvwk", nil, nil},                                            // nothing near
		{"dbx", nil, nil},                                               // under TypoMinLen: never corrected
		{"database middleware", []string{"b", "a"}, []string{"b", "a"}}, // all held: same order
	}
	for _, tc := range tests {
		TypoWeight = 0
		if got := search(tc.query); !sameIDs(got, tc.off) {
			t.Errorf("%q, correction off: %v, want %v", tc.query, got, tc.off)
		}
		TypoWeight = 0.5
		if got := search(tc.query); !sameIDs(got, tc.on) {
			t.Errorf("%q, correction on: %v, want %v", tc.query, got, tc.on)
		}
	}
	// Held words are never corrected: the scores are the same, bit for bit.
	TypoWeight = 0
	before, err := ix.Search(Query{Text: "session config pool", Mode: ModeSessionBM25, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	TypoWeight = 0.5
	after, err := ix.Search(Query{Text: "session config pool", Mode: ModeSessionBM25, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != len(after) {
		t.Fatalf("hits %v then %v", ids(before), ids(after))
	}
	for i := range before {
		if before[i].Doc.ID != after[i].Doc.ID || before[i].Score != after[i].Score {
			t.Errorf("hit %d: %s %v then %s %v", i, before[i].Doc.ID, before[i].Score, after[i].Doc.ID, after[i].Score)
		}
	}
}

func sameIDs(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}
