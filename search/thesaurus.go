package search

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/gitmem/git-mem/search/embed"
)

// Query expansion by a thesaurus of software-engineering words (issue 15,
// session 29): a conceptual coding query names a thing in other words
// than the exchange did ("the test run hangs" for "dotnet test blocked",
// "remove the folder" for "rm -rf the directory"). WordNet's first senses
// are everyday ones (synonyms.go); search/thesaurus/words.txt holds the
// words developers use for one thing. session-bm25 adds each query term's
// thesaurus words as extra terms at ThesaurusWeight of their BM25;
// verbatim-bm25 never expands.
var (
	// ThesaurusWeight scales a thesaurus word's score; 0 switches the
	// thesaurus off.
	ThesaurusWeight = 0.0
	// ThesaurusMax bounds the words added per query term (0: all of its
	// groups).
	ThesaurusMax = 0
)

//go:embed thesaurus/words.txt
var thesaurusText string

// thesaurus maps an analysed term to the other analysed terms of its
// groups, in the table's order, each once; read on first use.
var thesaurus = sync.OnceValue(func() map[string][]string {
	return parseThesaurus(thesaurusText)
})

// parseThesaurus reads the table: a group per line, words separated by
// white space, '#' comments. Each word is analysed as a query is, whole
// (not the parts of "k8s" or "utf8"; a stop word gives nothing).
func parseThesaurus(text string) map[string][]string {
	m := map[string][]string{}
	has := map[[2]string]bool{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var group []string
		seen := map[string]bool{}
		for _, w := range strings.Fields(line) {
			embed.Words(w, func(x string, part bool) {
				if t := embed.Term(x); t != "" && !part && !seen[t] {
					seen[t] = true
					group = append(group, t)
				}
			})
		}
		for _, a := range group {
			for _, b := range group {
				if a != b && !has[[2]string{a, b}] {
					has[[2]string{a, b}] = true
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
}

// thesaurusTerms appends to out each term's thesaurus words that are not
// in seen (the query's terms and the words added so far) at
// ThesaurusWeight, at most ThesaurusMax per term.
func thesaurusTerms(out []weightedTerm, terms []string, seen map[string]bool) []weightedTerm {
	if ThesaurusWeight <= 0 {
		return out
	}
	table := thesaurus()
	for _, t := range terms {
		n := 0
		for _, s := range table[t] {
			if ThesaurusMax > 0 && n >= ThesaurusMax {
				break
			}
			if seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, weightedTerm{s, ThesaurusWeight})
			n++
		}
	}
	return out
}
