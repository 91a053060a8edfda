package search

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestRecordLinkMetaRoundTrip: a record keeps its link meta through the
// table's encoding, one written without it (before it was stored) decodes
// with none, and a damaged flag is an error, not a guess.
func TestRecordLinkMetaRoundTrip(t *testing.T) {
	base := docRec{Commit: "c1", ID: "x1", Core: "Set port: 9090", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Exact: 42}
	for _, tc := range []struct {
		name string
		link *linkMeta
	}{
		{"none", nil},
		{"empty", &linkMeta{}},
		{"change", &linkMeta{Change: true}},
		{"facts", &linkMeta{Change: true, Facts: [][2]string{{"port", "9090"}, {"version", "1.2.3"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			r.Link = tc.link
			var got docRec
			d := newStrDict()
			if err := decodeRec(encodeRec(nil, &r, d), &got, d.get); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, r) {
				t.Fatalf("decoded %+v, want %+v", got, r)
			}
		})
	}
	r := base
	r.Link = &linkMeta{Change: true}
	d := newStrDict()
	b := encodeRec(nil, &r, d)
	b[len(b)-2] = 0x80 // the flag byte (then a zero count)
	var got docRec
	if err := decodeRec(b, &got, d.get); err == nil {
		t.Fatal("a damaged link flag decoded")
	}
}

// TestStoredLinkMetaSameLinks: links derived from the meta stored with
// each record equal those derived from records that have none (an index
// written before the meta was stored, upgraded by the next add).
func TestStoredLinkMetaSameLinks(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 2, d, 0, 0, 0, 0, time.UTC) }
	var docs []Doc
	for i := 0; i < 40; i++ {
		file := []string{"config/server.yaml", "Makefile", "go.mod"}[i%3]
		core := []string{
			"Set port: %d in " + file + " for the API server.",
			"Bumped go to 1.%d in " + file + ".",
			"Switched the build in " + file + " to target %d instead.",
			"Fixed a typo in " + file + " (line %d).",
		}[i%4]
		docs = append(docs, Doc{Seq: i, ID: "e" + string(rune('a'+i/26)) + string(rune('a'+i%26)), Time: day(1 + i%27),
			Core: fmt.Sprintf(core, 8000+i), Rooms: []string{"file:" + file}, Files: []string{file}, Project: "atlas"})
	}
	links := func(strip bool) []Link {
		dir := t.TempDir()
		write := func(ds []Doc, strip bool) {
			ix, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := ix.Add(ds); err != nil {
				t.Fatal(err)
			}
			if strip { // as a binary from before stored them
				if err := ix.ensureFull(); err != nil {
					t.Fatal(err)
				}
				for i := range ix.recs {
					ix.recs[i].Link = nil
				}
			}
			if err := ix.SetLastCommit("c", ds[len(ds)-1].Seq); err != nil {
				t.Fatal(err)
			}
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
		}
		write(docs[:25], strip)
		write(docs[25:], false)
		return storedLinks(t, dir)
	}
	stored, stripped := links(false), links(true)
	if len(stored) == 0 {
		t.Fatal("no links: the test does not exercise the rule")
	}
	if !reflect.DeepEqual(stored, stripped) {
		t.Fatalf("links with stored meta %+v\nwithout %+v", stored, stripped)
	}
}
