package search

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// sameScorer reports how got's per-term state differs from want's: every
// row's score bit for bit, the rows touched in order, tf left zero, the
// exact tier's counts and held; "" when none does.
func sameScorer(got, want *sessionScorer) string {
	for row := range got.scores {
		if math.Float64bits(got.scores[row]) != math.Float64bits(want.scores[row]) {
			return "a row's score"
		}
		if got.tf[row] != 0 || want.tf[row] != 0 {
			return "tf left set"
		}
	}
	switch {
	case !slices.Equal(got.touched, want.touched):
		return "the rows touched"
	case !slices.Equal(got.matched, want.matched) || !slices.Equal(got.stamp, want.stamp):
		return "the exact counts"
	case got.held != want.held:
		return "held"
	case len(got.eff) != 0 || len(want.eff) != 0:
		return "eff left"
	}
	return ""
}

// TestTermSameAsFormer scores random queries of generated memories with
// fullTerm and with the former code (former_oracle_test.go): each row's
// score bit for bit after every term, the rows touched in the same order,
// the exact tier's counts, held; also into a record (a stolen term), with
// the title's b default and set, exact on and off, the prompt part on and
// off, weights 1 and 0.5, with rows forgotten and without. A score off by
// 1e-15 of itself must be seen.
func TestTermSameAsFormer(t *testing.T) {
	// With rows forgotten the card part reads its postings into a buffer
	// first (startNorm refuses); without, batch by batch.
	for _, forgets := range []int{30, 0} {
		termSameAsFormer(t, sessionMemory(t, 700, 150, 50, forgets))
	}
	// Sessions as runs of rows (titleSpans), some broken.
	termSameAsFormer(t, runMemory(t, 700, 20))
}

// runMemory is sessionMemory with the sessions in row order, as a reindex
// writes them: runs of 1 to 20 rows, one in ten exchanges of another
// session than the run it sits in (its session no longer a run, nor the
// run's), and forgets rows forgotten.
func runMemory(t *testing.T, n, forgets int) *sessionFixture {
	t.Helper()
	seed := postingsSeed(t)
	r := rand.New(rand.NewSource(seed))
	docs := synthDocs(n, seed)
	run, left, seq := 0, 0, 0
	for i := range docs {
		if left == 0 {
			run, left, seq = i, 1+r.Intn(20), 0
		}
		docs[i].Session, docs[i].Seq = fmt.Sprintf("r%04d", run), seq
		if r.Intn(10) == 0 {
			docs[i].Session = fmt.Sprintf("r%04d", r.Intn(i+1))
		}
		left--
		seq++
	}
	f := newSessionFixture(t, docs, r, seed, forgets)
	runs := 0
	for _, l := range f.sc.titleSpans() {
		runs += min(int(l), 2) - min(int(l), 1) // sessions of 2 rows or more
	}
	if runs == 0 {
		t.Fatal("no session of runMemory is a run")
	}
	return f
}

func termSameAsFormer(t *testing.T, f *sessionFixture) {
	r, n, vocab := f.r, f.n, f.vocab
	ctx := context.Background()
	distAvg := float64(f.ix.man.BM25.FieldLen[fieldDistilled]) / float64(n)
	scorer := func(exact, prompt bool) *sessionScorer {
		return &sessionScorer{ix: f.ix, r: f.rd, sc: f.sc, cache: map[uint64]int32{}, n: n, exact: exact,
			prompt: prompt, distAvg: distAvg}
	}
	oldTB := TitleB
	defer func() { TitleB = oldTB }()
	compared := 0
	for q := range 60 {
		TitleB = []float64{oldTB, 0.3}[q%2]
		exact, prompt := r.Intn(2) == 0, r.Intn(2) == 0
		terms := []string{"error"}
		for range 1 + r.Intn(6) {
			terms = append(terms, vocab[r.Intn(len(vocab))])
		}
		r.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
		got, want := scorer(exact, prompt), scorer(exact, prompt)
		for k, term := range terms {
			for _, s := range []*sessionScorer{got, want} {
				s.k, s.tw = int32(k+1), []float64{1, 0.5}[r.Intn(2)]
			}
			want.tw = got.tw
			// Every third term into a record, as a helper makes it.
			var recs [2]*termRecord
			if k%3 == 2 {
				recs = [2]*termRecord{{}, {}}
			}
			got.rec, want.rec = recs[0], recs[1]
			if err := got.term(ctx, term); err != nil {
				t.Fatal(err)
			}
			testFormerTerm = (*sessionScorer).fullTermFormer
			err := want.term(ctx, term)
			testFormerTerm = nil
			if err != nil {
				t.Fatal(err)
			}
			got.rec, want.rec = nil, nil
			if recs[0] != nil {
				if !reflect.DeepEqual(recs[0].adds, recs[1].adds) {
					t.Fatalf("seed %d, %q, term %q: the record differs", f.seed, terms, term)
				}
				compared += len(recs[0].adds)
				got.apply(recs[0])
				want.apply(recs[1])
			}
			if d := sameScorer(got, want); d != "" {
				t.Fatalf("seed %d, %q (exact %v, prompt %v, TitleB %v), after %q: %s differs from the former code",
					f.seed, terms, exact, prompt, TitleB, term, d)
			}
		}
		compared += len(got.touched)
		// The comparison sees a change of 1e-15 of a score.
		if len(got.touched) > 0 {
			row := got.touched[r.Intn(len(got.touched))]
			got.scores[row] *= 1 + 1e-15
			if sameScorer(got, want) == "" {
				t.Fatal("a score changed by 1e-15 of itself went unseen")
			}
		}
	}
	if compared == 0 {
		t.Fatal("no row scored")
	}
}

// TestLayerSameAsFormer: the session layer's ranking (its workers, the
// steal between them, the exact tier, the typo pass) with fullTerm and with
// the former code, for queries of one to eight words, first-person ones,
// code-like ones and misspelt ones, with the scratch and on the heap.
func TestLayerSameAsFormer(t *testing.T) {
	layerSameAsFormer(t, sessionMemory(t, 800, 150, 50, 30))
	layerSameAsFormer(t, runMemory(t, 800, 20))
}

func layerSameAsFormer(t *testing.T, f *sessionFixture) {
	r, vocab := f.r, f.vocab
	ctx := context.Background()
	rank := func(q string, former, heap bool) []cand {
		if former {
			testFormerTerm = (*sessionScorer).fullTermFormer
		}
		disableScratch = heap
		defer func() { testFormerTerm, disableScratch = nil, false }()
		cs, err := f.ix.sessionBM25Layer(ctx, q, nil, 30, false)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	ranked := 0
	for i := range 60 {
		words := []string{"error"}
		for range r.Intn(8) {
			w := vocab[r.Intn(len(vocab))]
			switch r.Intn(5) {
			case 0:
				w = w[:len(w)-1] // misspelt
			case 1:
				w = "parse" + w + "Error" // code-like
			}
			words = append(words, w)
		}
		if i%3 == 0 {
			words = append(words, "my", "I")
		}
		r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
		q := ""
		for _, w := range words {
			q += w + " "
		}
		want := rank(q, true, false)
		for _, heap := range []bool{false, true} {
			if got := rank(q, false, heap); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, %q, heap %v: ranked %v, the former code %v", f.seed, q, heap, got, want)
			}
		}
		ranked += len(want)
	}
	if ranked == 0 {
		t.Fatal("nothing ranked")
	}
}

// TestTitleSpans: a session is a run only when its rows follow each other,
// link back and share one title length.
func TestTitleSpans(t *testing.T) {
	tests := []struct {
		name  string
		links []link
		dl    []float64
		want  []int32
	}{
		{"a run and a row alone", []link{{-1, 1}, {0, 2}, {1, -1}, {-1, -1}}, []float64{2, 2, 2, 5}, []int32{3, 0, 0, 1}},
		{"rows not in order", []link{{-1, 2}, {2, -1}, {0, 1}}, []float64{2, 2, 2}, []int32{0, 0, 0}},
		{"a next that does not link back", []link{{-1, 1}, {3, 2}, {1, -1}, {-1, 1}}, []float64{1, 1, 1, 1}, []int32{0, 0, 0, 0}},
		{"two title lengths", []link{{-1, 1}, {0, -1}, {-1, 3}, {2, -1}}, []float64{2, 3, 4, 4}, []int32{0, 0, 2, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := &sessionCtx{links: tc.links, titleDL: tc.dl}
			sc.titleOnce.Do(func() {})
			if got := sc.titleSpans(); !slices.Equal(got, tc.want) {
				t.Fatalf("titleSpans = %v, want %v", got, tc.want)
			}
		})
	}
}
