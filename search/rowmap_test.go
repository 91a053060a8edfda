package search

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The saved row map serves read-only searches and is rebuilt after a writer
// changes the segments: results stay those of the documents on disk.
func TestRowMapFollowsWriters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	write := func(from, to int) {
		ix, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var docs []Doc
		for i := from; i < to; i++ {
			docs = append(docs, Doc{Seq: i, Commit: fmt.Sprintf("%040d", i), ID: fmt.Sprintf("d%d", i),
				Time: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC), Session: fmt.Sprintf("s%d", i/3),
				Core: fmt.Sprintf("task %d", i), Verbatim: fmt.Sprintf("user: fix widget number w%d in the frobnicator", i)})
		}
		if err := ix.Add(docs); err != nil {
			t.Fatal(err)
		}
		if err := ix.SetLastCommit(fmt.Sprintf("%040d", to-1), to-1); err != nil {
			t.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}
	search := func(q string) []string {
		ix, err := OpenReadOnly(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		var ids []string
		for _, mode := range []string{ModeSessionBM25, ModeVerbatimBM25} {
			hits, err := ix.Search(Query{Text: q, K: 3, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				ids = append(ids, mode+":"+h.Doc.ID)
			}
		}
		return ids
	}
	write(0, 30)
	first := search("widget w7 frobnicator")
	if _, err := os.Stat(filepath.Join(dir, rowMapFile)); err != nil {
		t.Fatalf("no row map saved: %v", err)
	}
	if again := search("widget w7 frobnicator"); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("with the saved map: %v, before %v", again, first)
	}
	if first[0] != ModeSessionBM25+":d7" {
		t.Fatalf("top hit %v", first)
	}
	write(30, 60)
	if got := search("widget w42 frobnicator"); got[0] != ModeSessionBM25+":d42" {
		t.Fatalf("after a writer added documents: %v", got)
	}
}
