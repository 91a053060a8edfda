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

// TestLinesRulesFindTheSame: the rules made to run line by line in
// session 27 (openai-api-key, bearer-token: no match spans a '\n', no ^
// or $) find the same spans, in the same order, as when their regexp ran
// over the whole string, on made texts (their literals at line starts,
// after word bytes, values of 15-30 bytes of their classes cut by '\n',
// "\r\n", ' ' and '=', texts ending without '\n'; seed logged, REDACT_SEED
// replays it) and on the coding corpus's turn texts and canonical forms
// (when /work/shared is there).
func TestLinesRulesFindTheSame(t *testing.T) {
	var rs []rule
	for _, r := range rules() {
		if r.kind == "openai-api-key" || r.kind == "bearer-token" {
			if !r.lines {
				t.Fatalf("%s does not run line by line", r.kind)
			}
			rs = append(rs, r)
		}
	}
	if len(rs) != 2 {
		t.Fatalf("%d of the two rules", len(rs))
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REDACT_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("REDACT_SEED: %v", err)
		}
	}
	t.Logf("seed %d (REDACT_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 5))
	g := redacttest.NewGen(seed, 6)
	heads := []string{"sk-", "sk-proj-", "sk-svcacct-", "sk-None-", "Bearer ", "bearer ", "earer ", "BEARER ", "xsk-", "_sk-", "a Bearer "}
	cuts := []string{"\n", "\r\n", " ", "=", "==\n", "\n\n", "", "sk-", ".", "é"}
	var texts []string
	for len(texts) < 20000 {
		var b strings.Builder
		for k := 1 + r.IntN(6); k > 0; k-- {
			if r.IntN(3) == 0 {
				b.WriteString(g.S(redacttest.Alnum+" \n", r.IntN(12)))
			}
			b.WriteString(heads[r.IntN(len(heads))])
			b.WriteString(g.S(redacttest.B64+"_-.~", 15+r.IntN(16)))
			b.WriteString(cuts[r.IntN(len(cuts))])
			b.WriteString(g.S(redacttest.B64+"_-", r.IntN(25)))
			b.WriteString(cuts[r.IntN(len(cuts))])
		}
		texts = append(texts, b.String())
	}
	eachCodingExchange(t, func(ex *exchange.Exchange) error {
		texts = append(texts, string(ex.Canonical()))
		for _, tu := range ex.Turns {
			texts = append(texts, tu.Text)
		}
		return nil
	})
	found := map[string]int{}
	for _, s := range texts {
		lower := asciiLower(s)
		for _, ru := range rs {
			whole := ru
			whole.lines = false
			got, want := ru.spans(s, lower), whole.spans(s, lower)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %q: by lines %v, whole %v", ru.kind, s, got, want)
			}
			found[ru.kind] += len(want)
		}
	}
	t.Logf("%d texts: %v spans", len(texts), found)
	for _, ru := range rs {
		if found[ru.kind] < 1000 {
			t.Errorf("%s: %d spans: too few to test", ru.kind, found[ru.kind])
		}
	}
}
