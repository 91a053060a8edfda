package search

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gitmem/git-mem/search/embed"
)

// The exact-recall tier (issue 15's query-intent ladder). A person who
// pastes an error back ("Cannot read properties of undefined (reading
// 'flip')") or names an identifier wants the exchange that holds it as
// written first. BM25 cannot tell that exchange from its neighbours, which
// hold the same words in other orders (the pasted error ranked 4th), and
// the index keeps no word positions. So, for a query that asks for exact
// recall, the best ExactTierN results are read back (Query.Verbatim) and
// moved, keeping their order within each tier:
//
//   - TierPhrase: the talk holds the whole query as a phrase, or every
//     quoted span of it (compared on letters and digits, case folded);
//   - TierTerms: the talk holds every identifier and quoted span of the
//     query;
//   - the rest.
//
// A question (a query with '?') uses only the first rung's whole-query
// phrase, which it practically never matches.
const (
	TierPhrase = "phrase"
	TierTerms  = "terms"
)

// ExactTierN is how many of the best results the tier reads back and
// reorders; 0 switches the tier off. Measured in docs/bench/eval.md: 10, 20
// and 50 give the same ranks on every set (the exchange a person pastes
// from is already near the top); 10 reads the fewest exchanges. It was off
// while its read cost more than the ranking: the first go-git object read
// of a process decodes the pack indexes, ~+100 ms at 100,000 exchanges;
// the candidates are now read in one batch (memory.Talks: from the mapped
// packs in the process, else one git cat-file), a few ms
// (docs/BENCHMARKS.md).
var ExactTierN = 10

// Knobs of the tier, measured in docs/bench/eval.md: ExactTerms enables
// the second rung (TierTerms); ExactQuestions lets a question (a query with
// '?') use quoted spans and identifiers (off: "after the agent answered
// 'what tasks are available', how did we…" names the words of the
// exchange before the one it asks for); ExactOutput looks in the tools'
// output too (on: where an agent ran the build, the error is in its
// output).
var (
	ExactTerms     = true
	ExactQuestions = false
	ExactOutput    = true
	ExactCard      = false // look in the card (core + context) instead of reading the exchange
)

// ExactIntent says whether a search of text in mode will read exchanges
// back for the exact-recall tier (a caller may start its reads early).
func ExactIntent(text, mode string) bool {
	if mode == "" {
		mode = DefaultMode
	}
	_, _, _, ok := exactNeedles(text)
	return ok && mode == ModeSessionBM25 && ExactTierN > 0
}

// exactNeedles returns what the tier looks for in a query: the whole query
// (normalised) when it asks for exact recall, the quoted spans, and the
// identifiers. ok is false for a query that does not ask for exact recall.
func exactNeedles(text string) (phrase string, spans, idents []string, ok bool) {
	spans = quotedSpans(text)
	embed.Words(text, func(w string, part bool) {
		if !part && codeLike(w) {
			if n := normalizeExact(w); n != "" {
				idents = append(idents, n)
			}
		}
	})
	phrase = normalizeExact(text)
	pasted := !strings.Contains(text, "?") && len(strings.Fields(text)) >= 4
	if len(spans) == 0 && len(idents) == 0 && !pasted {
		return "", nil, nil, false
	}
	if strings.Count(phrase, " ") < 2 {
		phrase = "" // one or two words: BM25 decides
	}
	return phrase, spans, idents, true
}

// quotedSpans returns the normalised text between matching quotes: "…",
// `…`, and '…' when the opening quote follows a space or bracket (not the
// apostrophe of "don't").
func quotedSpans(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '"' && c != '`' && c != '\'' {
			continue
		}
		if c == '\'' && i > 0 && !strings.ContainsRune(" \t\n([{:=,", rune(text[i-1])) {
			continue
		}
		j := strings.IndexByte(text[i+1:], c)
		if j < 0 {
			break
		}
		if n := normalizeExact(text[i+1 : i+1+j]); n != "" {
			out = append(out, n)
		}
		i += 1 + j
	}
	return out
}

// exactRung is the rung of one exchange, given its talk and tool output:
// 2 (TierPhrase), 1 (TierTerms) or 0.
func exactRung(r *docRec, talk, output, phrase string, spans, idents []string) (int, string) {
	if ExactCard {
		talk, output = r.Core+"\n"+r.Context, ""
	}
	if ExactOutput && output != "" {
		talk += "\n" + output
	}
	t := normalizeExact(talk)
	all := func(ns []string) bool {
		for _, x := range ns {
			if !holds(t, x) {
				return false
			}
		}
		return true
	}
	switch {
	case phrase != "" && holds(t, phrase), longSpan(spans) && all(spans):
		return 2, TierPhrase
	case ExactTerms && len(idents)+len(spans) > 0 && all(idents) && all(spans):
		return 1, TierTerms
	}
	return 0, ""
}

// longSpan says whether a quoted span has two words or more: one quoted
// word ('flip') is an identifier, not a phrase.
func longSpan(spans []string) bool {
	for _, s := range spans {
		if strings.Contains(s, " ") {
			return true
		}
	}
	return false
}

// normalizeExact lower-cases s and turns every run of characters other than
// letters and digits into one space, trimmed: "(reading 'flip')" and
// "reading flip" compare equal, as a person retyping an error expects.
func normalizeExact(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := true // no leading space
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSuffix(b.String(), " ")
}

// holds says whether the normalised text t holds the normalised needle n
// on word boundaries.
func holds(t, n string) bool {
	for from := 0; ; {
		i := strings.Index(t[from:], n)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(n)
		if (i == 0 || t[i-1] == ' ') && (end == len(t) || t[end] == ' ') {
			return true
		}
		from = i + 1
	}
}

// exactTier reorders the first ExactTierN of final by tier (see above) and
// returns each candidate's tier ("" for none), in the new order.
func (ix *Index) exactTier(final []cand, text string, verbatim func([]ExchangeRef) ([]string, []string, error)) ([]cand, []string, error) {
	phrase, spans, idents, ok := exactNeedles(text)
	if !ExactQuestions && strings.Contains(text, "?") {
		spans, idents = nil, nil
	}
	tiers := make([]string, len(final))
	if !ok || verbatim == nil || ExactTierN <= 0 || len(final) == 0 {
		return final, tiers, nil
	}
	n := min(ExactTierN, len(final))
	rank := make([]int, n)
	recs := make([]docRec, n)
	refs := make([]ExchangeRef, n)
	for i := range n {
		r, err := ix.rec(final[i].row)
		if err != nil {
			return nil, nil, err
		}
		recs[i], refs[i] = r, ExchangeRef{ID: r.ID, Commit: r.Commit}
	}
	var talk, output []string
	if !ExactCard {
		// One call for all: the caller reads them in one batch, not one
		// object read each.
		var err error
		if talk, output, err = verbatim(refs); err != nil {
			return nil, nil, err
		}
		if len(talk) != n || len(output) != n {
			return nil, nil, fmt.Errorf("read %d/%d exchanges back for %d candidates", len(talk), len(output), n)
		}
	} else {
		talk, output = make([]string, n), make([]string, n)
	}
	for i := range n {
		rank[i], tiers[i] = exactRung(&recs[i], talk[i], output[i], phrase, spans, idents)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rank[idx[a]] > rank[idx[b]] })
	out := append([]cand(nil), final...)
	outTiers := append([]string(nil), tiers...)
	for i, j := range idx {
		out[i], outTiers[i] = final[j], tiers[j]
	}
	return out, outTiers, nil
}
