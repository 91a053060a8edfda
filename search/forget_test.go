package search

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// terms lists every term of the text fields in Bleve's dictionaries.
func terms(t *testing.T, ix *Index) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range []string{fieldVerbatim, fieldOutput, fieldDistilled, fieldHead, fieldAsked} {
		d, err := ix.idx.FieldDict(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			e, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			out[e.Term] = true
		}
		d.Close()
	}
	return out
}

// After ForgetDocs and Compact the forgotten words are in no dictionary,
// the other documents are found at their new commits, counts and digest
// are those of the living set, and the order of hits is a rebuild's.
func TestForgetDocsInPlace(t *testing.T) {
	var docs []Doc
	for i := 0; i < 30; i++ {
		docs = append(docs, Doc{Seq: i, ID: fmt.Sprintf("d%d", i), Commit: fmt.Sprintf("c%02d", i), Core: fmt.Sprintf("heron card %d", i),
			Verbatim: fmt.Sprintf("user: heron work number %d on the retry loop", i), Session: fmt.Sprintf("s%d", i/5)})
	}
	docs[12].Verbatim = "user: the quokka zanzibar value leaked, heron"
	dir := t.TempDir()
	ix := buildIndex(t, dir, docs)
	if !terms(t, ix)["zanzibar"] {
		t.Fatal("the word is not indexed to begin with")
	}
	moved := map[string]string{}
	for i := 13; i < 30; i++ {
		moved[fmt.Sprintf("c%02d", i)] = fmt.Sprintf("n%02d", i)
	}
	n, err := ix.ForgetDocs([]string{"d12", "nope"}, moved)
	if err != nil || n != 1 {
		t.Fatalf("ForgetDocs: %d %v", n, err)
	}
	if err := ix.SetLastCommit("n29", 29); err != nil {
		t.Fatal(err)
	}
	if err := ix.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if zaps, _ := filepath.Glob(filepath.Join(dir, "bleve", "store", "*.zap")); len(zaps) != 1 {
		t.Fatalf("segment files after compacting: %v", zaps)
	}
	ix, err = OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Verify(); err != nil {
		t.Fatalf("verify: %v", err)
	}
	sigs, err := readSigs(filepath.Join(dir, sigsFile), len(docs), ix.man.SigsCRC)
	if err != nil {
		t.Fatal(err)
	}
	if sigs[12] != ([sigLen]uint32{}) {
		t.Error("the forgotten row's signature is still saved")
	}
	for _, w := range []string{"quokka", "zanzibar"} {
		if terms(t, ix)[w] {
			t.Errorf("%q is still in a dictionary", w)
		}
	}
	// The same set built afresh.
	var living []Doc
	for i, d := range docs {
		if i == 12 {
			continue
		}
		if c, ok := moved[d.Commit]; ok {
			d.Commit = c
		}
		living = append(living, d)
	}
	fresh := buildIndex(t, t.TempDir(), living)
	defer fresh.Close()
	if ix.Count() != fresh.Count() || ix.Digest() != fresh.Digest() {
		t.Fatalf("count/digest %d %s, rebuilt %d %s", ix.Count(), ix.Digest(), fresh.Count(), fresh.Digest())
	}
	got, _ := ix.Docs()
	want, _ := fresh.Docs()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("docs %v, rebuilt %v", got, want)
	}
	for _, mode := range Modes {
		for _, q := range []string{"heron retry", "quokka zanzibar", "leaked value"} {
			a, err := ix.Search(Query{Text: q, Mode: mode, K: 40})
			if err != nil {
				t.Fatal(err)
			}
			b, err := fresh.Search(Query{Text: q, Mode: mode, K: 40})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range a {
				if h.Doc.ID == "d12" || strings.HasPrefix(h.Doc.ID, deadPrefix) {
					t.Fatalf("%s %q found the forgotten row", mode, q)
				}
			}
			if strings.Join(ids(a), ",") != strings.Join(ids(b), ",") {
				t.Errorf("%s %q: in place %v, rebuilt %v", mode, q, ids(a), ids(b))
			}
		}
	}
}

// Forgetting rows leaves the dedup maps as a rebuild without those rows
// builds them: an exact key passes to the next row that has it, band lists
// keep their order.
func TestForgetDocsDedupMapsAsRebuilt(t *testing.T) {
	var docs []Doc
	for i := 0; i < 24; i++ {
		text := fmt.Sprintf("standup note %d: deploy the billing service", i%4) // four groups of six
		docs = append(docs, Doc{Seq: i, ID: fmt.Sprintf("d%02d", i), Commit: fmt.Sprintf("%040x", i+1),
			Core: text, Verbatim: "user: " + text})
	}
	ix, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.ForgetDocs([]string{"d00", "d05", "d06", "d07"}, nil); err != nil {
		t.Fatal(err)
	}
	gotExact, gotBands := ix.exactIdx, ix.bands
	ix.exactIdx, ix.bands = nil, nil
	ix.buildDedupMaps()
	if fmt.Sprint(gotExact) != fmt.Sprint(ix.exactIdx) {
		t.Errorf("exact keys after forget %v, rebuilt %v", gotExact, ix.exactIdx)
	}
	if fmt.Sprint(gotBands.lists()) != fmt.Sprint(ix.bands.lists()) {
		t.Errorf("bands after forget differ from a rebuild's")
	}
	if len(gotExact) != 4 {
		t.Errorf("%d exact keys, want the 4 texts", len(gotExact))
	}
}
