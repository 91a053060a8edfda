package distill

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// trimFillerRef and isPlanRef are trimFiller and isPlan as they were, with
// the whole sentence lower-cased.
func trimFillerRef(s string) string {
	for guard := 0; guard < 6; guard++ {
		l := strings.ToLower(s)
		cut := 0
		for _, f := range fillerPrefixes {
			if !strings.HasPrefix(l, f) {
				continue
			}
			rest := s[len(f):]
			j, punct := 0, false
			for j < len(rest) && strings.IndexByte(",!.:;- ", rest[j]) >= 0 {
				punct = punct || rest[j] != ' '
				j++
			}
			if rest != "" && (j == 0 || !punct && !bareFillers[f]) {
				continue
			}
			if j < len(rest) && rest[j-1] != ' ' && isWordByte(rest[j]) {
				k := strings.LastIndexByte(rest[:j], ' ')
				if k < 0 {
					continue
				}
				j = k + 1
			}
			cut = len(f) + j
			break
		}
		if cut == 0 {
			break
		}
		if cut >= len(s) {
			return ""
		}
		s = s[cut:]
	}
	return strings.TrimSpace(s)
}

func isPlanRef(s string) bool {
	l := strings.ToLower(s)
	for _, p := range planPrefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// TestLowerHeadIsToLower: lowerHead's first n bytes are ToLower's, and
// trimFiller and isPlan answer as with the whole sentence lower-cased, on
// made sentences: the prefixes whole, cut and upper-cased, runes that
// lower-case to fewer bytes (the Kelvin sign, 3 → 1) or more ('Ⱥ', 2 → 3),
// invalid UTF-8 and 4-byte runes where a cut may fall.
func TestLowerHeadIsToLower(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	pieces := []string{"\u212a", "\u023a", "İ", "\xff", "\xe2\x84", "😀", "ß", "é", " ", ", ", "! ", ".", "-", ":", "a", "Z",
		"hello.sh", "the build passes", "x"}
	for _, p := range append(append([]string{}, fillerPrefixes...), planPrefixes...) {
		pieces = append(pieces, p, strings.ToUpper(p), p[:len(p)/2])
	}
	for range 100000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if rng.IntN(4) == 0 {
			b.WriteString(strings.Repeat("\u212a", rng.IntN(200)))
		}
		s := b.String()
		for _, n := range []int{0, 1, 5, fillerMax, planMax} {
			got, want := lowerHead(s, n), strings.ToLower(s)
			if len(want) >= n && (len(got) < n || got[:n] != want[:n]) || len(want) < n && got != want {
				t.Fatalf("lowerHead(%q, %d) = %q; ToLower: %q", s, n, got, want)
			}
		}
		if got, want := trimFiller(s), trimFillerRef(s); got != want {
			t.Fatalf("trimFiller(%q) = %q, before %q", s, got, want)
		}
		if got, want := isPlan(s), isPlanRef(s); got != want {
			t.Fatalf("isPlan(%q) = %v, before %v", s, got, want)
		}
	}
}

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
