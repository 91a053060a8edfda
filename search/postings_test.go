package search

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	bleveindex "github.com/blevesearch/bleve_index_api"
	zap "github.com/blevesearch/zapx/v17"
)

// postingsSeed is logged, and GIT_MEM_TEST_SEED replays a run.
func postingsSeed(t *testing.T) int64 {
	seed := time.Now().UnixNano()
	if s := os.Getenv("GIT_MEM_TEST_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (GIT_MEM_TEST_SEED=%d replays it)", seed, seed)
	return seed
}

// directIndex builds an index of several segments (three batches) with
// deleted documents in them (a forget rewrites rows in place), the shape
// that the direct postings reader must number exactly as Bleve does.
func directIndex(t *testing.T, seed int64) (string, []Doc) {
	dir := t.TempDir()
	docs := synthDocs(900, seed)
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range [][]Doc{docs[:300], docs[300:650], docs[650:]} {
		if err := ix.Add(part); err != nil {
			t.Fatal(err)
		}
	}
	last := docs[len(docs)-1]
	if err := ix.SetLastCommit(last.Commit, last.Seq); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(seed))
	var gone []string
	for range 40 {
		gone = append(gone, docs[r.Intn(len(docs))].ID)
	}
	if _, err := ix.ForgetDocs(gone, nil); err != nil {
		t.Fatal(err)
	}
	if err := ix.SetLastCommit(last.Commit, last.Seq); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, docs
}

// vocabulary is every analysed term of the docs, sorted by first sight.
// randomQueries is n queries of 1–4 words of vocab, drawn from r.
func randomQueries(r *rand.Rand, vocab []string, n int) []string {
	var out []string
	for range n {
		w := make([]string, 1+r.Intn(4))
		for i := range w {
			w[i] = vocab[r.Intn(len(vocab))]
		}
		out = append(out, strings.Join(w, " "))
	}
	return out
}

func vocabulary(docs []Doc) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range docs {
		for _, t := range queryTerms(d.Verbatim + " " + d.Core + " " + d.Context + " " + d.Output) {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

func TestDirectPostingsMatchTermFieldReader(t *testing.T) {
	seed := postingsSeed(t)
	dir, docs := directIndex(t, seed)
	vocab := append(vocabulary(docs), "nosuchterm", "")
	for _, readOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("readOnly=%v", readOnly), func(t *testing.T) {
			ix, r, pr := directReader(t, dir, readOnly)
			// The comparison below covers the loops for zap's own lists
			// (read by zap.BulkPostings) only when the segments are zap's.
			if _, err := pr.open(fieldVerbatim, vocab[0], true); err != nil {
				t.Fatal(err)
			}
			for i, pl := range pr.pls {
				if _, ok := pl.(*zap.PostingsList); !ok || pr.its[i] != nil {
					t.Fatalf("a segment's postings list is a %T (iterator %T), not zap's read in bulk", pl, pr.its[i])
				}
			}
			if len(pr.segs) < 2 {
				t.Logf("only %d segment(s)", len(pr.segs))
			}
			ctx := context.Background()
			n := 0
			for _, term := range vocab {
				for _, field := range []string{fieldVerbatim, fieldHead, fieldAsked, fieldOutput, fieldDistilled} {
					want, err := ix.postings(ctx, r, map[uint64]int32{}, field, term, nil)
					if err != nil {
						t.Fatal(err)
					}
					got, err := pr.postings(ctx, field, term, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s:%q: direct %d postings, Bleve %d; first difference at %d", field, term, len(got), len(want), firstDiff(got, want))
					}
					wantN, err := ix.normPostings(ctx, r, map[uint64]int32{}, field, term, nil)
					if err != nil {
						t.Fatal(err)
					}
					gotN, err := pr.normPostings(ctx, field, term, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(gotN, wantN) {
						t.Fatalf("%s:%q with norms: direct %d postings, Bleve %d", field, term, len(gotN), len(wantN))
					}
					n += len(got)
				}
			}
			if n == 0 {
				t.Fatal("no postings compared")
			}
			t.Logf("%d terms, %d postings compared", len(vocab), n)
		})
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestDirectPostingsSameHits compares whole searches with the postings read
// directly against the same searches through Bleve's TermFieldReader:
// random queries of the docs' words, every hit's id, score, dedup group
// and tier identical.
func TestDirectPostingsSameHits(t *testing.T) {
	seed := postingsSeed(t)
	dir, docs := directIndex(t, seed)
	vocab := vocabulary(docs)
	r := rand.New(rand.NewSource(seed + 1))
	var queries []string
	for range 60 {
		k := 1 + r.Intn(8)
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[r.Intn(len(vocab))]
		}
		queries = append(queries, strings.Join(ws, " "))
	}
	// A question, a first-person ask and a relative time exercise the
	// frame, prompt and time knobs.
	queries = append(queries, "what did I change in the auth middleware last week?", "how do we retry the webhook queue?")
	for _, readOnly := range []bool{true, false} {
		ix, err := open(dir, Options{}, readOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			for _, mode := range []string{ModeSessionBM25, ModeVerbatimBM25} {
				search := func(bleve bool) []Hit {
					disableDirectPostings = bleve
					defer func() { disableDirectPostings = false }()
					hs, err := ix.Search(Query{Text: q, K: 20, Mode: mode})
					if err != nil {
						t.Fatal(err)
					}
					return hs
				}
				want, got := search(true), search(false)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("readOnly=%v %s %q:\n direct %v\n  Bleve %v", readOnly, mode, q, ids(got), ids(want))
				}
			}
		}
		ix.Close()
	}
}

// directReader opens the index in dir and a postingReader over its
// snapshot, which it must read directly; all closed when the test ends.
func directReader(t *testing.T, dir string, readOnly bool) (*Index, bleveindex.IndexReader, *postingReader) {
	t.Helper()
	ix, err := open(dir, Options{}, readOnly)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	cache, release := ix.rowCacheFor(r)
	t.Cleanup(release)
	pr := newPostingReader(ix, r, cache)
	if !pr.direct {
		t.Fatal("a scorch snapshot is not read directly")
	}
	return ix, r, pr
}
