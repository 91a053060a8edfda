package redact

import "sync"

// prefilter answers every rule's pre test (does one of its literals occur
// in s?) for one string in a single pass. Asked rule by rule, the ~60
// literals meant ~60 scans of every string: strings.Contains was the
// largest of our own layers' costs in `git mem add` of the coding corpus
// (0.47 of 11 CPU-s, docs/BENCHMARKS.md "Session 13, ingest"). The answer
// is exactly containsAny's: a literal is marked found only where it
// occurs, and every position is tried for every literal starting with
// that byte pair (litSet; a table of first bytes before session 20).
type prefilter struct {
	lits   []string
	set    *litSet
	ofRule [][]int // per rule (index into rules()), its literals
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
			}
			p.ofRule[i] = append(p.ofRule[i], k)
		}
	}
	p.set = newLitSet(p.lits, false)
	return p
})

// scan returns which literals occur in s (found[k] for lits[k]).
func (p *prefilter) scan(s string) []bool {
	found := make([]bool, len(p.lits))
	left := len(p.lits)
	p.set.each(s, found, func(int) bool {
		left--
		return left > 0
	})
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
