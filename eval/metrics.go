package eval

import "math"

// Metrics are averages over Queries queries. Each ranked list is the top k
// slots a search returns; a slot is relevant when its exchange or any
// exchange collapsed into it (near-duplicates) is relevant, and it covers
// every relevant member for recall.
//
//   - MRR: 1/rank of the first relevant slot (0 when none in the top k).
//   - Recall@n: 1 when at least one relevant exchange is in the top n (the
//     query is answerable from the first n results). This is the benchmark's
//     own definition: with it, our stemmed plain BM25 reproduces the
//     reference table of shared/eval/locomo-dev (R@10 0.799 against 0.789
//     for Snowball BM25, where the share-of-relevant reading gives 0.743);
//     AllEvidenceRecall@10 is the strict variant.
//   - nDCG@10: binary gains, log2 discount; the ideal list has one relevant
//     slot per relevant exchange.
//   - AllEvidenceRecall@10: 1 when every relevant exchange is in the top 10.
//
// When k < n the cut-offs are at k.
type Metrics struct {
	Name                  string  `json:"name,omitempty"` // category name, when the data gives one
	Queries               int     `json:"queries"`
	MRR                   float64 `json:"mrr"`
	RecallAt5             float64 `json:"recall_at_5"`
	RecallAt10            float64 `json:"recall_at_10"`
	NDCGAt10              float64 `json:"ndcg_at_10"`
	AllEvidenceRecallAt10 float64 `json:"all_evidence_recall_at_10"`
	// CurrentFirst is over the queries that name stale answers: the share
	// where a relevant slot is in the top 10 above every stale one.
	CurrentFirst *float64 `json:"current_first,omitempty"`
	// MRRCI is the 95 % bootstrap interval of MRR over these queries
	// (bootstrap.go); absent for adversarial queries.
	MRRCI []float64 `json:"mrr_ci,omitempty"`
}

// score is one query's values before averaging.
type score struct {
	rr, r5, r10, ndcg, all float64
}

// currentFirst scores a query with stale answers: 1 when a relevant slot
// comes within the top 10 before any stale one.
func currentFirst(slots [][]string, relevant, stale []string) float64 {
	in := func(ids []string, set []string) bool {
		for _, id := range ids {
			for _, x := range set {
				if id == x {
					return true
				}
			}
		}
		return false
	}
	for i, ids := range slots {
		if i >= 10 {
			break
		}
		rel, old := in(ids, relevant), in(ids, stale)
		if rel && !old {
			return 1
		}
		if old {
			return 0
		}
	}
	return 0
}

// scoreRanking scores one ranked list. slots[i] holds the exchange ids of
// slot i (its own id and its collapsed members).
func scoreRanking(slots [][]string, relevant []string) score {
	rel := make(map[string]bool, len(relevant))
	for _, id := range relevant {
		rel[id] = true
	}
	var s score
	found := map[string]bool{}
	var dcg float64
	for i, ids := range slots {
		hit := false
		for _, id := range ids {
			if rel[id] {
				hit = true
				found[id] = true
			}
		}
		if !hit {
			continue
		}
		if s.rr == 0 {
			s.rr = 1 / float64(i+1)
		}
		if i < 10 {
			dcg += 1 / math.Log2(float64(i+2))
		}
		if i < 5 {
			s.r5 = 1
		}
		if i < 10 {
			s.r10 = 1
			if len(found) == len(rel) {
				s.all = 1
			}
		}
	}
	var idcg float64
	for i := 0; i < min(len(rel), 10); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	if idcg > 0 {
		s.ndcg = dcg / idcg
	}
	return s
}

// acc sums scores into Metrics.
type acc struct {
	n   int
	sum score
	// current-first over the queries with stale answers
	nCur   int
	sumCur float64
}

// addCur counts one current-first score.
func (a *acc) addCur(v float64) {
	a.nCur++
	a.sumCur += v
}

func (a *acc) add(s score) {
	a.n++
	a.sum.rr += s.rr
	a.sum.r5 += s.r5
	a.sum.r10 += s.r10
	a.sum.ndcg += s.ndcg
	a.sum.all += s.all
}

func (a *acc) metrics() Metrics {
	m := Metrics{Queries: a.n}
	if a.n == 0 {
		return m
	}
	n := float64(a.n)
	m.MRR = round4(a.sum.rr / n)
	m.RecallAt5 = round4(a.sum.r5 / n)
	m.RecallAt10 = round4(a.sum.r10 / n)
	m.NDCGAt10 = round4(a.sum.ndcg / n)
	m.AllEvidenceRecallAt10 = round4(a.sum.all / n)
	if a.nCur > 0 {
		c := round4(a.sumCur / float64(a.nCur))
		m.CurrentFirst = &c
	}
	return m
}

// round4 keeps four decimals: enough to compare runs, and a report that
// diffs clean between two identical runs.
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }
