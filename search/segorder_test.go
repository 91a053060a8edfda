package search

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	zap "github.com/blevesearch/zapx/v17"
)

func orderDocs(from, to int) []Doc {
	var docs []Doc
	for i := from; i < to; i++ {
		docs = append(docs, Doc{Seq: i, Commit: fmt.Sprintf("%040d", i), ID: fmt.Sprintf("d%d", i),
			Time: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC), Session: fmt.Sprintf("s%d", i/4),
			Core: fmt.Sprintf("task %d", i), Verbatim: fmt.Sprintf("user: fix widget w%d of the frobnicator, gadget g%d", i, i%7)})
	}
	return docs
}

// segmentRows lists, per segment of the index's current snapshot, the rows
// of its live documents in the order of their document numbers.
func segmentRows(t *testing.T, ix *Index) [][]int {
	t.Helper()
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		t.Fatalf("reader %T", r)
	}
	var out [][]int
	for _, s := range snap.Segments() {
		var rows []int
		for num := uint64(0); num < s.Segment().Count(); num++ { // deleted ones included
			if d := s.Deleted(); d != nil && d.Contains(uint32(num)) {
				continue
			}
			id, err := s.DocID(num)
			if err != nil {
				t.Fatal(err)
			}
			row, err := strconv.Atoi(string(id))
			if err != nil {
				t.Fatalf("doc id %q", id)
			}
			rows = append(rows, row)
		}
		out = append(out, rows)
	}
	return out
}

// withPlainZap runs f with Bleve's own zap v17 plugin as the default, as
// builds before the row order wrote segments; ours is restored after.
func withPlainZap(f func()) {
	scorch.RegisterSegmentPlugin(&zap.ZapPlugin{}, true)
	defer scorch.RegisterSegmentPlugin(rowOrderPlugin{&zap.ZapPlugin{}}, true)
	f()
}

func writeDocs(t *testing.T, dir string, batches [][]Doc, compact bool) {
	t.Helper()
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, docs := range batches {
		if err := ix.Add(docs); err != nil {
			t.Fatal(err)
		}
	}
	if compact {
		if err := ix.Compact(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.SetLastCommit(fmt.Sprintf("%040d", 999), 999); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
}

// A new segment numbers its documents in row order, whatever order scorch
// analysed them in; a merge keeps the rows ascending when its segments
// hold disjoint ranges of rows, and otherwise concatenates ascending runs
// (zap's merge appends segments): replaced rows go into a new segment, in
// row order too, and merged with the segment they replace rows of they
// make two runs.
func TestSegmentsInRowOrder(t *testing.T) {
	rev := func(d []Doc) []Doc { d = slices.Clone(d); slices.Reverse(d); return d }
	tests := []struct {
		name    string
		batches [][]Doc
		compact bool
		// whole: the snapshot's live rows ascend across all segments
		whole bool
		runs  int // ascending runs in a segment, at most
	}{
		{"one batch", [][]Doc{orderDocs(0, 300)}, false, true, 1},
		// A background merge puts its segment after the others.
		{"three batches", [][]Doc{orderDocs(0, 120), orderDocs(120, 250), orderDocs(250, 400)}, false, false, 1},
		{"three batches merged", [][]Doc{orderDocs(0, 120), orderDocs(120, 250), orderDocs(250, 400)}, true, true, 1},
		// Rows of re-added ids are their old rows, given in reverse.
		// (A background merge may have merged the two.)
		{"replaced rows", [][]Doc{orderDocs(0, 200), rev(orderDocs(40, 160))}, false, false, 2},
		{"replaced rows merged", [][]Doc{orderDocs(0, 200), rev(orderDocs(40, 160))}, true, false, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			writeDocs(t, dir, tc.batches, tc.compact)
			ix, err := OpenReadOnly(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			segs := segmentRows(t, ix)
			var all []int
			for i, rows := range segs {
				runs := 1
				for j := 1; j < len(rows); j++ {
					if rows[j] <= rows[j-1] {
						runs++
					}
				}
				if runs > tc.runs {
					t.Errorf("segment %d of %d: %d ascending runs, want at most %d: %v", i, len(segs), runs, tc.runs, rows)
				}
				all = append(all, rows...)
			}
			if tc.whole && !slices.IsSorted(all) {
				t.Errorf("rows across segments not ascending: %v", segs)
			}
			if tc.compact && len(segs) != 1 {
				t.Errorf("%d segments after the merge", len(segs))
			}
			if n := len(ix.seqs); len(all) != n {
				t.Errorf("%d live documents, %d rows", len(all), n)
			}
			// The row map built for searches agrees: consecutive
			// internal ids of live documents are consecutive rows.
			r, err := ix.reader()
			if err != nil {
				t.Fatal(err)
			}
			ix.ensureRowMap(r)
			r.Close()
			if ix.rowMap == nil {
				t.Fatal("no row map")
			}
			var live []int32
			for _, row := range ix.rowMap {
				if row >= 0 {
					live = append(live, row)
				}
			}
			if tc.whole {
				for i := 1; i < len(live); i++ {
					if live[i] != live[i-1]+1 {
						t.Fatalf("row map: id after row %d is row %d", live[i-1], live[i])
					}
				}
			}
		})
	}
}

// An index written before the row order (Bleve's own plugin: documents in
// the order their analysis finished) opens and searches as it did, and
// takes new documents beside its old segments; the same documents written
// in row order give the same hits, with scores equal but for the last bits
// of the per-row sums.
func TestRowOrderOldIndex(t *testing.T) {
	docs := orderDocs(0, 400)
	oldDir := filepath.Join(t.TempDir(), "old")
	withPlainZap(func() { writeDocs(t, oldDir, [][]Doc{docs[:200], docs[200:]}, false) })
	newDir := filepath.Join(t.TempDir(), "new")
	writeDocs(t, newDir, [][]Doc{docs[:200], docs[200:]}, false)

	open := func(dir string) *Index {
		ix, err := OpenReadOnly(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	oldIx := open(oldDir)
	shuffled := false
	for _, rows := range segmentRows(t, oldIx) {
		if !slices.IsSorted(rows) {
			shuffled = true
		}
	}
	if !shuffled {
		t.Fatal("the plain plugin wrote rows in order: this test shows nothing")
	}
	queries := []string{"widget w7 frobnicator", "gadget g3", "fix frobnicator w123 w321", "task 42"}
	search := func(ix *Index, q, mode string) []Hit {
		hits, err := ix.Search(Query{Text: q, K: 20, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	newIx := open(newDir)
	for _, q := range queries {
		for _, mode := range []string{ModeSessionBM25, ModeVerbatimBM25} {
			a, b := search(oldIx, q, mode), search(newIx, q, mode)
			if len(a) != len(b) || len(a) == 0 {
				t.Fatalf("%s %q: %d hits old, %d new", mode, q, len(a), len(b))
			}
			for i := range a {
				if a[i].Doc.ID != b[i].Doc.ID || math.Abs(a[i].Score-b[i].Score) > 1e-12*math.Max(1, math.Abs(a[i].Score)) {
					t.Fatalf("%s %q hit %d: old %s %v, new %s %v", mode, q, i, a[i].Doc.ID, a[i].Score, b[i].Doc.ID, b[i].Score)
				}
			}
		}
	}
	oldIx.Close()

	// Documents added to the old index go into a row-ordered segment
	// (which a background merge may have appended to old ones), and every
	// one is found.
	writeDocs(t, oldDir, [][]Doc{orderDocs(400, 500)}, false)
	ix := open(oldDir)
	added := 0
	for _, rows := range segmentRows(t, ix) {
		var got []int
		for _, r := range rows {
			if r >= 400 {
				got = append(got, r)
			}
		}
		if !slices.IsSorted(got) {
			t.Fatalf("the new rows in a segment: %v", got)
		}
		added += len(got)
	}
	if added != 100 {
		t.Fatalf("%d new rows in the segments, want 100", added)
	}
	for _, w := range []int{7, 250, 450, 499} {
		hits := search(ix, fmt.Sprintf("widget w%d", w), ModeSessionBM25)
		if len(hits) == 0 || hits[0].Doc.ID != fmt.Sprintf("d%d", w) {
			t.Fatalf("widget w%d: %v", w, hits)
		}
	}
}
