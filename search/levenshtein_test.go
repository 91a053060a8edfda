package search

import (
	"math/rand"
	"testing"

	lev "github.com/blevesearch/vellum/levenshtein"
)

// osaDistance is the edit distance with adjacent transpositions (optimal
// string alignment) over runes, computed directly.
func osaDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			c := 1
			if x[i-1] == y[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// TestLevenshteinDFAIsDistance holds the Levenshtein automata that the typo
// tier walks the dictionary with (Bleve's, built by vellum; git mem builds
// vellum from third_party/vellum, whose builder keys its states
// differently, see third_party/vellum/GITMEM.md) to the edit distance
// computed directly, on random words and their random edits.
func TestLevenshteinDFAIsDistance(t *testing.T) {
	seed := int64(20261206)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	alpha := []rune("abcdeé_9")
	word := func(n int) string {
		r := make([]rune, n)
		for i := range r {
			r[i] = alpha[rng.Intn(len(alpha))]
		}
		return string(r)
	}
	edit := func(s string) string {
		r := []rune(s)
		for k := rng.Intn(4); k > 0; k-- {
			switch op := rng.Intn(4); {
			case op == 0 && len(r) > 0: // delete
				i := rng.Intn(len(r))
				r = append(r[:i:i], r[i+1:]...)
			case op == 1: // insert
				i := rng.Intn(len(r) + 1)
				r = append(r[:i:i], append([]rune{alpha[rng.Intn(len(alpha))]}, r[i:]...)...)
			case op == 2 && len(r) > 0: // substitute
				r[rng.Intn(len(r))] = alpha[rng.Intn(len(alpha))]
			case op == 3 && len(r) > 1: // transpose
				i := rng.Intn(len(r) - 1)
				r[i], r[i+1] = r[i+1], r[i]
			}
		}
		return string(r)
	}
	for _, maxd := range []uint8{1, 2} {
		b, err := lev.NewLevenshteinAutomatonBuilder(maxd, true)
		if err != nil {
			t.Fatal(err)
		}
		for q := 0; q < 200; q++ {
			query := word(1 + rng.Intn(8))
			dfa, err := b.BuildDfa(query, maxd)
			if err != nil {
				t.Fatal(err)
			}
			for c := 0; c < 50; c++ {
				cand := edit(query)
				if c%5 == 0 {
					cand = word(rng.Intn(9))
				}
				want := osaDistance(query, cand)
				match, got := dfa.MatchAndDistance(cand)
				if match != (want <= int(maxd)) || (match && int(got) != want) {
					t.Fatalf("max %d: %q against %q: automaton %v, %d; edit distance %d", maxd, query, cand, match, got, want)
				}
			}
		}
	}
}
