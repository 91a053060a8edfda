package search

import (
	"context"
	"fmt"
	"unicode/utf8"

	bleveindex "github.com/blevesearch/bleve_index_api"
)

// Typo tolerance (issue 15's "query intent ladder": users of exact recall
// expect a misspelt word to still find its exchange). A query term that no
// exchange holds — in its talk, its tools' output or its card — is scored
// through the memory's own word nearest to it in spelling (typoEdits,
// nearestTerm), at TypoWeight. A term
// some exchange holds is never replaced, so a query whose words are all in
// the memory ranks exactly as before.
var (
	// TypoWeight scales the score of a misspelt term's correction; 0
	// switches correction off. Measured on every set (docs/bench/eval.md,
	// session 13): only LoCoMo and our misspelt queries hold words no
	// exchange has, and 0.3–1 is a plateau on both.
	TypoWeight = 0.5
	// TypoMinLen is the shortest analysed term corrected: shorter words
	// are one edit away from too many others ("node" → "none"). 4 and 5
	// rank every eval query the same.
	TypoMinLen = 5
)

// TypoLong is the length in runes from which an analysed term may be two
// edits from its correction, not one. Terms are stems, so a misspelling
// often stems apart from the right word ("certficate" → certfic,
// "certificate" → certif: two edits). 7 and 8 rank every eval query the
// same; 6 loses LoCoMo −0.003 MRR and a coding dev query for +0.0035 on our
// misspelt queries.
var TypoLong = 7

// typoEdits is the edit distance allowed for an analysed term of n runes.
func typoEdits(n int) int {
	if n >= TypoLong {
		return 2
	}
	return 1
}

// correctTypos scores, for each query term at weight 1 that no row holds
// in its own fields (missing[k], found while scoring it: a held term costs
// nothing more), the verbatim word nearest to it (nearestTerm) at
// TypoWeight, through s. A correction that is itself a query term is not
// scored twice.
func correctTypos(ctx context.Context, s *sessionScorer, terms []weightedTerm, missing []bool) error {
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		seen[t.t] = true
	}
	for k, t := range terms {
		if !missing[k] || t.w != 1 || utf8.RuneCountInString(t.t) < TypoMinLen {
			continue
		}
		best, err := nearestTerm(ctx, s.r, fieldVerbatim, t.t, typoEdits(utf8.RuneCountInString(t.t)))
		if err != nil {
			return err
		}
		if best == "" || seen[best] {
			continue
		}
		seen[best] = true
		s.k, s.tw = int32(len(terms)+k+1), TypoWeight
		if err := s.term(ctx, best); err != nil {
			return err
		}
	}
	return nil
}

// nearestTerm is the word of field fewest edits (at most edits) from t,
// among those the one the most documents hold, then the smaller word; ""
// when there is none. Bleve's fuzzy dictionary gives neither counts nor
// distances (scorch drops them), so the automaton measures the distance
// and the postings count the documents.
func nearestTerm(ctx context.Context, r bleveindex.IndexReader, field, t string, edits int) (string, error) {
	fr, ok := r.(bleveindex.IndexReaderFuzzy)
	if !ok {
		return "", nil // an index without fuzzy dictionaries: no correction
	}
	d, fa, err := fr.FieldDictFuzzyAutomaton(field, t, edits, "")
	if err != nil {
		return "", fmt.Errorf("words near %q: %w", t, err)
	}
	defer d.Close()
	var best string
	var bestN uint64
	bestD := uint8(255)
	for {
		e, err := d.Next()
		if err != nil {
			return "", fmt.Errorf("words near %q: %w", t, err)
		}
		if e == nil {
			break
		}
		if e.Term == t {
			continue
		}
		dist := uint8(edits)
		if fa != nil {
			if _, dd := fa.MatchAndDistance(e.Term); dd > 0 {
				dist = dd
			}
		}
		if dist > bestD {
			continue
		}
		tfr, err := r.TermFieldReader(ctx, []byte(e.Term), field, false, false, false)
		if err != nil {
			return "", fmt.Errorf("postings of %q: %w", e.Term, err)
		}
		n := tfr.Count()
		tfr.Close()
		if n == 0 {
			continue
		}
		if dist < bestD || n > bestN || n == bestN && e.Term < best {
			best, bestN, bestD = e.Term, n, dist
		}
	}
	return best, nil
}
