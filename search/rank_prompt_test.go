package search

import (
	"fmt"
	"testing"
)

func TestFirstPerson(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"How many online courses have I completed?", true},
		{"What is my preferred gin-to-vermouth ratio?", true},
		{"I’m trying to remember the tea tree oil ratio", true},
		{"Can you remind me of the two companies?", true},
		{"What did Caroline research?", false},
		{"how did we fix the retry loop", false},
		{"Iterator invalidation in the index writer", false},
	} {
		if got := firstPerson(tc.q); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.q, got, tc.want)
		}
	}
}

// TestPromptWeightFirstPerson: the person's own message lifts the exchange
// where they said it for a question in the first person, and changes no
// score of a question about someone else.
func TestPromptWeightFirstPerson(t *testing.T) {
	docs := []Doc{
		{Seq: 0, Commit: fmt.Sprintf("%040x", 1), ID: "said", Session: "a",
			Head:     "By the way, I completed three online courses on Coursera",
			Verbatim: "user: By the way, I completed three online courses on Coursera\n\nassistant: Well done. Next steps for learning data science: projects, Kaggle."},
		{Seq: 1, Commit: fmt.Sprintf("%040x", 2), ID: "talk", Session: "b",
			Head:     "Which platform is best for data science?",
			Verbatim: "user: Which platform is best for data science?\n\nassistant: Online courses: Coursera online courses, edX online courses; courses completed there give certificates."},
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	scores := func(q string, w float64) map[string]float64 {
		defer func(old float64) { PromptWeight = old }(PromptWeight)
		PromptWeight = w
		return hitScores(t, ix, q, 2)
	}
	first := "How many online courses have I completed?"
	on, off := scores(first, 0.1), scores(first, 0)
	if on["said"] <= off["said"] || on["said"]-off["said"] <= on["talk"]-off["talk"] {
		t.Errorf("%q: the person's own message adds %g to it, %g to the other", first, on["said"]-off["said"], on["talk"]-off["talk"])
	}
	third := "How many online courses did Caroline complete?"
	on, off = scores(third, 0.1), scores(third, 0)
	for id := range off {
		if on[id] != off[id] {
			t.Errorf("%q: %s scores %g with the weight, %g without", third, id, on[id], off[id])
		}
	}
}
