package search

import (
	"context"
	"math/rand"
	"reflect"
	"testing"
)

func TestRowRunsOf(t *testing.T) {
	alternating := make([]int32, 2*maxRowRuns+2)
	for j := range alternating {
		alternating[j] = int32(j ^ 1) // 1 0 3 2 ...: a run per document
	}
	tests := []struct {
		name string
		m    []int32
		runs []rowRun
		v    int8
	}{
		{"empty segment", nil, nil, 1},
		{"the rows in order", []int32{0, 1, 2, 3}, []rowRun{{0, 4, 0}}, 3},
		{"a later segment", []int32{7, 8, 9}, []rowRun{{0, 3, 7}}, 3},
		{"merged segments", []int32{10, 11, 0, 1, 2, 20}, []rowRun{{0, 2, 10}, {2, 5, -2}, {5, 6, 15}}, 3},
		{"descending", []int32{3, 2, 1, 0}, []rowRun{{0, 1, 3}, {1, 2, 1}, {2, 3, -1}, {3, 4, -3}}, 3},
		{"a document without a row", []int32{0, 1, -1, 3}, nil, 2},
		{"too many runs", alternating, nil, 1},
		{"too many runs, then no row", append(append([]int32(nil), alternating...), -1), nil, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs, v := rowRunsOf(tc.m)
			if v != tc.v || !reflect.DeepEqual(runs, tc.runs) {
				t.Fatalf("rowRunsOf(%v) = %v, %d; want %v, %d", tc.m, runs, v, tc.runs, tc.v)
			}
		})
	}
}

// TestRowRunsGiveTheMapsRows builds maps of random runs (shuffled blocks
// of rows, some reversed) and checks that runOf gives every document the
// row the map holds, from any run the lookup starts at.
func TestRowRunsGiveTheMapsRows(t *testing.T) {
	seed := postingsSeed(t)
	r := rand.New(rand.NewSource(seed))
	for range 200 {
		n := 1 + r.Intn(3000)
		rows := r.Perm(n)
		if r.Intn(2) == 0 {
			// blocks of consecutive rows in a random order
			rows = rows[:0]
			var blocks [][2]int
			for s := 0; s < n; {
				l := 1 + r.Intn(400)
				blocks = append(blocks, [2]int{s, min(s+l, n)})
				s += l
			}
			r.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
			for _, b := range blocks {
				for x := b[0]; x < b[1]; x++ {
					rows = append(rows, x)
				}
			}
		}
		base := int32(r.Intn(1 << 20))
		m := make([]int32, n)
		for j, x := range rows {
			m[j] = base + int32(x)
		}
		runs, v := rowRunsOf(m)
		if v == 1 {
			if len(runs) != 0 {
				t.Fatal("runs kept beside v 1")
			}
			continue
		}
		if v != 3 {
			t.Fatalf("v %d for a map of rows", v)
		}
		for j := range m {
			from := runs[r.Intn(len(runs))]
			if d := uint32(j); d < from.start || d >= from.end {
				from = runOf(runs, d)
			}
			if got := int32(j) + from.delta; got != m[j] {
				t.Fatalf("document %d: row %d, the map says %d", j, got, m[j])
			}
		}
	}
}

// TestRowRunsSameScan reads every term of every field of a memory, with
// the rows from the runs and from the map, in the shapes the reader meets:
// row order with deleted documents (the forgotten ones' ids map to no
// row), and zap's own order.
func TestRowRunsSameScan(t *testing.T) {
	seed := postingsSeed(t)
	shapes := []struct {
		name  string
		build func() (string, []Doc)
	}{
		{"row order, deletes", func() (string, []Doc) { return directIndex(t, seed) }},
		{"zap's own order, deletes", func() (dir string, docs []Doc) {
			withPlainZap(func() { dir, docs = directIndex(t, seed) })
			return
		}},
	}
	fields := []string{fieldVerbatim, fieldHead, fieldAsked, fieldOutput, fieldDistilled}
	ctx := context.Background()
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			dir, docs := sh.build()
			_, _, pr := directReader(t, dir, true)
			read := func(field, term string, runs bool) (ps, scanned []rowFreq, ns, normScan []cardPosting) {
				disableRowRuns = !runs
				defer func() { disableRowRuns = false }()
				var err error
				if ps, err = pr.postings(ctx, field, term, nil); err != nil {
					t.Fatal(err)
				}
				if ns, err = pr.normPostings(ctx, field, term, nil); err != nil {
					t.Fatal(err)
				}
				if err := pr.start(ctx, field, term, nil); err != nil {
					t.Fatal(err)
				}
				scanned, _ = scanAll(t, pr.next)
				if _, ok, err := pr.startNorm(field, term); err != nil {
					t.Fatal(err)
				} else if ok {
					normScan, _ = scanAll(t, pr.nextNorm)
				}
				return
			}
			n := 0
			for _, term := range vocabulary(docs) {
				for _, field := range fields {
					p1, s1, n1, ns1 := read(field, term, true)
					p0, s0, n0, ns0 := read(field, term, false)
					if !reflect.DeepEqual(p1, p0) || !reflect.DeepEqual(s1, s0) || !reflect.DeepEqual(n1, n0) || !reflect.DeepEqual(ns1, ns0) {
						t.Fatalf("%s:%q: rows from runs differ from the map's: postings %d/%d, scan %d/%d, norms %d/%d, norm scan %d/%d",
							field, term, len(p1), len(p0), len(s1), len(s0), len(n1), len(n0), len(ns1), len(ns0))
					}
					n += len(p1)
				}
			}
			byState := map[int8]int{}
			for i := range pr.segs {
				byState[pr.checkRows(i)]++
			}
			t.Logf("%d segments by state (1 rows, 2 not all, 3 runs): %v; %d postings", len(pr.segs), byState, n)
			if n == 0 {
				t.Fatal("no postings compared")
			}
			if sh.name == "row order, deletes" && byState[3] == 0 {
				t.Fatal("no segment read through runs")
			}
			// And the session layer's ranking, scores and all (an index
			// of its own: pr's holds the row cache's lock).
			ix, err := OpenReadOnly(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			vocab := vocabulary(docs)
			r := rand.New(rand.NewSource(seed))
			for range 20 {
				q := vocab[r.Intn(len(vocab))] + " " + vocab[r.Intn(len(vocab))] + " " + vocab[r.Intn(len(vocab))]
				for _, plain := range []bool{false, true} {
					rank := func(runs bool) []cand {
						disableRowRuns = !runs
						defer func() { disableRowRuns = false }()
						cs, err := ix.sessionBM25Layer(ctx, q, nil, 30, plain)
						if err != nil {
							t.Fatal(err)
						}
						return cs
					}
					if got, want := rank(true), rank(false); !reflect.DeepEqual(got, want) || len(got) == 0 {
						t.Fatalf("%q (plain %v): %d candidates from runs, %d from the map: %v / %v", q, plain, len(got), len(want), got, want)
					}
				}
			}
		})
	}
}
