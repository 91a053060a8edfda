package search

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"strconv"
	"strings"
	"sync"
)

// Query expansion by WordNet synonyms (issue 15): a conceptual query names
// a thing in other words than the exchange did ("the car" for "the auto",
// "mistake" for "error"). session-bm25 adds each query term's synonyms as
// extra terms at SynonymWeight of their BM25, so an exchange holding the
// query's own words stays first and one holding only a synonym still
// scores. verbatim-bm25 never expands (it is the plain baseline).
var (
	// SynonymWeight scales a synonym's score; 0 switches expansion off.
	SynonymWeight = 0.0
	// SynonymSenses takes synonyms from a word's first SynonymSenses
	// WordNet senses (the table holds at most 2).
	SynonymSenses = 1
	// SynonymMax bounds the synonyms added per query term.
	SynonymMax = 3
)

// synonymTable is search/wordnet/synonyms.txt.gz, built by scripts/wordnet
// from Princeton WordNet 3.0 (license in search/wordnet/LICENSE).
//
//go:embed wordnet/synonyms.txt.gz
var synonymTable []byte

type synonym struct {
	term string
	rank uint8 // the WordNet sense it came from, 0 = the most frequent
}

// synonyms maps an analysed term to its synonyms, best first; read from
// the table on first use (~26,000 terms).
var synonyms = sync.OnceValue(func() map[string][]synonym {
	m := map[string][]synonym{}
	zr, err := gzip.NewReader(bytes.NewReader(synonymTable))
	if err != nil {
		return m // cannot happen: compiled-in data, checked by a test
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Text()
		key, rest, ok := strings.Cut(line, "\t")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(rest)
		syns := make([]synonym, 0, len(fs))
		for _, f := range fs {
			t, r, _ := strings.Cut(f, ":")
			n, _ := strconv.Atoi(r)
			syns = append(syns, synonym{t, uint8(n)})
		}
		m[key] = syns
	}
	return m
})

// weightedTerm is a query term and the weight of its score.
type weightedTerm struct {
	t string
	w float64
}

// expandTerms returns the query terms at weight 1 followed by their
// thesaurus words (thesaurus.go) and WordNet synonyms (those not already
// query terms, each once) at ThesaurusWeight and SynonymWeight, when
// expand.
func expandTerms(terms []string, expand bool) []weightedTerm {
	out := make([]weightedTerm, 0, len(terms))
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		out = append(out, weightedTerm{t, 1})
		seen[t] = true
	}
	if !expand {
		return out
	}
	out = thesaurusTerms(out, terms, seen)
	if SynonymWeight <= 0 {
		return out
	}
	table := synonyms()
	for _, t := range terms {
		n := 0
		for _, s := range table[t] {
			if n >= SynonymMax {
				break
			}
			if int(s.rank) >= SynonymSenses || seen[s.term] {
				continue
			}
			seen[s.term] = true
			out = append(out, weightedTerm{s.term, SynonymWeight})
			n++
		}
	}
	return out
}
