package distill

import (
	"math/rand"
	"strings"
	"testing"
)

// errorScoreRef is errorScore as it was before hasErrorCue (session 21).
func errorScoreRef(line string) int {
	if len(line) < 6 {
		return 0
	}
	if len(line) > 400 {
		line = line[:400]
	}
	if isCodeLine(line) {
		return 0
	}
	if errorStart(line) < 0 || notErrorRe().MatchString(line) {
		return 0
	}
	return 1
}

// hasErrorCueRef is whether some rule's cue is in line, as errorStart asks.
func hasErrorCueRef(line string) bool {
	for _, r := range errorRules() {
		for _, c := range r.cues {
			if strings.Contains(line, c) {
				return true
			}
		}
	}
	return false
}

// TestHasErrorCueIsContains: hasErrorCue is some cue's strings.Contains,
// and errorScore is errorScoreRef, on lines made of the cues (whole, cut,
// at the start and the end), errors, code lines and other bytes (the seed
// is logged), and on every line of the coding corpus when it is present.
func TestHasErrorCueIsContains(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	var pieces []string
	for _, rule := range errorRules() {
		for _, c := range rule.cues {
			pieces = append(pieces, c, c[:len(c)-1], c[1:], c[:2])
		}
	}
	pieces = append(pieces, " ", "e", "E", "r", "rro", "x", "\xe2", "\xe2\x9c", "✓", "error: boom", "TypeError: x",
		"console.error(", "0 errors", "--- FAIL: TestX", "exit code 2", ");", "{", "+ ", "é", strings.Repeat("a", 390))
	lines := []string{"", "rr", "rror", "xit", "ERR", "✕", "\xe2\x9c"}
	for range 40000 {
		var b strings.Builder
		for range r.Intn(10) {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		lines = append(lines, b.String())
	}
	check := func(line string) {
		if got, want := hasErrorCue(line), hasErrorCueRef(line); got != want {
			t.Fatalf("hasErrorCue(%q) = %v, want %v", line, got, want)
		}
		if got, want := errorScore(line), errorScoreRef(line); got != want {
			t.Fatalf("errorScore(%q) = %d, want %d", line, got, want)
		}
	}
	for _, line := range lines {
		check(line)
	}
	t.Run("coding", func(t *testing.T) {
		n := 0
		for _, ex := range loadExchanges(t, codingGlob) {
			for _, turn := range ex.Turns {
				for line := range strings.SplitSeq(turn.Text, "\n") {
					check(line)
					n++
				}
			}
		}
		t.Logf("%d lines", n)
	})
}
