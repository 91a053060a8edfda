package embed

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// AnalyzerVersion names the text pipeline below. Both the BM25 index and the
// builtin embedder depend on it, so it is part of the index schema: change it
// and every index must be rebuilt.
const AnalyzerVersion = "ident-snowball/2"

// MaxWordBytes bounds one emitted term: longer runs (hashes, base64) are only
// indexed by their parts.
const MaxWordBytes = 64

var stopWords = sync.OnceValue(func() analysis.TokenMap {
	m := analysis.NewTokenMap()
	if err := m.LoadBytes(en.EnglishStopWords); err != nil {
		panic("embed: English stop list: " + err.Error()) // compiled-in data
	}
	return m
})

// Words splits text into raw identifier-aware words: a word is a run of
// letters, digits and '_' that may be joined by '.', '/', '-' or ':' (so
// auth_middleware.go, pkg/errors and retryTimeout stay whole). Each whole
// word is followed by its parts when it has any (split on the joiners, '_',
// camelCase and letter/digit boundaries), so a search for "middleware" finds
// "authMiddleware" and a search for "authMiddleware" ranks the exact
// identifier first. Case is kept; Analyze lower-cases.
func Words(text string, emit func(w string, part bool)) {
	// parts is reused from word to word: a slice per word was most of
	// what Words allocated in `git mem add` (the parts are substrings of
	// the text, so emit may keep them).
	//
	// The loops test ASCII bytes in line (asciiWord) and call out only
	// for the others (session 27: runeAt and isWordRune were calls at
	// every byte).
	var parts []string
	i := 0
	for i < len(text) {
		if c := text[i]; c < utf8.RuneSelf {
			if !asciiWord[c] {
				i++
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(text[i:]); !isWordRune(r) {
			i += size
			continue
		}
		start := i
		end := i
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf && asciiWord[c] {
				i++
				end = i
				continue
			}
			if c >= utf8.RuneSelf {
				r, size := utf8.DecodeRuneInString(text[i:])
				if isWordRune(r) {
					i += size
					end = i
					continue
				}
				break // not a joiner: they are ASCII
			}
			if isJoiner(rune(c)) && i+1 < len(text) {
				if c2 := text[i+1]; c2 < utf8.RuneSelf && asciiWord[c2] || c2 >= utf8.RuneSelf && isWordRune(firstRune(text[i+1:])) {
					i++
					continue
				}
			}
			break
		}
		word := text[start:end]
		parts = parts[:0]
		if !plainWord(word) { // a plain word is its one part: not split
			parts = splitIdentInto(parts, word)
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
			// stopped on a joiner that ends the word
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
		}
	}
}

// plainWord: w is an ASCII letter followed by lower-case ASCII letters,
// which splitIdentInto keeps whole (no joiner, '_', digit or case change
// to cut at): most words of a text, and testing it is cheaper than the
// split (which was a quarter of Words' time in `git mem add`).
func plainWord(w string) bool {
	if len(w) == 0 || !isLetterASCII(w[0]) {
		return false
	}
	for j := 1; j < len(w); j++ {
		if !isLowerASCII(w[j]) {
			return false
		}
	}
	return true
}

// firstRune is the first rune of s, as utf8.DecodeRuneInString says.
func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// asciiWord[c] is isWordRune(rune(c)) for ASCII c: unicode.IsLetter and
// IsDigit hold there for A-Z, a-z and 0-9 only (TestIsWordRuneASCII).
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

func isWordRune(r rune) bool {
	if 0 <= r && r < utf8.RuneSelf {
		return asciiWord[r]
	}
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isJoiner(r rune) bool { return r == '.' || r == '/' || r == '-' || r == ':' }

// splitIdentInto cuts an identifier on joiners, '_', lower→Upper
// (camelCase), UPPER→Upper+lower (HTTPServer → HTTP Server) and
// letter/digit changes, appending the parts to parts.
func splitIdentInto(parts []string, w string) []string {
	if isASCII(w) {
		return splitASCIIInto(parts, w)
	}
	return append(parts, splitRunes(w)...)
}

func splitRunes(w string) []string {
	var parts []string
	rs := []rune(w)
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, string(rs[start:end]))
		}
		start = end
	}
	for j := 0; j < len(rs); j++ {
		r := rs[j]
		if r == '_' || isJoiner(r) {
			flush(j)
			start = j + 1
			continue
		}
		if j == start {
			continue
		}
		p := rs[j-1]
		switch {
		case unicode.IsLower(p) && unicode.IsUpper(r):
			flush(j)
		case unicode.IsUpper(p) && unicode.IsUpper(r) && j+1 < len(rs) && unicode.IsLower(rs[j+1]):
			flush(j)
		case unicode.IsDigit(p) != unicode.IsDigit(r) && (unicode.IsLetter(p) || unicode.IsLetter(r)):
			flush(j)
		}
	}
	flush(len(rs))
	return parts
}

// splitASCII is splitIdent for ASCII words (nearly all of them), on bytes
// and returning substrings of w: the rune slice and a string per part were
// a quarter of Words' time in `git mem add` (docs/BENCHMARKS.md, "Adding").
func splitASCII(w string) []string { return splitASCIIInto(nil, w) }

// splitASCIIInto is splitASCII appending the parts to parts.
func splitASCIIInto(parts []string, w string) []string {
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, w[start:end])
		}
		start = end
	}
	for j := 0; j < len(w); j++ {
		c := w[j]
		if c == '_' || isJoiner(rune(c)) {
			flush(j)
			start = j + 1
			continue
		}
		if j == start {
			continue
		}
		p := w[j-1]
		switch {
		case isLowerASCII(p) && isUpperASCII(c):
			flush(j)
		case isUpperASCII(p) && isUpperASCII(c) && j+1 < len(w) && isLowerASCII(w[j+1]):
			flush(j)
		case isDigitASCII(p) != isDigitASCII(c) && (isLetterASCII(p) || isLetterASCII(c)):
			flush(j)
		}
	}
	flush(len(w))
	return parts
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isLowerASCII(c byte) bool  { return 'a' <= c && c <= 'z' }
func isUpperASCII(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isDigitASCII(c byte) bool  { return '0' <= c && c <= '9' }
func isLetterASCII(c byte) bool { return isLowerASCII(c) || isUpperASCII(c) }

// Analyze is the one text pipeline of git mem search: Words, lower case,
// English stop words removed, Snowball English stemming. Identifiers and
// paths are kept whole (lower-cased, not stemmed) besides their stemmed
// parts. It feeds the BM25 index (as pre-analysed terms), the query side and
// the builtin embedder, so they can never disagree.
func Analyze(text string) []string {
	return NewAnalyzer().Analyze(text)
}

// Analyzer is Analyze with a memo of word → term (stemming is most of the
// cost and coding vocabulary repeats). Not safe for concurrent use: give each
// goroutine its own.
type Analyzer struct {
	memo  map[string]string
	buf   []byte      // Joined's, reused
	front []frontSlot // Joined's front of the memo, made by it
	// the builtin embedder's, reused: a text's features, a word's grams
	tf     map[uint64]float64
	gram   []byte
	gramAt []int
}

// memoMax bounds an Analyzer's memo: one that reaches it is emptied (a
// variable for the tests).
var memoMax = 200_000

// NewAnalyzer returns an Analyzer with an empty memo.
func NewAnalyzer() *Analyzer { return &Analyzer{memo: map[string]string{}} }

// Analyze is the package-level Analyze.
func (a *Analyzer) Analyze(text string) []string {
	var out []string
	Words(text, func(w string, part bool) {
		if t := a.Term(w); t != "" {
			out = append(out, t)
		}
	})
	return out
}

// Joined returns strings.Join of the terms of texts (Analyze of each in
// turn, one list) with single spaces, and how many terms there are: what
// the index stores of a field, without a slice of the terms (growing it was
// most of what the index's analysis allocated in `git mem add`).
//
// Words of up to frontKeyBytes go through a front before the memo: a
// direct-mapped table whose slot holds the word's bytes and its term, one
// load and two compares where a hit in the memo's map hashed the word,
// probed a group and compared the key's bytes at another address (5.2 M
// hits, ~0.3 s of the coding add's analysis; docs/BENCHMARKS.md, session
// 21). The front is our own code because a map cannot keep its keys and
// values inline; it holds only what the memo would answer (a slot is
// overwritten, never trusted for another word: frontKey names the word).
func (a *Analyzer) Joined(texts ...string) (string, int) {
	if a.front == nil {
		a.front = make([]frontSlot, frontSlots)
	}
	front, mask := a.front, uint64(len(a.front)-1)
	b := a.buf[:0]
	n := 0
	for _, text := range texts {
		Words(text, func(w string, part bool) {
			if len(w) <= frontKeyBytes {
				k0, k1 := frontKey(w)
				s := &front[frontHash(k0, k1, len(w))&mask]
				if s.klen != uint8(len(w)) || s.k0 != k0 || s.k1 != k1 {
					t := a.Term(w)
					if len(t) > len(s.terms) {
						if n > 0 {
							b = append(b, ' ')
						}
						b = append(b, t...)
						n++
						return
					}
					s.k0, s.k1, s.klen, s.tlen = k0, k1, uint8(len(w)), uint8(len(t))
					copy(s.terms[:], t)
				}
				if s.tlen > 0 {
					if n > 0 {
						b = append(b, ' ')
					}
					b = append(b, s.terms[:s.tlen]...)
					n++
				}
				return
			}
			if t := a.Term(w); t != "" {
				if n > 0 {
					b = append(b, ' ')
				}
				b = append(b, t...)
				n++
			}
		})
	}
	a.buf = b
	return string(b), n
}

// frontSlot is one entry of Joined's front of the term memo: a word of at
// most frontKeyBytes (its bytes in k0 and k1, see frontKey, and its
// length; klen 0 is an empty slot) and its term, held in the slot (tlen 0:
// the word is dropped). 48 bytes.
type frontSlot struct {
	k0, k1 uint64
	klen   uint8
	tlen   uint8
	terms  [30]byte
}

// frontKeyBytes is the longest word the front holds; frontSlots its size
// (a power of two; a variable for the tests).
const frontKeyBytes = 16

var frontSlots = 8192

// frontKey is a word of 1–16 bytes as two words: its first 8 bytes and its
// last 8 (overlapping below 16) or, below 8 bytes, its bytes and 0. With
// the length they name the word: every byte is in one of them.
func frontKey(w string) (k0, k1 uint64) {
	if len(w) >= 8 {
		b := unsafe.Slice(unsafe.StringData(w), len(w))
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[len(b)-8:])
	}
	for i := len(w) - 1; i >= 0; i-- {
		k0 = k0<<8 | uint64(w[i])
	}
	return k0, 0
}

// frontHash spreads a key over the front.
func frontHash(k0, k1 uint64, n int) uint64 {
	h := (k0 ^ bits.RotateLeft64(k1, 29) ^ uint64(n)) * 0x9e3779b97f4a7c15
	return h>>40 ^ h>>20
}

// Term is the package-level Term, memoised.
func (a *Analyzer) Term(w string) string {
	if t, ok := a.memo[w]; ok {
		return t
	}
	// The memo keeps a copy of the word, not the word (a substring of
	// the text): comparing a key reads its bytes, and the copies lie
	// together in a few pages, the common words' in cache, where the
	// texts' bytes lie anywhere (the look-ups were 0.38 of the ~7.4 CPU-s
	// of `git mem add` of the coding corpus). Term of the copy returns
	// the copy itself, or part of it, where it keeps the word's bytes.
	w = strings.Clone(w)
	t := Term(w)
	if len(a.memo) >= memoMax {
		clear(a.memo)
	}
	a.memo[w] = t
	return t
}

// Term normalises one word as Analyze does; "" means the word is dropped.
func Term(w string) string {
	w = strings.ToLower(w)
	if _, stop := stopWords()[w]; stop {
		return ""
	}
	if strings.ContainsAny(w, "./-:_") {
		return w // an identifier or path: keep it exact
	}
	w = American(w)
	env := snowballstem.NewEnv(w)
	english.Stem(env)
	return env.Current()
}
