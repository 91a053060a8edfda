package redact

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/redact/redacttest"
)

// fromTexts are made multi-line texts for TestDetectFromIsWhole:
// lines of prose, code and noise, and lines where generic-api-key may
// match (keywords with and without a tail, with up to 60 bytes of
// [\w.-] before them, the operator and value on the next lines, values of
// either form, CRLF endings, folding runes on any line, "gitleaks:allow"),
// from a logged seed (REDACT_SEED replays it).
func fromTexts(t testing.TB, n int) []string {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REDACT_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("REDACT_SEED: %v", err)
		}
	}
	t.Logf("seed %d (REDACT_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 11))
	g := redacttest.NewGen(seed, 9)
	words := append(genericWords, "API", "Api", "aPI", "KEY", "Password", "TOKEN", "Secret", "monkey", "keyword", "tokens")
	prose := []string{"Let me check the build.", "func main() {", "\t}", "", "    at Object.<anonymous> (index.js:3:1)",
		"- [x] done", "## Notes", "é è ü", "see https://example.com/a?b=c", "x := 1", "gitleaks:allow", "\u212a", "\u017f"}
	ends := []string{"\n", "\n", "\n", "\r\n", "\n\n"}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for lines := 1 + r.IntN(14); lines > 0; lines-- {
			switch r.IntN(3) {
			case 0:
				b.WriteString(prose[r.IntN(len(prose))])
			case 1:
				b.WriteString(g.S(redacttest.Alnum+" _.-", r.IntN(70)))
			default:
				b.WriteString(strings.Repeat(" ", r.IntN(5)))
				b.WriteString(g.S(redacttest.Alnum+"_.-", []int{0, 3, 20, 49, 50, 51, 60}[r.IntN(7)]))
				b.WriteString(words[r.IntN(len(words))])
				b.WriteString(strings.Repeat([]string{" ", "_", ".", "\t"}[r.IntN(4)], r.IntN(24)))
				b.WriteString([]string{"", "\n", "\"", "'\n", "\n\n", "\r\n"}[r.IntN(6)])
				b.WriteString([]string{"=", ":", "=>", "::=", ",", "||", "?=", ">", ";", " "}[r.IntN(10)])
				b.WriteString([]string{"", " ", "\n", " '", "`", "=\n", "  \"", "\n\n\n"}[r.IntN(8)])
				switch r.IntN(3) {
				case 0:
					b.WriteString(g.S(redacttest.Alnum+"_.=-", 6+r.IntN(40)))
				case 1:
					b.WriteString(strings.ToLower(g.S(redacttest.B64, 8+r.IntN(40))) + strings.Repeat("=", r.IntN(4)))
				default:
					b.WriteString(g.S(redacttest.B64+"_.=-", 140+r.IntN(20)))
				}
				b.WriteString([]string{"", " ", ";", "`", "'", `\n`, "x", "\""}[r.IntN(8)])
			}
			b.WriteString(ends[r.IntN(len(ends))])
		}
		s := b.String()
		if r.IntN(3) == 0 {
			s = strings.TrimRight(s, "\r\n")
		}
		out = append(out, s)
	}
	return out
}

// TestDetectFromIsWhole: generic-api-key's detector given a fragment cut
// where genericFrom says (detectFrom) finds what it finds in the whole
// fragment, field for field (lines, columns, line text, match, secret,
// entropy), wherever mayGeneric holds: on made texts, the edge texts of
// the necessary conditions and every fragment of the coding corpus's turn
// texts (when /work/shared is there; with GIT_MEM_HEAVY=1 its canonical
// forms too). And the texts cut something and find something.
func TestDetectFromIsWhole(t *testing.T) {
	sd, err := split()
	if err != nil {
		t.Fatal(err)
	}
	var h *hotRule
	for i := range sd.hot {
		if sd.hot[i].from != nil {
			h = &sd.hot[i]
		}
	}
	if h == nil {
		t.Fatal("no hot rule is cut (generic-api-key's regexp changed?)")
	}
	texts := append(fromTexts(t, 4000), necessaryTexts(t)...)
	corpus := 0
	eachCodingExchange(t, func(ex *exchange.Exchange) error {
		if os.Getenv("GIT_MEM_HEAVY") != "" {
			texts = append(texts, string(ex.Canonical()))
		}
		for _, tu := range ex.Turns {
			texts = append(texts, tu.Text)
		}
		corpus++
		return nil
	})
	var may, cut, found, bytesCut, bytes int
	for _, text := range texts {
		fragments(text, func(frag string) {
			lower := asciiLower(frag)
			at := genericFrom(frag, lower)
			if (at >= 0) != mayGeneric(frag, lower) {
				t.Fatalf("%q: genericFrom %d, mayGeneric %v", frag, at, mayGeneric(frag, lower))
			}
			if at < 0 {
				return
			}
			may++
			if at > 0 {
				cut++
				if frag[at] != '\n' {
					t.Fatalf("%q: cut at %d, a %q", frag, at, frag[at])
				}
			}
			bytes += len(frag)
			bytesCut += at
			want := h.d.DetectString(frag)
			got := detectFrom(h.d, frag, at)
			found += len(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fragment %q cut at %d:\ncut   %+v\nwhole %+v", frag, at, got, want)
			}
		})
	}
	t.Logf("%d texts (%d corpus exchanges): %d fragments may match, %d cut (%d of %d bytes), %d findings",
		len(texts), corpus, may, cut, bytesCut, bytes, found)
	if cut < 1000 || found < 500 {
		t.Errorf("%d fragments cut, %d findings: too few to test", cut, found)
	}
}
