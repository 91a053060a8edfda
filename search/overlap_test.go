package search

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
)

// TestOverlappedBleveBatches: an Add whose Bleve batches are built two at
// a time (OverlapBleveBatches) introduces their segments in the order of
// the batches, as one after the other does, whatever batch finishes its
// build first; a document replaced by a later batch is gone from the
// earlier one's segment (it is not if the later segment comes in first);
// searches and the tables are those of the serial build.
func TestOverlappedBleveBatches(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, batch int
		replace  map[int]int // doc i re-adds the id of doc j (its text another)
	}{
		{"one batch", 5, 500, nil},
		{"two batches", 40, 20, nil},
		{"many batches", 301, 16, nil},
		{"batches of one", 9, 1, nil},
		{"replaced across batches", 200, 16, map[int]int{17: 3, 40: 39, 41: 0, 150: 17, 199: 100}},
		{"replaced within a batch", 64, 16, map[int]int{5: 2, 33: 32, 34: 20}},
		{"replaced by the next batch's first", 48, 16, map[int]int{16: 15, 32: 31}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := synthDocs(tc.n, int64(tc.n))
			for i, j := range tc.replace {
				docs[i].ID = docs[j].ID
			}
			for i := range docs {
				docs[i].Verbatim += " " + marker(i) // a word of this version alone
			}
			type built struct {
				order   []string
				results map[string][]string
				docs    map[string]string
				count   int
			}
			build := func(overlap bool) built {
				defer func(b int, o bool, h func(string)) { BatchSize, OverlapBleveBatches, segmentBuilt = b, o, h }(BatchSize, OverlapBleveBatches, segmentBuilt)
				BatchSize, OverlapBleveBatches = tc.batch, overlap
				var mu sync.Mutex
				var b built
				segmentBuilt = func(id string) {
					mu.Lock()
					b.order = append(b.order, id)
					mu.Unlock()
				}
				dir := filepath.Join(t.TempDir(), "index")
				ix := buildIndex(t, dir, docs)
				if err := ix.Close(); err != nil {
					t.Fatal(err)
				}
				segmentBuilt = nil
				ro, err := OpenReadOnly(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer ro.Close()
				if err := ro.Verify(); err != nil { // Bleve's live documents are the table's
					t.Fatalf("overlap %v: %v", overlap, err)
				}
				var queries []string
				for i := range docs {
					queries = append(queries, marker(i))
				}
				queries = append(queries, "retry timeout", "parseConfig panic nil pointer", "deploy helm chart")
				b.results = allModesResults(t, ro, queries)
				if b.docs, err = ro.Docs(); err != nil {
					t.Fatal(err)
				}
				b.count = ro.Count()
				// The living version of each id is found by its own word
				// only: the version it replaced is dead in Bleve.
				last := map[string]int{}
				for i, d := range docs {
					last[d.ID] = i
				}
				for i, d := range docs {
					hs, err := ro.Search(Query{Text: marker(i), Mode: ModeVerbatimBM25, K: 5})
					if err != nil {
						t.Fatal(err)
					}
					found := len(hs) > 0 && hs[0].Doc.ID == d.ID
					if want := last[d.ID] == i; found != want {
						t.Errorf("overlap %v: doc %d (%s, living %v) found by its word: %v", overlap, i, d.ID, want, found)
					}
				}
				return b
			}
			serial, overlapped := build(false), build(true)
			if !reflect.DeepEqual(serial.order, overlapped.order) {
				t.Errorf("segments introduced %v, one batch after the other %v", overlapped.order, serial.order)
			}
			if want := (tc.n + tc.batch - 1) / tc.batch; len(serial.order) != want {
				t.Errorf("%d segments built, want %d", len(serial.order), want)
			}
			if !reflect.DeepEqual(serial.results, overlapped.results) {
				t.Error("searches differ from the serial build's")
			}
			if !reflect.DeepEqual(serial.docs, overlapped.docs) || serial.count != overlapped.count {
				t.Errorf("tables differ: %d / %d documents", overlapped.count, serial.count)
			}
		})
	}
}

// marker is a word for document i alone: "zq" and its digits as letters.
func marker(i int) string {
	b := []byte("zq")
	for _, c := range fmt.Sprint(i) {
		b = append(b, byte('a'+c-'0'))
	}
	return string(b)
}

// TestSetBleveBatch: an Index given larger Bleve batches (SetBleveBatch,
// as a small rebuild does) builds one segment per batch of that size, in
// Add and AddPrepared, and its searches in every mode, tables and count
// are those of the default batches; a document replaced within a batch or
// by a later one is gone as before.
func TestSetBleveBatch(t *testing.T) {
	defer func(b int, h func(string)) { BatchSize, segmentBuilt = b, h }(BatchSize, segmentBuilt)
	BatchSize = 16
	docs := synthDocs(160, 160)
	for i, j := range map[int]int{17: 3, 40: 39, 150: 17, 159: 100} {
		docs[i].ID = docs[j].ID
	}
	for i := range docs {
		docs[i].Verbatim += " " + marker(i)
	}
	var queries []string
	for i := range docs {
		queries = append(queries, marker(i))
	}
	queries = append(queries, "retry timeout", "parseConfig panic nil pointer", "deploy helm chart")
	type built struct {
		results  map[string][]string
		docs     map[string]string
		count    int
		segments int
	}
	build := func(size int, prepared bool) built {
		var mu sync.Mutex
		var b built
		segmentBuilt = func(string) {
			mu.Lock()
			b.segments++
			mu.Unlock()
		}
		defer func() { segmentBuilt = nil }()
		dir := filepath.Join(t.TempDir(), "index")
		ix, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ix.SetBleveBatch(size)
		if prepared {
			err = ix.AddPrepared(Prepare(docs[:100]))
			if err == nil {
				err = ix.AddPrepared(Prepare(docs[100:]))
			}
		} else {
			err = ix.Add(docs)
		}
		if err != nil {
			t.Fatal(err)
		}
		last := docs[len(docs)-1]
		if err := ix.SetLastCommit(last.Commit, last.Seq); err != nil {
			t.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		ro, err := OpenReadOnly(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if err := ro.Verify(); err != nil {
			t.Fatalf("batches of %d: %v", size, err)
		}
		b.results = allModesResults(t, ro, queries)
		if b.docs, err = ro.Docs(); err != nil {
			t.Fatal(err)
		}
		b.count = ro.Count()
		return b
	}
	def := build(0, false)
	if def.segments != 10 {
		t.Fatalf("default: %d segments, want 10", def.segments)
	}
	for _, tc := range []struct {
		size     int
		prepared bool
		segments int
	}{{64, false, 3}, {1000, false, 1}, {64, true, 2 + 1}, {1000, true, 2}} {
		got := build(tc.size, tc.prepared)
		if got.segments != tc.segments {
			t.Errorf("batches of %d (prepared %v): %d segments, want %d", tc.size, tc.prepared, got.segments, tc.segments)
		}
		if !reflect.DeepEqual(got.results, def.results) {
			t.Errorf("batches of %d (prepared %v): searches differ from the default batches'", tc.size, tc.prepared)
		}
		if !reflect.DeepEqual(got.docs, def.docs) || got.count != def.count {
			t.Errorf("batches of %d (prepared %v): tables differ (%d / %d documents)", tc.size, tc.prepared, got.count, def.count)
		}
	}
}
