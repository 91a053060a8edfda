package search

import (
	"strings"
	"sync"

	"github.com/gitmem/git-mem/search/embed"
)

// FrameWeight is the weight of a question's frame words in the session
// layer (1: as any term). A question names its topic and the kind of
// answer it wants: a count ("how many", "the total number of"), a
// duration or a date ("how long", "how many days ago"), an order ("which
// came first"). The frame words say nothing of where the answer is, and
// they are common in long unrelated text (a spreadsheet session's "add a
// totals row" outranked "What is the total number of siblings I have?").
// Only for a query that asks (a '?', or a question word first).
// docs/bench/eval.md measures it (2026-12-02, second round).
var FrameWeight = 1.0

var frameWords = []string{
	"total", "number", "many", "much", "often", "long", "ago", "day", "days", "week", "weeks",
	"month", "months", "year", "years", "time", "times", "first", "last", "order", "since", "ever",
	"amount", "count",
}

var (
	frameOnce  sync.Once
	frameTerms map[string]bool
)

func isFrameTerm(t string) bool {
	frameOnce.Do(func() {
		frameTerms = map[string]bool{}
		for _, w := range frameWords {
			if t := embed.Term(w); t != "" {
				frameTerms[t] = true
			}
		}
	})
	return frameTerms[t]
}

// asksQuestionQuery says whether a query is a question.
func asksQuestionQuery(text string) bool {
	if strings.Contains(text, "?") {
		return true
	}
	f := strings.Fields(strings.ToLower(text))
	if len(f) == 0 {
		return false
	}
	switch strings.Trim(f[0], ",.:;") {
	case "how", "what", "when", "which", "who", "where", "why":
		return true
	}
	return false
}

// weighFrame lowers the weight of a question's frame words (FrameWeight).
func weighFrame(text string, terms []weightedTerm) []weightedTerm {
	if FrameWeight == 1 || !asksQuestionQuery(text) {
		return terms
	}
	for i := range terms {
		if isFrameTerm(terms[i].t) {
			terms[i].w *= FrameWeight
		}
	}
	return terms
}
