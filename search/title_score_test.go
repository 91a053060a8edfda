package search

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// TestTitleScoreSameScores scores random terms of generated memories
// (sessions interleaved in row order, some of one exchange, some exchanges
// without a session, forgotten rows) with titleScore and through add and
// scoreB, and wants every row's score bit for bit, the rows touched in the
// same order, and the ranking the same, with the title's b default and set.
func TestTitleScoreSameScores(t *testing.T) {
	ix, docs, r, _ := sessionMemory(t, 700, 150, 50, 30)
	ctx := context.Background()
	sc, err := ix.ensureContext()
	if err != nil {
		t.Fatal(err)
	}
	rd, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	cache, release := ix.rowCacheFor(rd)
	defer release()
	n := len(ix.seqs)
	vocab := vocabulary(docs)
	score := func(terms []string, off bool) *sessionScorer {
		disableTitleScore = off
		defer func() { disableTitleScore = false }()
		s := &sessionScorer{ix: ix, r: rd, sc: sc, cache: map[uint64]int32{}, n: n, prompt: true,
			distAvg: float64(ix.man.BM25.FieldLen[fieldDistilled]) / float64(n)}
		for k, term := range terms {
			s.k, s.tw = int32(k+1), []float64{1, 0.5}[k%2]
			if err := s.term(ctx, term); err != nil {
				t.Fatal(err)
			}
		}
		return s
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

// sessionMemory builds a generated memory of n exchanges for the scoring
// tests: sessions of up to maxSessions interleaved in row order, some of
// one exchange, some exchanges without a session, Seq below maxSeq
// (sessions ordered by Seq, ties by row), and forgets rows forgotten. The
// seed is logged (postingsSeed).
func sessionMemory(t *testing.T, n, maxSessions, maxSeq, forgets int) (*Index, []Doc, *rand.Rand, int64) {
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
	ix := buildIndex(t, t.TempDir(), docs)
	var gone []string
	for range forgets {
		gone = append(gone, docs[r.Intn(len(docs))].ID)
	}
	if _, err := ix.ForgetDocs(gone, nil); err != nil {
		t.Fatal(err)
	}
	return ix, docs, r, seed
}
