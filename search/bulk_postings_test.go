package search

import (
	"context"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"
)

// zapPosting is what the scorer takes from a zap posting.
type zapPosting struct {
	doc, freq, bits, norm uint64 // norm: Norm()'s float64 bits
}

// iteratorPostings reads pl through zap's PostingsIterator.
func iteratorPostings(t *testing.T, pl segment.PostingsList) []zapPosting {
	t.Helper()
	var out []zapPosting
	it := pl.Iterator(true, true, false, nil)
	for {
		d, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if d == nil {
			return out
		}
		zp := d.(*zap.Posting)
		out = append(out, zapPosting{zp.Number(), zp.Frequency(), zp.NormUint64(), math.Float64bits(zp.Norm())})
	}
}

// bulkPairs reads pl through zap.BulkPostings.NextPairs in batches of
// batch.
func bulkPairs(t *testing.T, b *zap.BulkPostings, pl segment.PostingsList, batch int) []zap.Pair {
	t.Helper()
	if ok, err := b.Reset(pl); !ok || err != nil {
		t.Fatalf("Reset: %v %v", ok, err)
	}
	buf := make([]zap.Pair, batch)
	var out []zap.Pair
	for {
		k, err := b.NextPairs(buf)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			return out
		}
		if k > batch {
			t.Fatalf("%d pairs in a batch of %d", k, batch)
		}
		out = append(out, buf[:k]...)
	}
}

// bulkPostings reads pl through zap.BulkPostings in batches of batch.
func bulkPostings(t *testing.T, b *zap.BulkPostings, pl segment.PostingsList, batch int) []zapPosting {
	t.Helper()
	if ok, err := b.Reset(pl); !ok || err != nil {
		t.Fatalf("Reset: %v %v", ok, err)
	}
	docs, freqs, norms := make([]uint32, batch), make([]uint64, batch), make([]uint64, batch)
	var out []zapPosting
	for {
		k, err := b.Next(docs, freqs, norms)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			return out
		}
		if k > batch {
			t.Fatalf("%d postings in a batch of %d", k, batch)
		}
		for j := range k {
			out = append(out, zapPosting{uint64(docs[j]), freqs[j], norms[j], math.Float64bits(zap.NormOfBits(norms[j]))})
		}
	}
}

// varintLen is the bytes of x as a varint.
func varintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// withChunkMode builds with zap's chunk mode mode (≤ 1024: chunks of that
// many document numbers), so that lists of a small index span chunks.
func withChunkMode(mode uint32, f func()) {
	old := zap.DefaultChunkMode
	zap.DefaultChunkMode = mode
	defer func() { zap.DefaultChunkMode = old }()
	f()
}

// TestBulkPostingsMatchIterator reads every term of every field of indexes
// of several shapes three ways — zap.BulkPostings (in batches of 1, 3 and
// 256), zap's PostingsIterator, and through the postingReader with and
// without bulk against Bleve's TermFieldReader — and wants the same
// postings, posting for posting: document, frequency, norm bits and norm.
func TestBulkPostingsMatchIterator(t *testing.T) {
	seed := postingsSeed(t)
	shapes := []struct {
		name   string
		build  func() (string, []Doc)
		chunks bool // some list spans several chunks
	}{
		{"row order, three segments, deletes", func() (string, []Doc) { return directIndex(t, seed) }, false},
		{"row order, chunks of 7", func() (dir string, docs []Doc) {
			withChunkMode(7, func() { dir, docs = directIndex(t, seed) })
			return
		}, true},
		{"zap's own order (shuffled), deletes", func() (dir string, docs []Doc) {
			withPlainZap(func() { dir, docs = directIndex(t, seed) })
			return
		}, false},
		{"shuffled, chunks of 5", func() (dir string, docs []Doc) {
			withPlainZap(func() { withChunkMode(5, func() { dir, docs = directIndex(t, seed) }) })
			return
		}, true},
		{"long fields, frequent terms", func() (string, []Doc) {
			docs := synthDocs(200, seed)
			for i := range 3 {
				d := orderDocs(200+i, 201+i)[0]
				d.Verbatim = strings.Repeat("zebra ", 70+40*i) + strings.Repeat("quagga yak ", 8200+i)
				d.Output = strings.Repeat("zebra okapi ", 90)
				docs = append(docs, d)
			}
			dir := t.TempDir()
			writeDocs(t, dir, [][]Doc{docs[:100], docs[100:]}, false)
			return dir, docs
		}, false},
	}
	fields := []string{fieldVerbatim, fieldHead, fieldAsked, fieldOutput, fieldDistilled}
	maxSegs, deleted, long, countedAll := 0, 0, false, 0
	defer func() {
		if (maxSegs < 2 || deleted == 0 || !long || countedAll == 0) && !t.Failed() {
			t.Errorf("at most %d segments, %d with deleted documents, long varints %v, %d counted scans: the shapes cover less than they should", maxSegs, deleted, long, countedAll)
		}
	}()
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			dir, docs := sh.build()
			vocab := append(vocabulary(docs), "nosuchterm", "")
			ix, r, pr := directReader(t, dir, true)
			// Scorch's background merges may have left one segment.
			maxSegs = max(maxSegs, len(pr.segs))
			for _, s := range pr.segs {
				if d := s.Deleted(); d != nil && !d.IsEmpty() {
					deleted++ // (a merge drops them)
				}
			}
			ctx := context.Background()
			var b zap.BulkPostings
			n, spanning, counted := 0, 0, 0
			var wide [6]int // postings by the bytes of their freq's, norm's varint: 1, 2, 3+
			for _, term := range vocab {
				for _, field := range fields {
					if _, err := pr.open(field, term, true); err != nil {
						t.Fatal(err)
					}
					for i, pl := range pr.pls {
						if pr.its[i] != nil {
							t.Fatalf("%s:%q: segment %d read by an iterator, not in bulk", field, term, i)
						}
						want := iteratorPostings(t, pl)
						for _, batch := range []int{1, 3, 256} {
							if got := bulkPostings(t, &b, pl, batch); !reflect.DeepEqual(got, want) {
								t.Fatalf("%s:%q segment %d, batches of %d: bulk %d postings, iterator %d; first difference at %d",
									field, term, i, batch, len(got), len(want), firstDiff(got, want))
							}
							// NextPairs: the same documents and frequencies.
							got := bulkPairs(t, &b, pl, batch)
							if len(got) != len(want) {
								t.Fatalf("%s:%q segment %d, batches of %d: %d pairs, iterator %d postings", field, term, i, batch, len(got), len(want))
							}
							for j, w := range want {
								if uint64(got[j].Doc) != w.doc || uint64(got[j].Freq) != w.freq {
									t.Fatalf("%s:%q segment %d, batches of %d, posting %d: pair %v, iterator %d/%d", field, term, i, batch, j, got[j], w.doc, w.freq)
								}
							}
						}
						n += len(want)
						for _, p := range want {
							wide[min(varintLen(p.freq<<1), 3)-1]++
							wide[3+min(varintLen(p.bits), 3)-1]++
						}
						zpl := pl.(*zap.PostingsList)
						if cs := zpl.ChunkSize(); cs > 0 && len(want) > 0 && want[len(want)-1].doc/cs > want[0].doc/cs {
							spanning++
						}
						if zpl.Count() < uint64(len(want)) {
							t.Fatalf("%s:%q: Count %d < %d postings", field, term, zpl.Count(), len(want))
						}
					}
					read := func(bulk bool) ([]rowFreq, []cardPosting) {
						disableBulkPostings = !bulk
						defer func() { disableBulkPostings = false }()
						ps, err := pr.postings(ctx, field, term, nil)
						if err != nil {
							t.Fatal(err)
						}
						ns, err := pr.normPostings(ctx, field, term, nil)
						if err != nil {
							t.Fatal(err)
						}
						return ps, ns
					}
					gotP, gotN := read(true)
					// A scan's batches, bulk (pairs or not) or all at once,
					// are the same postings in the same order.
					for _, mode := range []struct{ bulk, pairs bool }{{true, true}, {true, false}, {false, false}} {
						bulk := mode.bulk
						disablePairs = !mode.pairs
						disableBulkPostings = !bulk
						if err := pr.start(ctx, field, term, nil); err != nil {
							t.Fatal(err)
						}
						scanned, most := scanAll(t, pr.next)
						if most > len(pr.batch) && bulk {
							t.Fatalf("a batch of %d", most)
						}
						disableBulkPostings, disablePairs = false, false
						if pr.wholeScan == bulk {
							t.Fatalf("bulk %v: the scan read all at once: %v", bulk, pr.wholeScan)
						}
						if !reflect.DeepEqual(scanned, gotP) && !(len(scanned) == 0 && len(gotP) == 0) {
							t.Fatalf("%s:%q: scan (bulk %v) %d postings, postings %d; first difference %d", field, term, bulk, len(scanned), len(gotP), firstDiff(scanned, gotP))
						}
					}
					itP, itN := read(false)
					wantP, err := ix.postings(ctx, r, map[uint64]int32{}, field, term, nil)
					if err != nil {
						t.Fatal(err)
					}
					wantN, err := ix.normPostings(ctx, r, map[uint64]int32{}, field, term, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(gotP, wantP) || !reflect.DeepEqual(itP, wantP) {
						t.Fatalf("%s:%q: bulk %d postings, iterator %d, Bleve %d; first difference %d", field, term, len(gotP), len(itP), len(wantP), firstDiff(gotP, wantP))
					}
					// startNorm's scan, where it can count first, is
					// normPostings' postings, and the count is theirs.
					if cnt, ok, err := pr.startNorm(field, term); err != nil {
						t.Fatal(err)
					} else if ok {
						counted++
						scanned, _ := scanAll(t, pr.nextNorm)
						if cnt != len(gotN) || !reflect.DeepEqual(scanned, gotN) && !(len(scanned) == 0 && len(gotN) == 0) {
							t.Fatalf("%s:%q: startNorm counted %d, scanned %d, normPostings %d; first difference %d", field, term, cnt, len(scanned), len(gotN), firstDiff(scanned, gotN))
						}
					}
					if !reflect.DeepEqual(gotN, wantN) || !reflect.DeepEqual(itN, wantN) {
						t.Fatalf("%s:%q with norms: bulk %d postings, iterator %d, Bleve %d; first difference %d", field, term, len(gotN), len(itN), len(wantN), firstDiff(gotN, wantN))
					}
				}
			}
			if n == 0 {
				t.Fatal("no postings compared")
			}
			if sh.chunks && spanning == 0 {
				t.Fatal("no list spans several chunks")
			}
			t.Logf("%d segments, %d terms, %d postings, %d lists over several chunks; varints of 1/2/3+ bytes: freq %v, norm %v; %d counted scans",
				len(pr.segs), len(vocab), n, spanning, wide[:3], wide[3:], counted)
			countedAll += counted
			// The decoder reads 1- and 2-byte varints itself, longer ones
			// (and a frequency's of 2) in a function.
			if wide[0] == 0 || wide[3] == 0 || wide[4] == 0 {
				t.Fatal("the postings do not cover varints of 1 and 2 bytes")
			}
			long = long || wide[1] > 0 && wide[5] > 0
		})
	}
}

// scanAll drains a postingReader scan (next or nextNorm) and returns its
// postings and the largest batch it gave.
func scanAll[T any](t *testing.T, next func() ([]T, error)) (all []T, most int) {
	t.Helper()
	for {
		ps, err := next()
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			return all, most
		}
		most = max(most, len(ps))
		all = append(all, ps...)
	}
}

// TestRowsOfPairs: pairs turned into postings in place give each
// document the row its run (or the row map) says, batches within one run
// and across several alike, and the row map's -1 rows left out.
func TestRowsOfPairs(t *testing.T) {
	seed := postingsSeed(t)
	r := rand.New(rand.NewSource(seed))
	for round := range 200 {
		// A segment of runs of 1–40 documents, each run moved by its own
		// delta; its row map says the same.
		var runs []rowRun
		var m []int32
		next := uint32(0)
		for range 1 + r.Intn(12) {
			l := uint32(1 + r.Intn(40))
			delta := int32(r.Intn(1000))
			runs = append(runs, rowRun{next, next + l, delta})
			for d := next; d < next+l; d++ {
				m = append(m, int32(d)+delta)
			}
			next += l
		}
		// Ascending documents, some of them.
		var docs []uint32
		for d := uint32(0); d < next; d++ {
			if r.Intn(3) > 0 {
				docs = append(docs, d)
			}
		}
		if len(docs) == 0 {
			continue
		}
		docs = docs[:min(len(docs), 256)]
		// Some rows of the map forgotten (-1), for the path without runs.
		mm := slices.Clone(m)
		for j := range mm {
			if r.Intn(5) == 0 {
				mm[j] = -1
			}
		}
		for _, useRuns := range []bool{true, false} {
			p := &postingReader{ix: &Index{rowMap: mm}, offs: []uint64{0}}
			if useRuns {
				p.rowsOK, p.rowRuns = []int8{3}, [][]rowRun{runs}
			} else {
				p.rowsOK, p.rowRuns = []int8{1}, [][]rowRun{nil}
			}
			var want []rowFreq
			for j, d := range docs {
				p.pairs[j] = zap.Pair{Doc: d, Freq: uint32(j + 1)}
				row := mm[d]
				if useRuns {
					row = int32(d) + runOf(runs, d).delta
				}
				if row >= 0 {
					want = append(want, rowFreq{row, uint32(j + 1)})
				}
			}
			got, err := p.rowsOfPairs(len(docs), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, runs %v: %d postings, want %d; first difference at %d", round, useRuns, len(got), len(want), firstDiff(got, want))
			}
		}
	}
}
