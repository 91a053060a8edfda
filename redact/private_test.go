package redact

import (
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

func TestCutPrivate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"no tags here", "no tags here"},
		{"a <private>my salary is 90k</private> b", "a " + PrivateMark + " b"},
		{"<PRIVATE>x</Private>y<private>z</private>", PrivateMark + "y" + PrivateMark},
		{"keep <private>cut\nacross lines</private>\nkeep", "keep " + PrivateMark + "\nkeep"},
		{"unterminated <private>cut to the end\nof the turn", "unterminated " + PrivateMark},
		{"a < b and <privacy> is not a tag", "a < b and <privacy> is not a tag"},
		{"</private> alone stays", "</private> alone stays"},
	} {
		got, n := cutPrivate(c.in)
		if got != c.want {
			t.Errorf("cutPrivate(%q) = %q, want %q", c.in, got, c.want)
		}
		if (n > 0) != (got != c.in) {
			t.Errorf("cutPrivate(%q): count %d", c.in, n)
		}
	}
}

// Private spans are cut in every turn and every string of a tool call, and
// before the layers run: a secret inside one leaves no trace, not even as a
// value learned and replaced elsewhere.
func TestExchangeCutsPrivateEverywhere(t *testing.T) {
	ex := &exchange.Exchange{Session: "s", Turns: []exchange.Turn{
		{Role: "user", Text: "deploy it <private>the staging box is 10.0.0.7</private> now"},
		{Role: "tool", Name: "Bash", Input: map[string]any{"command": "echo <private>hush-input</private>", "args": []any{"<private>hush-arg"}},
			Text: "output <private>hush-output", Extra: map[string]any{"stderr": "<private>hush-extra</private>"}},
		{Role: "assistant", Text: "Done.<private>hush-reply</private>"},
	}}
	if n := Exchange(ex); n < 6 {
		t.Errorf("Exchange counted %d cuts, want 6", n)
	}
	got := string(ex.Canonical())
	for _, s := range []string{"10.0.0.7", "hush", "<private>", "</private>"} {
		if strings.Contains(got, s) {
			t.Errorf("%q survived: %s", s, got)
		}
	}
	if !strings.Contains(got, "deploy it "+PrivateMark+" now") {
		t.Errorf("text around a private span lost: %s", got)
	}
}
