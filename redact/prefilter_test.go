package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPrefilterIsContainsAny checks the one-pass prefilter against the
// rule-by-rule strings.Contains test it replaced, on texts built from the
// literals themselves (whole, cut short, at the very end, overlapping)
// and random bytes: a rule skipped wrongly would be a secret kept.
func TestPrefilterIsContainsAny(t *testing.T) {
	pf := rulePrefilter()
	rs := rules()
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "aAsS-_=:/.ekpxU \n"
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for b.Len() < rng.IntN(80) {
			switch rng.IntN(4) {
			case 0:
				l := pf.lits[rng.IntN(len(pf.lits))]
				b.WriteString(l[:rng.IntN(len(l)+1)])
			case 1:
				b.WriteString(pf.lits[rng.IntN(len(pf.lits))])
			default:
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
		}
		s := b.String()
		found := pf.scan(s)
		for i := range rs {
			if got, want := pf.any(found, i), containsAny(s, rs[i].pre); got != want {
				t.Fatalf("rule %d (%s, pre %q) on %q: prefilter %v, containsAny %v", i, rs[i].kind, rs[i].pre, s, got, want)
			}
		}
	}
}
