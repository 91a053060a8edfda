package distill

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shoutingBefore is shouting before session 27, the oracle of
// TestShoutingIsBefore.
func shoutingBefore(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, ".,;:!?()*\"'")
		if len(w) >= 4 && strings.ToUpper(w) == w && hasLetter(w) && !hasDigit(w) && !strings.ContainsAny(w, "_.") {
			n++
		}
	}
	return n
}

// TestShoutingIsBefore: shouting counts what the former code counted, and
// upperCased is strings.ToUpper(w) == w, on made sentences (upper, lower
// and title case words, the trimmed punctuation, digits, '_' and '.',
// letters whose upper case differs in length or that have none, U+FFFD,
// invalid bytes, Unicode spaces; seed logged, DISTILL_SEED replays it)
// and on every line of the coding corpus's turns (when there).
func TestShoutingIsBefore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("DISTILL_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("DISTILL_SEED: %v", err)
		}
	}
	t.Logf("seed %d (DISTILL_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 23))
	pieces := []string{"WARNING", "Note", "ERROR", "NEVER", "MUST", "API", "HTTP", "ok", "done", "(IMPORTANT)", "\"STOP\"",
		"'QUOTE'", "*BOLD*", "V2ID", "SNAKE_CASE", "A.B.C", "ÉCOLE", "école", "STRASSE", "straße", "ǅAMA", "ǄAMA", "ΣΟΦΙΑ",
		"ﬁNE", "İSTANBUL", "\ufffd\ufffdAB", "AB\xffCD", "\xe2\x82ABCD", "日本語ABC", "Ⅻ", "ⅫABCD", ".", ",", "!?", " ", "  ", "\t",
		"\u00a0", "\u2003", "\n", "1234", "ABCD1", "abcd"}
	var texts []string
	for len(texts) < 50000 {
		var b strings.Builder
		for k := r.IntN(16); k > 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
	}
	texts = append(texts, codingLines(t)...)
	shouts := 0
	for _, s := range texts {
		got, want := shouting(s), shoutingBefore(s)
		if got != want {
			t.Fatalf("shouting(%q) = %d, before %d", s, got, want)
		}
		shouts += want
		for w := range strings.FieldsSeq(s) {
			if upperCased(w) != (strings.ToUpper(w) == w) {
				t.Fatalf("upperCased(%q) = %v", w, upperCased(w))
			}
		}
	}
	t.Logf("%d texts, %d shouted words", len(texts), shouts)
	if shouts < 10000 {
		t.Errorf("%d shouted words: too few to test", shouts)
	}
}

// codingLines are the lines of the coding corpus's turn texts, none when
// the corpus is absent.
func codingLines(t *testing.T) []string {
	if files, _ := filepath.Glob(codingGlob); len(files) == 0 {
		return nil
	}
	var out []string
	for _, ex := range loadExchanges(t, codingGlob) {
		for _, tu := range ex.Turns {
			for l := range strings.Lines(tu.Text) {
				out = append(out, l)
			}
		}
	}
	return out
}
