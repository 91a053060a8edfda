package embed

import (
	"math/rand"
	"slices"
	"testing"
)

// TestSplitASCIIMatchesRunes: the ASCII fast path must cut every word where
// the rune path does, or terms (and so every index) would change.
func TestSplitASCIIMatchesRunes(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	const alphabet = "abcXYZ019_.-/:"
	words := []string{"", "a", "authMiddleware", "HTTPServer", "retry_timeout", "v2", "x86_64", "pkg/errors",
		"auth_middleware.go", "ABC", "aB", "Ab", "9a", "a9", "__", "..", "getHTTPResponseCode2", "snake_Case-42x"}
	for range 2000 {
		b := make([]byte, 1+r.Intn(16))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		words = append(words, string(b))
	}
	for _, w := range words {
		if got, want := splitASCII(w), splitRunes(w); !slices.Equal(got, want) {
			t.Fatalf("splitASCII(%q) = %q, splitRunes = %q", w, got, want)
		}
	}
}

func BenchmarkSplitIdent(b *testing.B) {
	words := []string{"the", "authMiddleware", "sessionTTL", "retry_timeout", "src/auth/middleware.ts", "TypeError", "properties"}
	for _, f := range []struct {
		name  string
		split func(string) []string
	}{{"ascii", splitASCII}, {"runes", splitRunes}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				for _, w := range words {
					f.split(w)
				}
			}
		})
	}
}
