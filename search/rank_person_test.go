package search

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// personDocs is one topical session of four exchanges, as LongMemEval's
// are: the person states the fact in the second exchange's first turn; the
// fourth repeats the topic's words in its reply, more often and in fewer
// words. A session of its own on the topic comes last.
func personDocs() []Doc {
	doc := func(seq int, id, session, head, reply string) Doc {
		return Doc{Seq: seq, Commit: fmt.Sprintf("%040x", seq+1), ID: id, Session: session, Head: head,
			Verbatim: "user: " + head + "\n\nassistant: " + reply}
	}
	docs := []Doc{
		doc(0, "open", "garage", "I need help organizing my garage this weekend, any tips for the storage bins?",
			"Sort the boxes into keep, donate and toss, then label the bins."),
		doc(1, "said", "garage", "By the way, I kept a daily tidying routine for three weeks.",
			"Well done."),
		doc(2, "middle", "garage", "Which labels hold on plastic bins in a cold garage?",
			"Vinyl labels or a paint marker; paper ones peel in the cold and damp."),
		doc(3, "repeat", "garage", "Where should the workstation go?",
			"A tidying station by the door helps a daily routine stay on track."),
		doc(4, "other", "kitchen", "I keep a daily routine for the kitchen: counters first, then the sink.",
			"A routine like that keeps the kitchen tidy."),
	}
	// Other talk, so that the topic's words are rare, as in a memory.
	for i, topic := range []string{"the bike route to the office", "a birthday party", "podcasts about history",
		"a trip to Jordan", "sourdough starters", "a resume for a job", "tomato seedlings", "the cat's vaccines"} {
		docs = append(docs, doc(5+i, fmt.Sprintf("filler%d", i), fmt.Sprintf("f%d", i),
			"Can you help me with "+topic+"?", "Sure, here are a few ideas about "+topic+" to start with."))
	}
	return docs
}

// personScores are the session layer's scores of q over ix with the two
// weights set.
func personScores(t *testing.T, ix *Index, q string, cover, opening float64) map[string]float64 {
	t.Helper()
	defer func(c, o float64) { PromptCoverWeight, OpeningWeight = c, o }(PromptCoverWeight, OpeningWeight)
	PromptCoverWeight, OpeningWeight = cover, opening
	return hitScores(t, ix, q, 10)
}

// hitScores is each hit's score of session-bm25's best k for q.
func hitScores(t *testing.T, ix *Index, q string, k int) map[string]float64 {
	t.Helper()
	hs, err := ix.Search(Query{Text: q, Mode: ModeSessionBM25, K: k})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, h := range hs {
		out[h.Doc.ID] = h.Score
	}
	return out
}

// TestPromptCover: for a first-person question, an exchange's score is
// multiplied by 1 + PromptCoverWeight·C, C the idf-weighted share of the
// query's terms its own first turn holds: the exchange in which the person
// said it passes the one whose reply repeats the words; an exchange whose
// first turn holds none keeps its score; a question about someone else
// scores as without the weight.
func TestPromptCover(t *testing.T) {
	ix := buildIndex(t, t.TempDir(), personDocs())
	defer ix.Close()
	// The person's message as a field (PromptWeight) is off: here it would
	// tell the two apart too; the cover must do it alone, gathering the
	// first turns' postings itself.
	defer func(old float64) { PromptWeight = old }(PromptWeight)
	PromptWeight = 0
	q := "What about my daily tidying routine?"
	off := personScores(t, ix, q, 0, 0)
	on := personScores(t, ix, q, 0.2, 0)
	if off["repeat"] <= off["said"] {
		t.Fatalf("fixture: without the cover %q should rank the repeating reply first: %v", q, off)
	}
	if on["said"] <= on["repeat"] {
		t.Errorf("%q with the cover: said %g, repeat %g, want said first", q, on["said"], on["repeat"])
	}
	// Each factor is 1 + 0.2·C with 0 < C ≤ 1, and C is larger for the
	// first turn that holds every term than for one that holds one.
	said, other := on["said"]/off["said"], on["other"]/off["other"]
	for id, f := range map[string]float64{"said": said, "other": other} {
		if f <= 1 || f > 1.2+1e-12 {
			t.Errorf("%s: factor %g, want in (1, 1.2]", id, f)
		}
	}
	if said <= other {
		t.Errorf("factor of said %g ≤ other's %g (its first turn holds daily and routine only)", said, other)
	}
	if on["repeat"] != off["repeat"] {
		t.Errorf("repeat (no query term in its first turn): %g with the cover, %g without", on["repeat"], off["repeat"])
	}
	// Twice the weight: C·0.4 instead of C·0.2, the same C.
	on2 := personScores(t, ix, q, 0.4, 0)
	if c1, c2 := (said-1)/0.2, (on2["said"]/off["said"]-1)/0.4; math.Abs(c1-c2) > 1e-9 {
		t.Errorf("said: share %g at 0.2, %g at 0.4", c1, c2)
	}
	third := "How long has Maria been sticking to her daily tidying routine?"
	a, b := personScores(t, ix, third, 0.2, 0.1), personScores(t, ix, third, 0, 0)
	for id := range b {
		if a[id] != b[id] {
			t.Errorf("%q: %s scores %g with the weights, %g without", third, id, a[id], b[id])
		}
	}
}

// TestOpeningWeight: for a first-person question the opening message of a
// session adds to the session's first exchange alone.
func TestOpeningWeight(t *testing.T) {
	ix := buildIndex(t, t.TempDir(), personDocs())
	defer ix.Close()
	q := "What tips did I get for the storage bins in my garage?"
	off, on := personScores(t, ix, q, 0, 0), personScores(t, ix, q, 0, 0.1)
	if on["open"] <= off["open"] {
		t.Errorf("open: %g with the opening weight, %g without", on["open"], off["open"])
	}
	for _, id := range []string{"said", "middle", "repeat", "other"} {
		if on[id] != off[id] {
			t.Errorf("%s (not a session's opening that holds the words): %g with the opening weight, %g without", id, on[id], off[id])
		}
	}
	// A first turn that opens its session but holds none of the words.
	q = "Where do I keep my counters clean?"
	off, on = personScores(t, ix, q, 0, 0), personScores(t, ix, q, 0, 0.1)
	if on["other"] <= off["other"] {
		t.Errorf("%q: other %g with the opening weight, %g without", q, on["other"], off["other"])
	}
	if on["open"] != off["open"] {
		t.Errorf("%q: open %g with the opening weight, %g without", q, on["open"], off["open"])
	}
}

// TestPromptCoverWorkers: the cover's bits are set by whichever worker
// scores a term; the scores are the same with the terms scored in fixed
// groups, with the second worker taking over first, and with more terms
// than the cover counts.
func TestPromptCoverWorkers(t *testing.T) {
	ix := buildIndex(t, t.TempDir(), personDocs())
	defer ix.Close()
	long := "How long have I been sticking to my daily tidying routine " +
		strings.Repeat("garage bins weekend shelves kitchen counters sink habit ", 10) + "w1 w2 w3 w4 w5"
	for _, q := range []string{"How long have I been sticking to my daily tidying routine?", long} {
		want := personScores(t, ix, q, 0.2, 0.1)
		for _, hook := range []struct {
			name string
			p    *bool
		}{{"disableSteal", &disableSteal}, {"testStealFirst", &testStealFirst}} {
			*hook.p = true
			got := personScores(t, ix, q, 0.2, 0.1)
			*hook.p = false
			if len(got) != len(want) {
				t.Fatalf("%s: %d hits, want %d", hook.name, len(got), len(want))
			}
			for id, s := range want {
				if got[id] != s {
					t.Errorf("%s, %.30q…: %s scores %g, want %g", hook.name, q, id, got[id], s)
				}
			}
		}
	}
}

// TestPersonCoverWidths: a row's bits are as wide as the query's terms and
// their typo corrections (2 per term) need, and every width gives the same
// factors for the same bits, the two workers' bits OR-ed.
func TestPersonCoverWidths(t *testing.T) {
	for _, tc := range []struct{ nterms, width int }{
		{1, 1}, {4, 1}, {5, 2}, {8, 2}, {9, 4}, {16, 4}, {17, 8}, {40, 8},
	} {
		if got := newPersonCover(tc.nterms).width; got != tc.width {
			t.Errorf("%d terms: width %d, want %d", tc.nterms, got, tc.width)
		}
	}
	seed := postingsSeed(t)
	r := rand.New(rand.NewSource(seed))
	const n = 300
	for _, width := range []int{1, 2, 4, 8} {
		nterms := 4 * width // 8·width bits: the most a width holds
		c := &personCover{width: width}
		ws := []*sessionScorer{{n: n, cover: c}, {n: n, cover: c}}
		for _, w := range ws {
			w.coverBits = c.bits(nil, n)
		}
		want := make([]float64, n)
		held := make([]map[int]bool, n)
		for i := range held {
			held[i] = map[int]bool{}
		}
		for k := 1; k <= 2*nterms; k++ {
			var ps []rowFreq
			for row := range n {
				if r.Intn(4) == 0 {
					ps = append(ps, rowFreq{int32(row), uint32(1 + r.Intn(3))})
					held[row][k] = true
				}
			}
			w := ws[r.Intn(2)]
			w.k, w.tw = int32(k), 0.5+r.Float64()
			w.coverTerm(ps)
		}
		var total float64
		for _, v := range c.idf {
			total += v
		}
		scores := make([]float64, n)
		for row := range n {
			scores[row] = 1 + float64(row)
			var h float64
			for k := 1; k <= 2*nterms; k++ {
				if held[row][k] {
					h += c.idf[k-1]
				}
			}
			want[row] = scores[row] * (1 + PromptCoverWeight*h/total)
		}
		c.apply(ws, scores)
		for row := range n {
			if math.Abs(scores[row]-want[row]) > 1e-9*want[row] {
				t.Fatalf("seed %d, width %d, row %d: %g, want %g", seed, width, row, scores[row], want[row])
			}
		}
	}
}
