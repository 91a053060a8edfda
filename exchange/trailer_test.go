package exchange

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// trailerLineRef is the regexp trailerKV stands for.
var trailerLineRef = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*): (.*)$`)

// TestTrailerKVIsRegexp holds trailerKV to the regexp it replaced: the same
// match, key and value on made lines (key bytes, ':' and ' ' around where
// the key ends, newlines, CR, non-ASCII and invalid UTF-8) and fixed ones.
func TestTrailerKVIsRegexp(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	lines := []string{"", ":", ": ", "a", "a:", "a: ", "a:  b", "A-1: v", "1a: v", "-a: v", "a-: v",
		"a :v", "a: v\nb: w", "a: v\n", "\na: v", "é: v", "aé: v", "a: é\xff", "a\xff: v", "Exchange: x",
		"Room: concept:auth", "a:: v", "a: : v", "a\t: v", "a:\tv", "Z9: \r", "_a: v"}
	pieces := []string{"a", "Z", "q", "0", "9", "-", ":", " ", ": ", "\n", "\r", "\t", "é", "\xff", "_", ".", "Room", "File: "}
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		lines = append(lines, b.String())
	}
	for _, line := range lines {
		k, v, ok := trailerKV(line)
		sm := trailerLineRef.FindStringSubmatch(line)
		if ok != (sm != nil) || ok && (k != sm[1] || v != sm[2]) {
			t.Fatalf("trailerKV(%q) = %q, %q, %v; the regexp: %q", line, k, v, ok, sm)
		}
	}
}
