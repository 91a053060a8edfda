package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// A read-only open with EarlyContext ranks and scores as one without, takes
// the context it read (from the cache or worked out), and meets the same
// error when the neighbour table is damaged or missing; weights changed
// after the open are the ones a search uses.
func TestEarlyContext(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs := sessCacheDocs(0, 50)
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	if err := ix.SetLastCommit(fmt.Sprintf("%040d", 49), 49); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ctxPath, cache := filepath.Join(dir, contextFile), filepath.Join(dir, sessCacheFile)
	good, err := os.ReadFile(ctxPath)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(ctxPath)
	if err != nil {
		t.Fatal(err)
	}
	// put writes context.bin with its old time, so the open's checks
	// against the seal pass and only the table's own checks can catch it.
	put := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(ctxPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(ctxPath, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	w0 := ContextWeight
	t.Cleanup(func() { ContextWeight = w0 })
	// search opens the index read-only, changes the weight to w after the
	// open, and returns the hits (ids and score bits) or the first error.
	search := func(early bool, w float64) (string, *Index, error) {
		t.Helper()
		ContextWeight = w0
		ix, err := OpenReadOnly(dir, Options{EarlyContext: early})
		if err != nil {
			return "", nil, err
		}
		defer ix.Close()
		if early {
			if ix.early == nil {
				t.Fatal("no early read started")
			}
			// The weights are knobs set before a search, never beside
			// one: the read done, they change.
			<-ix.early.done
		}
		ContextWeight = w
		var out string
		for _, q := range []string{"widget frobnicator", "restart the daemon", "cache rows story", "w7 fails log"} {
			hits, err := ix.Search(Query{Text: q, K: 10, Mode: ModeSessionBM25})
			if err != nil {
				return "", ix, err
			}
			for _, h := range hits {
				out += fmt.Sprintf("%s %x; ", h.Doc.ID, math.Float64bits(h.Score))
			}
			out += "\n"
		}
		if ix.early != nil {
			t.Error("the early read was not taken")
		}
		return out, ix, nil
	}
	damaged := append([]byte(nil), good...)
	damaged[16+contextRow*3+2] ^= 4 // a row's neighbour
	outOfRange := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(outOfRange[16+contextRow*3:], 1<<20) // prev
	binary.LittleEndian.PutUint32(outOfRange[12:], crc32.Checksum(outOfRange[16:], crcTable))
	for _, tc := range []struct {
		name   string
		before func()
		w      float64
		fail   bool
	}{
		{"no cache yet", func() { os.Remove(cache) }, w0, false},
		{"from the cache", func() {}, w0, false},
		{"weights changed after the open", func() {}, w0 + 0.25, false},
		{"damaged neighbour table", func() { put(damaged) }, w0, true},
		{"damaged, no cache", func() { os.Remove(cache) }, w0, true},
		{"table restored", func() { put(good) }, w0, false},
		{"a row out of range, checksum right", func() { put(outOfRange) }, w0, true},
	} {
		tc.before()
		want, _, werr := search(false, tc.w)
		got, ix, gerr := search(true, tc.w)
		if tc.fail {
			if ix == nil {
				t.Errorf("%s: the open failed (%v): the table's own checks were not reached", tc.name, gerr)
			}
			if gerr == nil || werr == nil || gerr.Error() != werr.Error() || !errors.Is(gerr, ErrCorrupt) {
				t.Errorf("%s: error %v, without the early read %v", tc.name, gerr, werr)
			}
			continue
		}
		if gerr != nil || werr != nil {
			t.Fatalf("%s: %v / %v", tc.name, gerr, werr)
		}
		if got != want || got == "" {
			t.Errorf("%s: hits\n%s want\n%s", tc.name, got, want)
		}
		if ix.sctx == nil {
			t.Errorf("%s: no session context kept", tc.name)
		}
	}
	// An index closed without a search waits for the read it started.
	put(good)
	ix, err = OpenReadOnly(dir, Options{EarlyContext: true})
	if err != nil {
		t.Fatal(err)
	}
	e := ix.early
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.done:
	default:
		t.Error("Close returned before the early read ended")
	}
}
