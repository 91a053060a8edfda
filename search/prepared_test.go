package search

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestAddPreparedIsAdd: documents analysed ahead (Prepare, Keep,
// AddPrepared), with the next batch analysed while the last goes in as a
// rebuild does, give the index Add of the kept documents gives: the same
// results in every mode and byte-identical tables.
func TestAddPreparedIsAdd(t *testing.T) {
	docs := synthDocs(700, 11)
	keep := make([]bool, len(docs))
	var kept []Doc
	for i := range docs {
		keep[i] = i%7 != 3
		if keep[i] {
			kept = append(kept, docs[i])
		}
	}
	queries := []string{"retry timeout", "parseConfig panic nil pointer", "error E0042 in pkg/db/pool.go", "deploy helm chart", "the"}
	last := kept[len(kept)-1]

	dirA := filepath.Join(t.TempDir(), "index")
	a := buildIndex(t, dirA, kept)
	wantRes := allModesResults(t, a, queries)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// Prepared by the package's Prepare (AddPrepared embeds the cards) and
	// by the index's (the cards embedded ahead, beside AddPrepared).
	for _, byIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("byIndex=%v", byIndex), func(t *testing.T) {
			dirB := filepath.Join(t.TempDir(), "index")
			b, err := Open(dirB, Options{})
			if err != nil {
				t.Fatal(err)
			}
			prepare := Prepare
			if byIndex {
				prepare = b.Prepare
			}
			const batch = 200
			var prev chan *Prepared
			var prevKeep []bool
			add := func(p *Prepared, keep []bool) {
				if byIndex != (p.vecs != nil) {
					t.Fatalf("vectors made ahead: %v, want %v", p.vecs != nil, byIndex)
				}
				p.Keep(keep)
				if err := b.AddPrepared(p); err != nil {
					t.Fatal(err)
				}
			}
			for start := 0; start < len(docs); start += batch {
				end := min(start+batch, len(docs))
				next := make(chan *Prepared, 1)
				go func(ds []Doc) { next <- prepare(ds) }(append([]Doc(nil), docs[start:end]...))
				if prev != nil {
					add(<-prev, prevKeep)
				}
				prev, prevKeep = next, keep[start:end]
			}
			add(<-prev, prevKeep)
			if err := b.SetLastCommit(last.Commit, last.Seq); err != nil {
				t.Fatal(err)
			}
			if got := allModesResults(t, b, queries); !reflect.DeepEqual(got, wantRes) {
				t.Errorf("results differ:\n%v\nwant\n%v", got, wantRes)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{sigsFile, vectorsFile} {
				x, err := os.ReadFile(filepath.Join(dirA, f))
				if err != nil {
					t.Fatal(err)
				}
				y, err := os.ReadFile(filepath.Join(dirB, f))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(x, y) {
					t.Errorf("%s differs", f)
				}
			}
		})
	}
}

// TestPreparedKeep keeps the documents asked for, in order.
func TestPreparedKeep(t *testing.T) {
	docs := synthDocs(10, 2)
	p := Prepare(append([]Doc(nil), docs...))
	want := prepare(docs)
	keep := []bool{true, false, false, true, true, false, true, false, false, true}
	p.Keep(keep)
	j := 0
	for i := range docs {
		if !keep[i] {
			continue
		}
		if p.Docs()[j].ID != docs[i].ID || !reflect.DeepEqual(p.preps[j], want[i]) {
			t.Fatalf("kept %d: %s, want %s", j, p.Docs()[j].ID, docs[i].ID)
		}
		j++
	}
	if len(p.Docs()) != j || len(p.preps) != j {
		t.Fatalf("%d docs, %d preps kept, want %d", len(p.Docs()), len(p.preps), j)
	}
}
