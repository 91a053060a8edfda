package embed

import (
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/gitmem/git-mem/internal/shared"
)

// wordsRef is Words as it was before its ASCII fast paths and reused parts
// slice (session 16): every rune decoded with utf8, tested with unicode,
// and a new parts slice per word.
func wordsRef(text string, emit func(w string, part bool)) {
	isWord := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWord(r) {
			i += size
			continue
		}
		start, end := i, i
		for i < len(text) {
			r, size = utf8.DecodeRuneInString(text[i:])
			if isWord(r) {
				i += size
				end = i
				continue
			}
			if isJoiner(r) && i+size < len(text) {
				r2, _ := utf8.DecodeRuneInString(text[i+size:])
				if isWord(r2) {
					i += size
					continue
				}
			}
			break
		}
		word := text[start:end]
		var parts []string
		if isASCII(word) {
			parts = splitASCII(word)
		} else {
			parts = splitRunes(word)
		}
		if len(word) <= MaxWordBytes {
			emit(word, false)
		}
		if len(parts) > 1 {
			for _, p := range parts {
				if len(p) <= MaxWordBytes {
					emit(p, true)
				}
			}
		}
		if i == end && i < len(text) {
			_, size = utf8.DecodeRuneInString(text[i:])
			i += size
		}
	}
}

func TestIsWordRuneASCII(t *testing.T) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		if got, want := isWordRune(r), r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r); got != want {
			t.Errorf("isWordRune(%q) = %v, want %v", r, got, want)
		}
	}
}

// TestWordsIsRef: Words emits exactly what wordsRef emits (the terms of
// every index depend on it) on generated texts mixing ASCII words and
// joiners, Unicode letters and digits, invalid UTF-8 and long runs, and
// on the coding corpus's turn texts (when /work/shared is there).
func TestWordsIsRef(t *testing.T) {
	texts := genTexts(t, 20000)
	if files, _ := filepath.Glob(filepath.Join(shared.Dir(), "eval/coding/*/exchanges.jsonl")); len(files) > 0 {
		texts = append(texts, codingTexts(t)...) // and the coding turns, when there
	}
	type em struct {
		w    string
		part bool
	}
	for _, text := range texts {
		var got, want []em
		Words(text, func(w string, part bool) { got = append(got, em{w, part}) })
		wordsRef(text, func(w string, part bool) { want = append(want, em{w, part}) })
		if !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %+v, want %+v", text, got, want)
		}
	}
}

// genTexts makes n texts of ASCII words and joiners, Unicode letters and
// digits, invalid UTF-8, long runs, stop words and words to stem, after a
// few edge cases (the seed is logged).
func genTexts(t *testing.T, n int) []string {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	pieces := []string{"a", "Z", "9", "_", ".", "/", "-", ":", " ", "\n", "\t", ",", "(", "authMiddleware", "HTTPServer",
		"x86_64", "pkg/errors", "é", "É", "ß", "İ", "\u212a", "٣", "中文", "ｆｕｌｌ", "\xff", "\xe2\x82", "\u00a0",
		"\u2028", "\ufffd", "src/auth/middleware.ts", strings.Repeat("ab", 40), strings.Repeat("9", 70), "getHTTPResponseCode2",
		"The", "tests", "Q", "Running", "about", "Retries", "HTTP", "s", "colour", "abcdefgh", "abcdefghijklmnop",
		"abcdefghijklmnopq", "abcdefgi", "bcdefgh", "ZZZZZZZZZZZZZZZZ"} // the last: plain words, which Words does not split
	texts := []string{"", "a", ".", "a.", ".a", "a..b", "a.-b", "é.b", "a/\xff", strings.Repeat("x", 65), strings.Repeat("x", 64)}
	for range n {
		var b strings.Builder
		for range r.Intn(24) {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	return texts
}

// TestJoinedIsAnalyze: Joined is strings.Join of the Analyze of its texts,
// one after the other, and their count, with one Analyzer reused (its
// buffer must not leak from one call into the next).
func TestJoinedIsAnalyze(t *testing.T) {
	cases := [][]string{
		{}, {""}, {"", ""}, {"the a of"}, {"Auth middleware retries", "December 2026"},
		{"authMiddleware.go failed: TypeError", ""}, {"", "x86_64 HTTPServer"},
		{"running tests; the tests pass", "running"}, {"é ß İ \xff 中文", "\u212a"},
	}
	a, ref := NewAnalyzer(), NewAnalyzer()
	for range 3 {
		for _, texts := range cases {
			var want []string
			for _, text := range texts {
				want = append(want, ref.Analyze(text)...)
			}
			got, n := a.Joined(texts...)
			if got != strings.Join(want, " ") || n != len(want) {
				t.Errorf("Joined(%q) = %q, %d; want %q, %d", texts, got, n, strings.Join(want, " "), len(want))
			}
		}
	}
}

// joinedRef is Joined as it was before its front (session 21): each of
// Words' emissions through Term.
func joinedRef(texts ...string) (string, int) {
	var b []byte
	n := 0
	for _, text := range texts {
		Words(text, func(w string, part bool) {
			if t := Term(w); t != "" {
				if n > 0 {
					b = append(b, ' ')
				}
				b = append(b, t...)
				n++
			}
		})
	}
	return string(b), n
}

// TestJoinedIsRef: Joined with its front and memo gives what joinedRef
// gives, on generated texts alone and in pairs, with fronts of one slot
// (every word replaces the last), of a few and of the default size, memos
// emptied over and over or not, and on the coding corpus's turns when it
// is present.
func TestJoinedIsRef(t *testing.T) {
	texts := genTexts(t, 20000)
	defer func(f, m int) { frontSlots, memoMax = f, m }(frontSlots, memoMax)
	for _, size := range []struct{ front, memo int }{{1, 3}, {4, 1000}, {frontSlots, memoMax}} {
		frontSlots, memoMax = size.front, size.memo
		a := NewAnalyzer()
		for i, text := range texts {
			pair := []string{text, texts[(i*7)%len(texts)]}
			for _, in := range [][]string{{text}, pair} {
				got, n := a.Joined(in...)
				want, wn := joinedRef(in...)
				if got != want || n != wn {
					t.Fatalf("front %d, memo %d: Joined(%q) = %q, %d; want %q, %d", size.front, size.memo, in, got, n, want, wn)
				}
			}
		}
		if len(a.front) != size.front || len(a.memo) > size.memo {
			t.Errorf("front %d, memo %d: %d slots, %d terms kept", size.front, size.memo, len(a.front), len(a.memo))
		}
	}
	t.Run("coding", func(t *testing.T) {
		a := NewAnalyzer()
		for _, text := range codingTexts(t) {
			got, n := a.Joined(text)
			want, wn := joinedRef(text)
			if got != want || n != wn {
				t.Fatalf("Joined(%.200q…) differs: %d terms, want %d", text, n, wn)
			}
		}
	})
}

// TestFrontKeyNamesWord: two words of at most frontKeyBytes have the same
// key and length only when they are the same word.
func TestFrontKeyNamesWord(t *testing.T) {
	type key struct {
		k0, k1 uint64
		n      int
	}
	seen := map[key]string{}
	words := genTexts(t, 3000)
	for _, text := range words {
		for i := 0; i < len(text); i++ {
			for j := i + 1; j <= min(len(text), i+frontKeyBytes); j++ {
				w := text[i:j]
				k0, k1 := frontKey(w)
				k := key{k0, k1, len(w)}
				if o, ok := seen[k]; ok && o != w {
					t.Fatalf("frontKey(%q) = frontKey(%q)", w, o)
				}
				seen[k] = w
			}
		}
	}
}
