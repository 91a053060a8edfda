package redact

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	ahocorasick "github.com/BobuSumisu/aho-corasick"

	"github.com/gitmem/git-mem/exchange"
)

// litSetTexts are texts made of the given literals (whole, cut short, at
// the very end, overlapping, upper-cased) and bytes they begin with, from a
// seed that is logged (REDACT_SEED replays it).
func litSetTexts(t testing.TB, lits []string, n int) []string {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REDACT_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("REDACT_SEED: %v", err)
		}
	}
	t.Logf("seed %d (REDACT_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 3))
	alphabet := "aAsS-_=:/.ekpxUy \n\t\u212a\u017f"
	var out []string
	for len(out) < n {
		var b strings.Builder
		for b.Len() < r.IntN(120) {
			l := lits[r.IntN(len(lits))]
			switch r.IntN(5) {
			case 0:
				b.WriteString(l[:r.IntN(len(l)+1)])
			case 1:
				b.WriteString(l)
			case 2:
				b.WriteString(strings.ToUpper(l))
			default:
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestLitSetIsContains: litSet.each finds exactly the literals that
// strings.Contains finds, each once, for the prefilter's literals,
// gitleaks' keywords and sets with one-byte and empty literals; and stops
// when asked to.
func TestLitSetIsContains(t *testing.T) {
	sd, err := split()
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string][]string{
		"prefilter": rulePrefilter().lits,
		"keywords":  sd.restWords.lits,
		"small":     {"", "=", "a", "ab", "abc", "b", "ba", "\u212a", "key", "ke", "k"},
	}
	for _, name := range slices.Collect(maps.Keys(sets)) {
		sets[name+" hashed"] = sets[name] // newLitSet(lits, true)
	}
	for name, lits := range sets {
		ls := newLitSet(lits, strings.HasSuffix(name, " hashed"))
		texts := append(litSetTexts(t, lits, 5000), "", "a", "=", "ab", strings.Join(lits, ""), strings.Join(lits, " "))
		hits := 0
		for _, s := range texts {
			found := make([]bool, len(lits))
			var got []int
			ls.each(s, found, func(k int) bool {
				got = append(got, k)
				return true
			})
			slices.Sort(got)
			var want []int
			for k, l := range lits {
				if strings.Contains(s, l) {
					want = append(want, k)
				}
				if found[k] != strings.Contains(s, l) {
					t.Errorf("%s: found[%d] (%q) = %v in %q", name, k, l, found[k], s)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: %q: litSet %v, strings.Contains %v", name, s, got, want)
			}
			hits += len(want)
			calls := 0
			ls.each(s, make([]bool, len(lits)), func(int) bool { calls++; return false })
			if calls != min(1, len(want)) {
				t.Errorf("%s: %q: %d calls after a false", name, s, calls)
			}
		}
		if hits < len(texts) {
			t.Errorf("%s: %d literals found in %d texts: too few to test", name, hits, len(texts))
		}
	}
}

// restForTrie is restFor's set of rules (indices into restIDs, sorted) as
// session 18 found it: the Aho-Corasick trie of the keywords walked over l.
func restForTrie(sd *splitDetector, trie *ahocorasick.Trie, l string) []int {
	var set []int
	trie.Walk(unsafe.Slice(unsafe.StringData(l), len(l)), func(_, _, pattern int64) bool {
		for _, r := range sd.patRules[pattern] {
			if !slices.Contains(set, r) {
				set = append(set, r)
			}
		}
		return true
	})
	slices.Sort(set)
	return set
}

// restForSet is the set restFor chooses now, by the same steps.
func restForSet(sd *splitDetector, l string) []int {
	var set []int
	sd.restWords.each(l, make([]bool, len(sd.restWords.lits)), func(k int) bool {
		for _, r := range sd.patRules[k] {
			if !slices.Contains(set, r) {
				set = append(set, r)
			}
		}
		return true
	})
	slices.Sort(set)
	return set
}

// TestRestWordsAreTrie: the rest's rules chosen with litSet are those the
// trie chose, on texts of gitleaks' keywords, the edge texts' fragments
// and (GIT_MEM_HEAVY=1) the coding corpus's.
func TestRestWordsAreTrie(t *testing.T) {
	sd, err := split()
	if err != nil {
		t.Fatal(err)
	}
	trie := ahocorasick.NewTrieBuilder().AddStrings(sd.restWords.lits).Build()
	chosen := 0
	check := func(frag string) {
		l := strings.ToLower(frag)
		got, want := restForSet(sd, l), restForTrie(sd, trie, l)
		if !slices.Equal(got, want) {
			t.Errorf("%q: litSet chooses %v, the trie %v", frag, got, want)
		}
		chosen += len(want)
	}
	texts := append(litSetTexts(t, sd.restWords.lits, 3000), necessaryTexts(t)...)
	for _, s := range texts {
		fragments(s, check)
	}
	if chosen < 3000 {
		t.Errorf("%d rules chosen over the texts: too few to test", chosen)
	}
	for _, s := range heavyStrings(t) {
		fragments(s, check)
	}
}

// hasSecretWordOnePassRef is hasSecretWordLower as session 19's round 2
// left it: one strings.Index pass per word of secretEnds, then
// foldsToASCII.
func hasSecretWordOnePassRef(lower string) bool {
	for _, w := range secretEnds {
		for from := 0; ; {
			i := strings.Index(lower[from:], w)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if e := i + len(w); e < len(lower) && (lower[e] == ' ' || lower[e] == '\t' || lower[e] == ':') && (w != "key" || keyHead(lower[:i])) {
				return true
			}
		}
	}
	return foldsToASCII(lower)
}

// TestSecretWordHintIsOnePass: the one-pass hasSecretWordLower answers as
// the former code on every line and whole text of the edge texts, on texts
// of the secret words themselves, on all of them cut short by 1-3 bytes,
// and (GIT_MEM_HEAVY=1) on the coding corpus's texts and lines.
func TestSecretWordHintIsOnePass(t *testing.T) {
	var yes, no int
	check := func(s string) {
		l := asciiLower(s)
		got, want := hasSecretWordLower(l), hasSecretWordOnePassRef(l)
		if got != want {
			t.Errorf("hasSecretWordLower(%q) = %v, the former code %v", l, got, want)
		}
		if want {
			yes++
		} else {
			no++
		}
	}
	words := append(slices.Clone(secretEnds), keyHeads...)
	words = append(words, " ", ":", "\t", "_", "-", "\u212a", "\u017f", "ke", "pas", "\xe2\x84", "\xc5")
	texts := append(necessaryTexts(t), litSetTexts(t, words, 3000)...)
	for _, s := range texts {
		check(s)
		for line := range strings.Lines(s) {
			check(line)
		}
		for _, cut := range []int{1, 2, 3} {
			if len(s) > cut {
				check(s[:len(s)-cut])
			}
		}
	}
	t.Logf("%d texts hinted, %d not", yes, no)
	if yes < 1000 || no < 1000 {
		t.Errorf("%d hinted, %d not: too few to compare both answers", yes, no)
	}
	for _, s := range heavyStrings(t) {
		check(s)
		for line := range strings.Lines(s) {
			check(line)
		}
	}
}

// eachBefore is litSet.each as session 20 wrote it (pairs, then short or
// next, at every position), kept as the oracle of the hashed tests.
func eachBefore(ls *litSet, s string, found []bool, fn func(k int) bool) {
	for _, k := range ls.empty {
		found[k] = true
		if !fn(k) {
			return
		}
	}
	for _, k := range ls.ones {
		if strings.IndexByte(s, ls.lits[k][0]) >= 0 {
			found[k] = true
			if !fn(k) {
				return
			}
		}
	}
	for i := 0; i+1 < len(s); i++ {
		if !ls.pairs.has(s[i], s[i+1]) ||
			!ls.short.has(s[i], s[i+1]) && (i+2 == len(s) || !ls.next.has(s[i+1], s[i+2])) {
			continue
		}
		for _, k := range ls.byPair[ls.slot[uint16(s[i])<<8|uint16(s[i+1])]-1] {
			l := ls.lits[k]
			if found[k] || len(l) > len(s)-i || s[i:i+len(l)] != l {
				continue
			}
			found[k] = true
			if !fn(k) {
				return
			}
		}
	}
}

// TestLitSetIsBefore: each calls fn with the same literals in the same
// order as the former loop (eachBefore), and stops at the same one when
// fn says so, for the prefilter's literals, gitleaks' keywords (on the
// lower case) and small sets with literals of every length, on made texts
// (seed logged) and, when /work/shared is there, on every string of the
// coding corpus and its lower case.
func TestLitSetIsBefore(t *testing.T) {
	sd, err := split()
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string][]string{
		"prefilter": rulePrefilter().lits,
		"keywords":  sd.restWords.lits,
		"small":     {"", "=", "a", "ab", "abc", "abcd", "b", "ba", "bcd", "\u212a", "key", "ke", "k", "keys", "keyst"},
		"long":      {"abcd", "bcde", "token", "tokens", "x-api-key"},
	}
	var corpus []string
	eachCodingExchange(t, func(ex *exchange.Exchange) error {
		for _, tu := range ex.Turns {
			corpus = append(corpus, tu.Text, asciiLower(tu.Text))
		}
		return nil
	})
	t.Logf("%d corpus texts", len(corpus))
	for _, name := range slices.Collect(maps.Keys(sets)) {
		sets[name+" hashed"] = sets[name] // newLitSet(lits, true)
	}
	for name, lits := range sets {
		ls := newLitSet(lits, strings.HasSuffix(name, " hashed"))
		texts := append(litSetTexts(t, lits, 20000), "", "a", "ab", "abc", "abcd", strings.Join(lits, ""), strings.Join(lits, " "))
		texts = append(texts, corpus...)
		for _, s := range texts {
			var got, want []int
			ls.each(s, make([]bool, len(lits)), func(k int) bool { got = append(got, k); return true })
			eachBefore(ls, s, make([]bool, len(lits)), func(k int) bool { want = append(want, k); return true })
			if !slices.Equal(got, want) {
				t.Fatalf("%s: %q: each %v, before %v", name, s, got, want)
			}
			if len(want) > 1 {
				stop := len(want) / 2
				got = got[:0]
				ls.each(s, make([]bool, len(lits)), func(k int) bool { got = append(got, k); return len(got) <= stop })
				if !slices.Equal(got, want[:stop+1]) {
					t.Fatalf("%s: %q: stopped after %v, want %v", name, s, got, want[:stop+1])
				}
			}
		}
	}
}
