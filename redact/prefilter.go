package redact

import "sync"

// prefilter answers every rule's pre test (does one of its literals occur
// in s?) for one string in a single pass. Asked rule by rule, the ~60
// literals meant ~60 scans of every string: strings.Contains was the
// largest of our own layers' costs in `git mem add` of the coding corpus
// (0.47 of 11 CPU-s, docs/BENCHMARKS.md "Session 13, ingest"). The answer
// is exactly containsAny's: a literal is marked found only where it
// occurs, and every position is tried for every literal starting with
// that byte.
type prefilter struct {
	lits    []string
	byFirst [256][]int // indices into lits of the literals starting with each byte
	ofRule  [][]int    // per rule (index into rules()), its literals
	empty   []int      // empty literals: found in every string, as strings.Contains says
}

var rulePrefilter = sync.OnceValue(func() *prefilter {
	rs := rules()
	p := &prefilter{ofRule: make([][]int, len(rs))}
	index := map[string]int{}
	for i := range rs {
		for _, l := range rs[i].pre {
			k, ok := index[l]
			if !ok {
				k = len(p.lits)
				index[l] = k
				p.lits = append(p.lits, l)
				if l == "" {
					p.empty = append(p.empty, k)
				} else {
					p.byFirst[l[0]] = append(p.byFirst[l[0]], k)
				}
			}
			p.ofRule[i] = append(p.ofRule[i], k)
		}
	}
	return p
})

// scan returns which literals occur in s (found[k] for lits[k]).
func (p *prefilter) scan(s string) []bool {
	found := make([]bool, len(p.lits))
	for _, k := range p.empty {
		found[k] = true
	}
	left := len(p.lits) - len(p.empty)
	for i := 0; i < len(s) && left > 0; i++ {
		ks := p.byFirst[s[i]]
		if len(ks) == 0 {
			continue
		}
		for _, k := range ks {
			l := p.lits[k]
			if found[k] || len(l) > len(s)-i || len(l) > 1 && s[i+1] != l[1] {
				continue
			}
			if s[i:i+len(l)] == l {
				found[k] = true
				left--
			}
		}
	}
	return found
}

// any reports whether rule i's pre test passes, given scan's answer.
func (p *prefilter) any(found []bool, i int) bool {
	for _, k := range p.ofRule[i] {
		if found[k] {
			return true
		}
	}
	return false
}
