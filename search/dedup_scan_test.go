package search

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// TestDedupScanGroupsAsMaps: documents added a few at a time (grouped by
// scanning the signatures) get exactly the groups that one batch grouped
// through the LSH maps gives, with exact copies, copies differing only in
// case and spacing, near copies (one word more in a long text, a few words changed), unrelated
// texts, a replaced id and a forgotten row along the way.
func TestDedupScanGroupsAsMaps(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	words := strings.Fields("deploy billing service retry queue cache token login redirect build test flaky timeout index merge branch config schema parser router session")
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[rng.Intn(len(words))]
		}
		return strings.Join(w, " ")
	}
	var texts []string
	for i := 0; i < 300; i++ {
		switch k := rng.Intn(6); {
		case k == 3 && len(texts) > 0: // a few words changed: near the threshold, either side
			w := strings.Fields(texts[rng.Intn(len(texts))])
			for m := 1 + rng.Intn(4); m > 0; m-- {
				w[rng.Intn(len(w))] = words[rng.Intn(len(words))] + "x"
			}
			texts = append(texts, strings.Join(w, " "))
		case k == 0 && len(texts) > 0: // exact copy
			texts = append(texts, texts[rng.Intn(len(texts))])
		case k == 1 && len(texts) > 0: // same after normalising
			texts = append(texts, strings.ToUpper(strings.ReplaceAll(texts[rng.Intn(len(texts))], " ", "  ")))
		case k == 2 && len(texts) > 0: // near copy
			texts = append(texts, texts[rng.Intn(len(texts))]+" "+words[rng.Intn(len(words))])
		default:
			texts = append(texts, text(150+rng.Intn(100)))
		}
	}
	docs := make([]Doc, len(texts))
	for i, s := range texts {
		docs[i] = Doc{Seq: i, ID: fmt.Sprintf("d%03d", i), Commit: fmt.Sprintf("%040x", i+1), Core: s[:20], Verbatim: "user: " + s}
	}
	replaced := docs[40]
	replaced.Verbatim = docs[7].Verbatim // the id's new blob copies another
	replaced.Commit = fmt.Sprintf("%040x", 9999)
	forget := []string{docs[3].ID, docs[11].ID}

	run := func(scan bool) ([]int32, bool) {
		old := dedupScanPairs
		defer func() { dedupScanPairs = old }()
		if !scan {
			dedupScanPairs = 0
		}
		ix, err := Open(t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		add := func(ds []Doc) {
			if err := ix.Add(ds); err != nil {
				t.Fatal(err)
			}
		}
		// The same sequence both ways: 150 rows, a forget, the rest, a replacement.
		for i := 0; i < 150; {
			n := 1 + rng.Intn(7)
			if !scan {
				n = 150
			}
			n = min(n, 150-i)
			add(docs[i : i+n])
			i += n
		}
		scanned := ix.exactIdx == nil
		if _, err := ix.ForgetDocs(forget, nil); err != nil {
			t.Fatal(err)
		}
		ix.exactIdx, ix.bands = nil, nil // as a new process would find them
		for i := 150; i < len(docs); {
			n := 1 + rng.Intn(7)
			if !scan {
				n = len(docs) - 150
			}
			n = min(n, len(docs)-i)
			add(docs[i : i+n])
			i += n
		}
		add([]Doc{replaced})
		return append([]int32(nil), ix.groups...), scanned
	}
	byScan, scanned := run(true)
	byMaps, mapped := run(false)
	if !scanned || mapped {
		t.Fatalf("paths not taken: scan run scanned=%v, maps run scanned=%v", scanned, mapped)
	}
	shared := 0
	for i := range byMaps {
		if byScan[i] != byMaps[i] {
			t.Errorf("row %d: group %d by scanning, %d through the maps", i, byScan[i], byMaps[i])
		}
		if byMaps[i] != int32(i) {
			shared++
		}
	}
	if shared < 50 {
		t.Errorf("only %d rows joined an earlier group: the test does not exercise grouping", shared)
	}
}

// BenchmarkDedupScan is one new row grouped by scanning 100,000 rows of
// random signatures, against building the maps for them (dedupScanPairs).
func BenchmarkDedupScan(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const rows = 100_000
	ix := &Index{recs: make([]docRec, rows+1), sigs: make([][sigLen]uint32, rows+1)}
	for i := range ix.sigs {
		for j := range ix.sigs[i] {
			ix.sigs[i][j] = rng.Uint32()
		}
		ix.recs[i] = docRec{ID: fmt.Sprintf("r%d", i), Exact: rng.Uint64()}
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			ix.scanGroupOf(rows, &ix.recs[rows])
		}
	})
	b.Run("maps", func(b *testing.B) {
		for b.Loop() {
			ix.exactIdx, ix.bands = nil, nil
			ix.buildDedupMaps()
		}
	})
}
