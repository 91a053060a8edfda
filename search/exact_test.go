package search

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestExactNeedles(t *testing.T) {
	for _, c := range []struct {
		query, phrase string
		spans, idents []string
		ok            bool
	}{
		{"Cannot read properties of undefined (reading 'flip')", "cannot read properties of undefined reading flip", []string{"flip"}, nil, true},
		{`where did we set "max retries" in auth_middleware.go`, "where did we set max retries in auth middleware go", []string{"max retries"}, []string{"auth middleware go"}, true},
		{"how did we speed up the search index?", "", nil, nil, false}, // a question without code or quotes
		{"retryTimeout", "", nil, []string{"retrytimeout"}, true},      // one word: no phrase
		{"don't touch the cache", "don t touch the cache", nil, nil, true},
	} {
		phrase, spans, idents, ok := exactNeedles(c.query)
		if phrase != c.phrase || !reflect.DeepEqual(spans, c.spans) || !reflect.DeepEqual(idents, c.idents) || ok != c.ok {
			t.Errorf("exactNeedles(%q) = %q %q %q %v, want %q %q %q %v", c.query, phrase, spans, idents, ok, c.phrase, c.spans, c.idents, c.ok)
		}
	}
}

func TestHolds(t *testing.T) {
	for _, c := range []struct {
		text, needle string
		want         bool
	}{
		{"x cannot read flip y", "read flip", true},
		{"x cannot read flipper", "read flip", false}, // word boundary
		{"read flip", "read flip", true},
		{"unread flip", "read flip", false},
		{"a read flip b read flip", "read flip", true},
	} {
		if got := holds(c.text, c.needle); got != c.want {
			t.Errorf("holds(%q, %q) = %v", c.text, c.needle, got)
		}
	}
	if got := normalizeExact("  TypeError: Cannot read (reading 'flip')\n"); got != "typeerror cannot read reading flip" {
		t.Errorf("normalizeExact = %q", got)
	}
}

// TestExactTier: three exchanges hold every word of a pasted error, one of
// them as written; BM25 ranks the scrambled ones first, the tier moves the
// verbatim one up and labels it, and the rest keep their order.
func TestExactTier(t *testing.T) {
	defer func(n int) { ExactTierN = n }(ExactTierN)
	ExactTierN = 10
	docs := []Doc{
		{ID: "scrambled1", Session: "s1", Verbatim: "user: reading the properties list: undefined flip cannot flip undefined properties read read"},
		{ID: "verbatim", Session: "s2", Verbatim: "user: I get TypeError: Cannot read properties of undefined (reading 'flip') in a long paste of a stack trace at sketch.js line 12 column 4 and more words here"},
		{ID: "scrambled2", Session: "s3", Verbatim: "user: flip undefined read properties cannot, reading flip"},
		{ID: "other", Session: "s4", Verbatim: "user: nothing to do with it"},
	}
	for i := range docs {
		docs[i].Seq, docs[i].Commit = i, docs[i].ID
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	text := map[string]string{}
	for _, d := range docs {
		text[d.ID] = d.Verbatim
	}
	reads, calls := 0, 0
	verbatim := func(refs []ExchangeRef) (talk, output []string, err error) {
		calls++
		for _, r := range refs {
			if r.Commit != r.ID {
				t.Errorf("exchange %s read back at commit %q, want its own commit", r.ID, r.Commit)
			}
			reads++
			talk, output = append(talk, text[r.ID]), append(output, "")
		}
		return talk, output, nil
	}
	q := "Cannot read properties of undefined reading flip"
	off, err := ix.Search(Query{Text: q, Mode: ModeSessionBM25})
	if err != nil {
		t.Fatal(err)
	}
	if ids(off)[0] == "verbatim" {
		t.Fatalf("without the tier BM25 already ranks the verbatim exchange first (%v): the test shows nothing", ids(off))
	}
	on, err := ix.Search(Query{Text: q, Mode: ModeSessionBM25, Verbatim: verbatim})
	if err != nil {
		t.Fatal(err)
	}
	if ids(on)[0] != "verbatim" || on[0].Tier != TierPhrase {
		t.Fatalf("with the tier: %v (tier %q), want verbatim first, labelled %q", ids(on), on[0].Tier, TierPhrase)
	}
	var rest []string
	for _, id := range ids(off) {
		if id != "verbatim" {
			rest = append(rest, id)
		}
	}
	if got := ids(on)[1:]; !reflect.DeepEqual(got, rest) {
		t.Errorf("the others: %v, want their BM25 order %v", got, rest)
	}
	if reads == 0 || reads > ExactTierN || calls != 1 {
		t.Errorf("%d exchanges read back in %d calls, want 1..%d in one", reads, calls, ExactTierN)
	}
	// A question reads nothing back; neither does verbatim-bm25.
	reads = 0
	for _, q := range []Query{
		{Text: "why can't it read the flip properties?", Mode: ModeSessionBM25, Verbatim: verbatim},
		{Text: q, Mode: ModeVerbatimBM25, Verbatim: verbatim},
	} {
		if _, err := ix.Search(q); err != nil {
			t.Fatal(err)
		}
	}
	if reads != 0 {
		t.Errorf("%d exchanges read back for a question or verbatim-bm25", reads)
	}
	// A failing read is an error, not a silent ranking.
	boom := errors.New("blob gone")
	_, err = ix.Search(Query{Text: q, Mode: ModeSessionBM25, Verbatim: func([]ExchangeRef) ([]string, []string, error) { return nil, nil, boom }})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "exact tier") {
		t.Errorf("read error: %v", err)
	}
	// So is a reader that answers for fewer exchanges than asked.
	_, err = ix.Search(Query{Text: q, Mode: ModeSessionBM25, Verbatim: func([]ExchangeRef) ([]string, []string, error) { return []string{""}, []string{""}, nil }})
	if err == nil || !strings.Contains(err.Error(), "exact tier") {
		t.Errorf("short answer: %v", err)
	}
}
