package search

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// TestDedupScanGroupsAsMaps: documents added a few at a time (grouped by
// scanning the signatures) or in batches (dedupPass) get exactly the groups that one batch grouped
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

	// mode: "scan" (a few at a time, dedupScan), "pass" (batches of up to
	// 40, dedupPass) or "maps" (two big batches, buildDedupMaps); with
	// " reopened", the writer is closed and opened again after each batch,
	// so that it reads the rows before it lazily (lazyRows).
	run := func(mode string) ([]int32, string) {
		mode, reopened := strings.CutSuffix(mode, " reopened")
		oldPairs, oldFactor := dedupScanPairs, dedupPassFactor
		defer func() { dedupScanPairs, dedupPassFactor = oldPairs, oldFactor }()
		size := func(left int) int { return min(1+rng.Intn(7), left) }
		switch mode {
		case "pass":
			dedupScanPairs, dedupPassFactor = 0, 1000
			size = func(left int) int { return min(1+rng.Intn(40), left) }
		case "maps":
			dedupScanPairs, dedupPassFactor = 0, 0
			size = func(left int) int { return left }
		}
		dir := t.TempDir()
		ix, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { ix.Close() }()
		taken := map[string]bool{}
		add := func(ds []Doc) {
			if reopened {
				if err := ix.SetLastCommit("c", 0); err != nil {
					t.Fatal(err)
				}
				if err := ix.Close(); err != nil {
					t.Fatal(err)
				}
				if ix, err = Open(dir, Options{}); err != nil {
					t.Fatal(err)
				}
				if ix.lazy == nil {
					t.Fatal("a writer reopened is not lazy")
				}
			}
			scanned := ix.scanned
			if err := ix.Add(ds); err != nil {
				t.Fatal(err)
			}
			switch {
			case ix.exactIdx != nil:
				taken["maps"] = true
			case ix.scanned > scanned:
				taken["scan"] = true
			default:
				taken["pass"] = true
			}
		}
		// The same sequence every way: 150 rows, a forget, the rest, a replacement.
		for i := 0; i < 150; {
			n := size(150 - i)
			add(docs[i : i+n])
			i += n
		}
		if _, err := ix.ForgetDocs(forget, nil); err != nil {
			t.Fatal(err)
		}
		ix.exactIdx, ix.bands, ix.passed = nil, nil, 0 // as a new process would find them
		for i := 150; i < len(docs); {
			n := size(len(docs) - i)
			add(docs[i : i+n])
			i += n
		}
		path := fmt.Sprint(len(taken) == 1 && taken[mode])
		add([]Doc{replaced})
		return append([]int32(nil), ix.groups...), path
	}
	byMaps, mapped := run("maps")
	for _, mode := range []string{"scan", "pass", "scan reopened", "pass reopened"} {
		got, only := run(mode)
		if only != "true" || mapped != "true" {
			t.Fatalf("paths not taken: %s run only %s: %s, maps run only maps: %s", mode, mode, only, mapped)
		}
		shared := 0
		for i := range byMaps {
			if got[i] != byMaps[i] {
				t.Errorf("row %d: group %d by %s, %d through the maps", i, got[i], mode, byMaps[i])
			}
			if byMaps[i] != int32(i) {
				shared++
			}
		}
		if shared < 50 {
			t.Errorf("only %d rows joined an earlier group: the test does not exercise grouping", shared)
		}
	}
}

// BenchmarkDedupScan is one new row grouped by scanning 100,000 rows of
// random signatures, against building the maps for them (dedupScanPairs),
// and the rows read once for a batch of 1,000 (dedupPass).
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
	// pass: the 100,000 rows read once for a batch of 1,000 new documents.
	ix.exactIdx, ix.bands = nil, nil
	ix.recs, ix.sigs = ix.recs[:rows], ix.sigs[:rows]
	ix.byID = map[string]int32{}
	docs, preps := make([]Doc, 1000), make([]prep, 1000)
	for j := range docs {
		docs[j].ID = fmt.Sprintf("n%d", j)
		for k := range preps[j].sig {
			preps[j].sig[k] = rng.Uint32()
		}
	}
	b.Run("pass1000", func(b *testing.B) {
		for b.Loop() {
			ix.passed = 0
			if ix.dedupPass(docs, preps) == nil {
				b.Fatal("no pass")
			}
		}
	})
}

// TestBandIndexRemove: taking a row out of a key's chain at its head, in
// the middle, at its end and when it is the only one leaves what adding the
// rest alone gives.
func TestBandIndexRemove(t *testing.T) {
	for _, c := range []struct {
		rows   []int32
		remove int32
	}{
		{[]int32{1, 2, 3}, 3}, {[]int32{1, 2, 3}, 2}, {[]int32{1, 2, 3}, 1}, {[]int32{7}, 7}, {[]int32{1, 2}, 9},
	} {
		b, want := newBandIndex(0), newBandIndex(0)
		for _, r := range c.rows {
			b.add(42, r)
			b.add(1<<32+42, r+100) // the same 32 bits: one chain
			if r != c.remove {
				want.add(42, r)
			}
			want.add(1<<32+42, r+100)
		}
		b.add(5, 1)
		want.add(5, 1)
		b.remove(42, c.remove)
		if got, w := fmt.Sprint(b.lists()), fmt.Sprint(want.lists()); got != w {
			t.Errorf("rows %v less %d: %s, want %s", c.rows, c.remove, got, w)
		}
	}
}
