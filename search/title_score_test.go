package search

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	bleveindex "github.com/blevesearch/bleve_index_api"
)

// TestTitleScoreSameScores scores random terms of generated memories
// (sessions interleaved in row order, some of one exchange, some exchanges
// without a session, forgotten rows) with titleScore and through add and
// scoreB, and wants every row's score bit for bit, the rows touched in the
// same order, and the ranking the same, with the title's b default and set.
func TestTitleScoreSameScores(t *testing.T) {
	f := sessionMemory(t, 700, 150, 50, 30)
	ix, r, rd, n, vocab := f.ix, f.r, f.rd, f.n, f.vocab
	ctx := context.Background()
	cache, release := ix.rowCacheFor(rd)
	defer release()
	score := func(terms []string, off bool) *sessionScorer {
		disableTitleScore = off
		defer func() { disableTitleScore = false }()
		return f.sumTerms(t, terms, nil)
	}
	for _, tb := range []float64{-1, 0.3} {
		old := TitleB
		TitleB = tb
		titled := 0
		for range 40 {
			terms := []string{vocab[r.Intn(len(vocab))], vocab[r.Intn(len(vocab))], "error"}
			a, b := score(terms, false), score(terms, true)
			for row := range n {
				if math.Float64bits(a.scores[row]) != math.Float64bits(b.scores[row]) {
					t.Fatalf("TitleB %v, %q: row %d scores %v with titleScore, %v without", tb, terms, row, a.scores[row], b.scores[row])
				}
			}
			if !reflect.DeepEqual(a.touched, b.touched) {
				t.Fatalf("TitleB %v, %q: rows touched in another order", tb, terms)
			}
			q := terms[0] + " " + terms[1] + " error"
			rank := func(off bool) []cand {
				disableTitleScore = off
				defer func() { disableTitleScore = false }()
				cs, err := ix.sessionBM25Layer(ctx, q, nil, 30, false)
				if err != nil {
					t.Fatal(err)
				}
				return cs
			}
			if got, want := rank(false), rank(true); !reflect.DeepEqual(got, want) || len(got) == 0 {
				t.Fatalf("TitleB %v, %q: ranked %v with titleScore, %v without", tb, q, got, want)
			}
			titled += len(a.touched)
		}
		TitleB = old
		if titled == 0 {
			t.Fatal("no row scored")
		}
	}
	_ = cache
}

// TestTitleScoreRefusesBrokenChains: a session whose next row does not link
// back (two rows would reach one) is left to add and scoreB, untouched.
func TestTitleScoreRefusesBrokenChains(t *testing.T) {
	sc := &sessionCtx{links: []link{{-1, 1}, {0, 2}, {1, -1}, {-1, 2}}, titleAvg: 1, titleDL: []float64{1, 1, 1, 1}}
	s := &sessionScorer{sc: sc, n: 4, tw: 1, scores: make([]float64, 4), seen: make([]bool, 4), eff: make([]int32, 0, 4)}
	tests := []struct {
		name   string
		titles []rowFreq
		ok     bool
		rows   []int32
	}{
		{"a linked session", []rowFreq{{0, 1}}, true, []int32{0, 1, 2}},
		{"row 3's next has 1 as its previous", []rowFreq{{3, 1}}, false, nil},
		{"a zero frequency adds nothing", []rowFreq{{0, 0}}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clear(s.scores)
			clear(s.seen)
			s.touched = nil
			if ok := s.titleScore(tc.titles); ok != tc.ok || !reflect.DeepEqual(s.touched, tc.rows) {
				t.Fatalf("titleScore = %v, touched %v; want %v, %v", ok, s.touched, tc.ok, tc.rows)
			}
			if len(s.eff) != 0 {
				t.Fatalf("eff left with %v", s.eff)
			}
		})
	}
}

// sessionFixture is a generated memory of sessions for the scoring tests,
// opened for scoring: its session context, a reader, its rows and words.
type sessionFixture struct {
	ix    *Index
	docs  []Doc
	r     *rand.Rand
	seed  int64
	sc    *sessionCtx
	rd    bleveindex.IndexReader
	n     int
	vocab []string
}

// sessionMemory builds a generated memory of n exchanges for the scoring
// tests: sessions of up to maxSessions interleaved in row order, some of
// one exchange, some exchanges without a session, Seq below maxSeq
// (sessions ordered by Seq, ties by row), and forgets rows forgotten. The
// seed is logged (postingsSeed).
func sessionMemory(t *testing.T, n, maxSessions, maxSeq, forgets int) *sessionFixture {
	t.Helper()
	seed := postingsSeed(t)
	r := rand.New(rand.NewSource(seed))
	docs := synthDocs(n, seed)
	sessions := 1 + r.Intn(maxSessions)
	for i := range docs {
		switch r.Intn(10) {
		case 0:
			docs[i].Session = "" // its own session
		case 1:
			docs[i].Session = fmt.Sprintf("one-%d", i)
		default:
			docs[i].Session = fmt.Sprintf("s%03d", r.Intn(sessions))
		}
		docs[i].Seq = r.Intn(maxSeq)
	}
	return newSessionFixture(t, docs, r, seed, forgets)
}

// newSessionFixture indexes docs, forgets forgets of them (picked by r,
// repeats allowed) and opens the index's session context and a reader.
func newSessionFixture(t *testing.T, docs []Doc, r *rand.Rand, seed int64, forgets int) *sessionFixture {
	t.Helper()
	ix := buildIndex(t, t.TempDir(), docs)
	var gone []string
	for range forgets {
		gone = append(gone, docs[r.Intn(len(docs))].ID)
	}
	if _, err := ix.ForgetDocs(gone, nil); err != nil {
		t.Fatal(err)
	}
	sc, err := ix.ensureContext()
	if err != nil {
		t.Fatal(err)
	}
	rd, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return &sessionFixture{ix: ix, docs: docs, r: r, seed: seed, sc: sc, rd: rd, n: len(ix.seqs), vocab: vocabulary(docs)}
}

// sumTerms scores terms with one scorer (its arrays from mem, nil: the
// heap), each term its own k and alternating weights, as the session
// layer's workers do.
func (f *sessionFixture) sumTerms(t *testing.T, terms []string, mem *scratch) *sessionScorer {
	t.Helper()
	s := &sessionScorer{ix: f.ix, r: f.rd, sc: f.sc, cache: map[uint64]int32{}, n: f.n, prompt: true, mem: mem,
		distAvg: float64(f.ix.man.BM25.FieldLen[fieldDistilled]) / float64(f.n)}
	for k, term := range terms {
		s.k, s.tw = int32(k+1), []float64{1, 0.5}[k%2]
		if err := s.term(context.Background(), term); err != nil {
			t.Fatal(err)
		}
	}
	return s
}
