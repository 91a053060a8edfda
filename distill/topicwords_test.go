package distill

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// TestTopicWordsIsFieldsFunc: topicWords cuts the same fields as the
// former strings.FieldsFuncSeq, and trimDotsDashes is strings.Trim(w,
// ".-"), on made texts (ASCII and Unicode letters and digits, '-', '.',
// '_', punctuation, invalid bytes, U+FFFD, Unicode spaces; seed logged,
// DISTILL_SEED replays it) and the coding corpus's lines (when there).
func TestTopicWordsIsFieldsFunc(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("DISTILL_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("DISTILL_SEED: %v", err)
		}
	}
	t.Logf("seed %d (DISTILL_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 29))
	pieces := []string{"auth", "Docker", "k8s", "-", ".", "..", "-.", "_", " ", "\n", "/", "é", "ß", "日本", "٣", "Ⅻ", "\ufffd",
		"\xff", "\xe2\x82", "\u00a0", "\u2003", "node.js", "--flag", "v1.2-rc", ",", "(", "\u212a", "İ"}
	var texts []string
	for len(texts) < 30000 {
		var b strings.Builder
		for k := r.IntN(20); k > 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	texts = append(texts, codingLines(t)...)
	f := func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '.' }
	words := 0
	for _, s := range texts {
		for _, s := range []string{s, strings.ToLower(s)} {
			got := slices.Collect(topicWords(s))
			want := slices.Collect(strings.FieldsFuncSeq(s, f))
			if !slices.Equal(got, want) {
				t.Fatalf("%q: topicWords %q, FieldsFuncSeq %q", s, got, want)
			}
			for _, w := range want {
				if trimDotsDashes(w) != strings.Trim(w, ".-") {
					t.Fatalf("trimDotsDashes(%q) = %q", w, trimDotsDashes(w))
				}
			}
			words += len(want)
		}
	}
	t.Logf("%d texts, %d words", len(texts), words)
}
