package embed

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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
// joiners, Unicode letters and digits, invalid UTF-8 and long runs.
func TestWordsIsRef(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	pieces := []string{"a", "Z", "9", "_", ".", "/", "-", ":", " ", "\n", "\t", ",", "(", "authMiddleware", "HTTPServer",
		"x86_64", "pkg/errors", "é", "É", "ß", "İ", "\u212a", "٣", "中文", "ｆｕｌｌ", "\xff", "\xe2\x82", "\u00a0",
		"\u2028", "\ufffd", "src/auth/middleware.ts", strings.Repeat("ab", 40), strings.Repeat("9", 70), "getHTTPResponseCode2",
		"The", "tests", "Q", "Running"} // the last: plain words, which Words does not split
	texts := []string{"", "a", ".", "a.", ".a", "a..b", "a.-b", "é.b", "a/\xff", strings.Repeat("x", 65), strings.Repeat("x", 64)}
	for range 20000 {
		var b strings.Builder
		for range r.Intn(24) {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		texts = append(texts, b.String())
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
