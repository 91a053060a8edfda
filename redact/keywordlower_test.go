package redact

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gitmem/git-mem/exchange"
)

// unicodeLowerBefore is what restFor was given before session 27:
// strings.ToLower(s), or lower (asciiLower(s)) when s is ASCII.
func unicodeLowerBefore(s, lower string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.ToLower(s)
		}
	}
	return lower
}

// TestToASCIILowerIsAll: the runes above ASCII whose strings.ToLower
// holds an ASCII byte are exactly toASCIILower (a Go upgrade whose
// Unicode tables add one fails here).
func TestToASCIILowerIsAll(t *testing.T) {
	var got []string
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if l := strings.ToLower(string(r)); strings.IndexFunc(l, func(c rune) bool { return c < utf8.RuneSelf }) >= 0 {
			got = append(got, string(r))
		}
	}
	if !slices.Equal(got, toASCIILower) {
		t.Fatalf("runes lower-cased into ASCII: %q, toASCIILower %q", got, toASCIILower)
	}
}

// TestKeywordLowerIsToLower: restFor chooses the same detector and the
// same keyed hot rules given keywordLower as given strings.ToLower, on
// every fragment of the coding corpus (when /work/shared is there) and on
// made fragments: gitleaks' keywords whole, cut and upper-cased, with
// their letters k and i written as U+212A and U+0130, beside other
// non-ASCII letters, U+017F, invalid bytes and the halves of U+0130's
// and U+212A's encodings (seed logged, REDACT_SEED replays it).
func TestKeywordLowerIsToLower(t *testing.T) {
	sd, err := split()
	if err != nil {
		t.Fatal(err)
	}
	if sd.restWords == nil || !sd.asciiWords {
		t.Skip("keywordLower is ToLower: a rest rule without keywords, or a keyword not ASCII")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REDACT_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("REDACT_SEED: %v", err)
		}
	}
	t.Logf("seed %d (REDACT_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 27))
	lits := sd.restWords.lits
	odd := []string{"\u212a", "\u0130", "\u017f", "É", "é", "Σ", "ß", "Ǆ", "ǅ", "\xff", "\xc4", "\xe2\x84", "\xb0", "\xaa", " ", "\n", "=", "_", "-", "K", "I"}
	var texts []string
	for len(texts) < 30000 {
		var b strings.Builder
		for b.Len() < r.IntN(200) {
			switch r.IntN(6) {
			case 0, 1:
				l := lits[r.IntN(len(lits))]
				if r.IntN(2) == 0 {
					l = strings.ToUpper(l)
				}
				if r.IntN(2) == 0 {
					l = strings.NewReplacer("k", "\u212a", "K", "\u212a", "i", "\u0130", "I", "\u0130").Replace(l)
				}
				if r.IntN(4) == 0 {
					l = l[:r.IntN(len(l)+1)]
				}
				b.WriteString(l)
			default:
				b.WriteString(odd[r.IntN(len(odd))])
			}
		}
		texts = append(texts, b.String())
	}
	eachCodingExchange(t, func(ex *exchange.Exchange) error {
		for _, tu := range ex.Turns {
			fragments(tu.Text, func(f string) { texts = append(texts, f) })
		}
		return nil
	})
	differ := 0
	for _, f := range texts {
		lower := asciiLower(f)
		d1, h1 := sd.restFor(unicodeLowerBefore(f, lower))
		d2, h2 := sd.restFor(sd.keywordLower(f, lower))
		if d1 != d2 || h1 != h2 {
			t.Fatalf("%q: keywordLower chose %p %x, strings.ToLower %p %x", f, d2, h2, d1, h1)
		}
		if d1 != nil && asciiLower(f) != strings.ToLower(f) {
			differ++
		}
	}
	t.Logf("%d texts, %d of them with a detector and lower cases that differ", len(texts), differ)
	if differ < 1000 {
		t.Errorf("only %d texts test the non-ASCII case", differ)
	}
}
