package search

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/gitmem/git-mem/search/embed"
)

// Relevance-model feedback (RM3: Lavrenko & Croft 2001, Abdul-Jaleel et al.
// 2004) from the verbatim talk of the first pass's best exchanges, off when
// RM3Weight is 0 (issue 15; docs/bench/eval.md, session 31). The talk (the
// person's and the agent's words, not the tools' output) of the best
// RM3Docs exchanges (one per near-duplicate group; one per session with
// RM3Sessions) is read back through Query.Verbatim; each word w that is not
// a stop word, a number or a query term gets P(w|R) = Σ_d P(w|d)·p(d), with
// P(w|d) its share of d's terms and p(d) the first pass's scores normalised
// (RM3Norm: "softmax", "rank" 1/r, or "score" s/Σs); the best RM3Terms by
// P(w|R) (× idf with RM3Idf) join the query, their weights summing to
// λ/(1−λ) of the query's (λ = RM3Weight): the interpolation of RM3.
//
// Gates: RM3Gate 1 skips a query with quoted spans or identifiers, 2 one the
// exact-recall tier reads back (exactNeedles, which counts a long pasted
// statement too); RM3Confident τ > 0 skips a query whose first pass is
// confident, (s1 − s10)/s1 > τ.
var (
	RM3Weight    = 0.0
	RM3Docs      = 5
	RM3Terms     = 10
	RM3Norm      = "softmax"
	RM3Idf       = false
	RM3Sessions  = false
	RM3Gate      = 0
	RM3Confident = 0.0
	RM3MaxDF     = 0.5 // a word in more than this share of the exchanges is no expansion (a role label)
	RM3MinDocs   = 1   // a word must be in the talk of this many feedback exchanges
)

type verbatimKey struct{}

// withVerbatim returns ctx carrying the search's read-back of exchanges,
// for the feedback.
func withVerbatim(ctx context.Context, f func([]ExchangeRef) ([]string, []string, error)) context.Context {
	return context.WithValue(ctx, verbatimKey{}, f)
}

var rm3Trace = os.Getenv("GIT_MEM_RM3_TRACE") != ""

// rm3 adds the feedback terms' scores to scores (and their rows to
// touched), for the session layer.
func (ix *Index) rm3(ctx context.Context, base *sessionScorer, text string, qterms []string, scores []float64, touched []int32, seen []bool) ([]int32, error) {
	if RM3Weight <= 0 || RM3Weight >= 1 || len(touched) == 0 || len(qterms) == 0 {
		return touched, nil
	}
	read, _ := ctx.Value(verbatimKey{}).(func([]ExchangeRef) ([]string, []string, error))
	if read == nil {
		return touched, nil
	}
	if RM3Gate > 0 {
		_, spans, idents, ok := exactNeedles(text)
		if len(spans) > 0 || len(idents) > 0 || (RM3Gate >= 2 && ok) {
			return touched, nil
		}
	}
	// The best rows, one per group: a partial selection (touched may be
	// every row).
	want := max(10, 4*RM3Docs)
	var best []int32
	better := func(a, b int32) bool {
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return a < b
	}
	for _, row := range touched {
		if len(best) == want && !better(row, best[want-1]) {
			continue
		}
		i := sort.Search(len(best), func(i int) bool { return better(row, best[i]) })
		if len(best) < want {
			best = append(best, 0)
		}
		copy(best[i+1:], best[i:len(best)-1])
		best[i] = row
	}
	groups := map[int32]bool{}
	var tops []int32
	for _, row := range best {
		g := ix.groups[row]
		if !groups[g] {
			groups[g] = true
			tops = append(tops, row)
		}
	}
	if RM3Confident > 0 && len(tops) >= 10 && scores[tops[0]] > 0 {
		if (scores[tops[0]]-scores[tops[9]])/scores[tops[0]] > RM3Confident {
			return touched, nil
		}
	}
	sessions := map[int32]bool{}
	var docs []int32
	var refs []ExchangeRef
	for _, row := range tops {
		if len(docs) >= RM3Docs {
			break
		}
		if RM3Sessions {
			k := base.sc.session(row)
			if sessions[k] {
				continue
			}
			sessions[k] = true
		}
		rec, err := ix.rec(row)
		if err != nil {
			return touched, err
		}
		docs = append(docs, row)
		refs = append(refs, ExchangeRef{ID: rec.ID, Commit: rec.Commit})
	}
	talks, _, err := read(refs)
	if err != nil {
		return touched, fmt.Errorf("feedback: %w", err)
	}
	pd := make([]float64, len(docs))
	sum := 0.0
	for i, row := range docs {
		switch RM3Norm {
		case "rank":
			pd[i] = 1 / float64(i+1)
		case "score":
			pd[i] = scores[row]
		default:
			pd[i] = math.Exp(scores[row] - scores[docs[0]])
		}
		sum += pd[i]
	}
	inQuery := map[string]bool{}
	for _, t := range qterms {
		inQuery[t] = true
	}
	rel := map[string]float64{}
	in := map[string]int{}
	for i, talk := range talks {
		tf := map[string]int{}
		total := 0
		embed.Words(talk, func(w string, _ bool) {
			if t := embed.Term(w); t != "" {
				tf[t]++
				total++
			}
		})
		if total == 0 {
			continue
		}
		for t, c := range tf {
			if inQuery[t] || len(t) < 2 || strings.Trim(t, "0123456789") == "" {
				continue
			}
			rel[t] += float64(c) / float64(total) * pd[i] / sum
			in[t]++
		}
	}
	if RM3MinDocs > 1 {
		for t := range rel {
			if in[t] < RM3MinDocs {
				delete(rel, t)
			}
		}
	}
	// The pool: the best 100 by P(w|R), whose document frequencies are read.
	var cs []expansion
	for t, p := range rel {
		cs = append(cs, expansion{t, p})
	}
	sort.Slice(cs, func(a, b int) bool {
		if cs[a].w != cs[b].w {
			return cs[a].w > cs[b].w
		}
		return cs[a].t < cs[b].t
	})
	if len(cs) > 100 {
		cs = cs[:100]
	}
	n := float64(len(ix.seqs))
	kept := cs[:0]
	for _, c := range cs {
		tfr, err := base.r.TermFieldReader(ctx, []byte(c.t), fieldVerbatim, false, false, false)
		if err != nil {
			return touched, fmt.Errorf("postings of %q in %s: %w", c.t, fieldVerbatim, err)
		}
		df := float64(tfr.Count())
		tfr.Close()
		if df == 0 || df > RM3MaxDF*n {
			continue
		}
		if RM3Idf {
			c.w *= math.Log(1 + (n-df+0.5)/(df+0.5))
		}
		kept = append(kept, c)
	}
	cs = kept
	sort.Slice(cs, func(a, b int) bool {
		if cs[a].w != cs[b].w {
			return cs[a].w > cs[b].w
		}
		return cs[a].t < cs[b].t
	})
	if len(cs) > RM3Terms {
		cs = cs[:RM3Terms]
	}
	if len(cs) == 0 {
		return touched, nil
	}
	mass := 0.0
	for _, c := range cs {
		mass += c.w
	}
	if rm3Trace {
		var ws []string
		for _, c := range cs {
			ws = append(ws, fmt.Sprintf("%s:%.2f", c.t, c.w/mass))
		}
		var ids []string
		for i, r := range refs {
			ids = append(ids, fmt.Sprintf("%s:%.2f", r.ID, pd[i]/sum))
		}
		fmt.Fprintf(os.Stderr, "rm3\t%s\t%s\t%s\n", text, strings.Join(ws, " "), strings.Join(ids, " "))
	}
	// addExpansion scales by the best term: weight·w/max = λ/(1−λ)·|q|·w/Σw.
	weight := RM3Weight / (1 - RM3Weight) * float64(len(qterms)) * cs[0].w / mass
	return ix.addExpansion(ctx, base, cs, len(cs), weight, scores, touched, seen)
}
