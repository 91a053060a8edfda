package distill

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestWordCountIsFields: wordCount and firstWord answer as strings.Fields
// on made texts of ASCII and Unicode spaces (U+0085, U+00A0, U+2003,
// U+3000), invalid UTF-8 and words.
func TestWordCountIsFields(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	pieces := []string{" ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0", "\u2003", "\u3000", "\x85", "\xa0", "\xff",
		"\xe2\x80", "a", "word", "é", "😀", "\u200b", "\x00", "x-y"}
	texts := []string{"", " ", "a", " a ", "a b", "\u00a0a\u3000b\u0085"}
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		f := strings.Fields(s)
		first := ""
		if len(f) > 0 {
			first = f[0]
		}
		if wordCount(s) != len(f) || firstWord(s) != first {
			t.Fatalf("%q: wordCount %d, firstWord %q; Fields %q", s, wordCount(s), firstWord(s), f)
		}
	}
}
