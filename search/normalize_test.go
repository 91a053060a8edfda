package search

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

// normalizeRef is normalize's definition: the signatures stored in every
// index hash its output, so normalize must never differ from it.
func normalizeRef(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), unicode.IsSpace), " ")
}

// TestNormalizeIsRef holds normalize to its definition (normalizeRef) on
// random texts mixing ASCII, every kind of space, upper-case letters that
// lower-case to other lengths or to ASCII (İ, K KELVIN SIGN), invalid
// UTF-8 and U+FFFD: a signature that changed would no longer match the
// ones stored in existing indexes.
func TestNormalizeIsRef(t *testing.T) {
	pieces := []string{"a", "Fix", "HOOK", "x1", " ", "  ", "\t", "\n", "\r\n", "\v", "\f", "\u00a0", "\u0085",
		"\u2003", "\u3000", "\u1680", "É", "é", "Σ", "ς", "İ", "\u212a", "\u017f", "日本", "\ufffd", "\xff", "\xe2\x82", "\xc0", "—", "✅", ""}
	rng := rand.New(rand.NewPCG(5, 6))
	texts := []string{"", " ", "a", " A  b ", "\xff", "İ"}
	for n := 0; n < 50000; n++ {
		var b strings.Builder
		for k := rng.IntN(40); k > 0; k-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		if got, want := normalize(s), normalizeRef(s); got != want {
			t.Fatalf("normalize(%q) = %q, want %q", s, got, want)
		}
	}
}

// BenchmarkNormalize: a text as exchanges hold them (prose, code with
// indentation and identifiers, a stack trace line, a non-ASCII rune).
func BenchmarkNormalize(b *testing.B) {
	text := strings.Repeat("Please fix the auth middleware — TypeError: Cannot read properties of undefined (reading 'sessionTTL')\n"+
		"    at Object.handler (/app/src/middleware/auth.ts:42:17)\n\tfunc (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {\n"+
		"        if err := s.auth(r); err != nil { return }\n", 60)
	for b.Loop() {
		normalize(text)
	}
}
