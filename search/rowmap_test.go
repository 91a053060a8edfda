package search

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"
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

// TestRowMapInPlace: a saved row map is read in place from its mapping and
// maps every id as the built one did; one whose rows leave the table (the
// checksum matching) is not used but built again.
func TestRowMapInPlace(t *testing.T) {
	dir := t.TempDir()
	docs := make([]Doc, 20)
	for i := range docs {
		docs[i] = Doc{Seq: i, Commit: fmt.Sprintf("%040d", i), ID: fmt.Sprintf("d%d", i), Session: fmt.Sprintf("s%d", i/4),
			Core: "task", Verbatim: fmt.Sprintf("user: widget w%d", i)}
	}
	buildIndex(t, dir, docs).Close()
	open := func() (*Index, []int32) {
		ix, err := OpenReadOnly(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := ix.reader()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ix.ensureRowMap(r)
		return ix, ix.rowMap
	}
	ix, built := open()
	built = append([]int32(nil), built...)
	ix.Close()
	if len(built) < len(docs) {
		t.Fatalf("built map of %d ids for %d documents", len(built), len(docs))
	}
	path := filepath.Join(dir, rowMapFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, saved := open()
	if fmt.Sprint(saved) != fmt.Sprint(built) {
		t.Errorf("saved map %v, built %v", saved, built)
	}
	key, err := ix.snapshotKey()
	if err != nil {
		t.Fatal(err)
	}
	if m := ix.parseRowMap(b, key); m == nil || hostLittleEndian && unsafe.SliceData(m) != (*int32)(unsafe.Pointer(&b[44])) {
		t.Error("the saved map's rows were copied, not read in place")
	}
	ix.Close()
	// Damage: a row past the table, the checksum made to match.
	binary.LittleEndian.PutUint32(b[44:], uint32(len(docs)+5))
	n := int(binary.LittleEndian.Uint32(b[40:]))
	binary.LittleEndian.PutUint32(b[44+4*n:], crc32.Checksum(b[:44+4*n], crcTable))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ix, again := open()
	defer ix.Close()
	if fmt.Sprint(again) != fmt.Sprint(built) {
		t.Errorf("after damage: map %v, want it built again as %v", again, built)
	}
}
