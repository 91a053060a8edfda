package distill

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/gitmem/git-mem/exchange"
)

// codeSpan is a backtick span of a card; codeWord a word with code
// punctuation (a path, a glob, a call, a flag): both must be the
// exchange's own bytes.
var (
	codeSpan = regexp.MustCompile("`[^`]+`")
	codeWord = regexp.MustCompile(`[^\s` + "`" + `"'(),]*[*/_{}=<>\[\]][^\s` + "`" + `"'(),]*`)
)

// cardCodeFaults lists what of the card's code is not copied byte for byte
// from the exchange: a code span or code-like word not in its text, a
// command whose case changed, an emoji of the text that the card lost
// while it kept the sentence around it. A span cut by the card's length
// limit (ending in …) must be a prefix of the exchange's span.
func cardCodeFaults(ex *exchange.Exchange, c exchange.Card) []string {
	text := ex.Render()
	var faults []string
	for _, field := range []string{c.Core, c.Context} {
		for _, s := range codeSpan.FindAllString(field, -1) {
			if !strings.Contains(text, s) {
				faults = append(faults, "span "+s)
			}
		}
		rest := codeSpan.ReplaceAllString(field, " ")
		for _, w := range codeWord.FindAllString(rest, -1) {
			w = strings.TrimRight(w, ".:;!?…")
			if w == "" || !strings.ContainsFunc(w, unicode.IsLetter) || strings.HasSuffix(w, "…") {
				continue
			}
			if !strings.Contains(text, w) {
				faults = append(faults, "word "+w)
			}
		}
		if f := strings.Fields(field); len(f) > 0 {
			first := strings.ToLower(f[0])
			if commands[first] && f[0] != first && !strings.Contains(text, f[0]) && regexp.MustCompile(`(^|\s)`+regexp.QuoteMeta(first)+`\b`).MatchString(text) {
				faults = append(faults, "command capitalised "+f[0])
			}
		}
	}
	return faults
}

// TestCardsCopyCodeExactly distills every real coding exchange and checks
// that each card's code is the exchange's own bytes (issue 15: globs lost
// their stars, `pwd` became "Pwd").
func TestCardsCopyCodeExactly(t *testing.T) {
	exs := loadExchanges(t, codingGlob)
	var h Heuristic
	bad, spans := 0, 0
	for _, ex := range exs {
		c, err := h.Distill(t.Context(), ex)
		if err != nil {
			t.Fatal(err)
		}
		spans += len(codeSpan.FindAllString(c.Core+c.Context, -1))
		if f := cardCodeFaults(ex, c); len(f) > 0 {
			bad++
			if bad <= 20 {
				t.Errorf("%s: %s\n  core: %s\n  ctx:  %s", ex.ID, strings.Join(f, "; "), c.Core, c.Context)
			}
		}
	}
	t.Logf("%d cards, %d code spans, %d with code not copied exactly", len(exs), spans, bad)
}

// TestCardCodeFaults checks the checker itself on made-up cards.
func TestCardCodeFaults(t *testing.T) {
	ex := &exchange.Exchange{ID: "x", Turns: []exchange.Turn{
		{Role: exchange.RoleUser, Text: "run `chmod +x scripts/*.sh` then pwd, and fix src/a_b.go ✅"},
		{Role: exchange.RoleAssistant, Text: "Done."},
	}}
	for _, c := range []struct {
		core string
		want int
	}{
		{"Ran `chmod +x scripts/*.sh` and fixed src/a_b.go", 0},
		{"Ran `chmod +x scripts/.sh`", 1},
		{"Fixed src/ab.go and scripts/.sh", 2},
		{"Pwd then fixed it", 1},
		{"pwd then fixed it", 0},
	} {
		if got := cardCodeFaults(ex, exchange.Card{Core: c.core}); len(got) != c.want {
			t.Errorf("%q: faults %v, want %d", c.core, got, c.want)
		}
	}
}
