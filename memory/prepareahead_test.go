package memory

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/search"
)

// TestPrepareAheadSameIndex: an add whose first documents were analysed
// while it stored (prepareAhead) leaves the same index as one that
// analysed them in the index update: the tables that hold no commit id
// byte-equal and the same hits with the same scores. Rebuilds (no index
// yet) and catch-ups, exchanges present already among the first, author
// dates with a zone offset and fractions of a second; the ahead is used
// where its documents are the index batch's, and not when it holds fewer.
func TestPrepareAheadSameIndex(t *testing.T) {
	cases := []struct {
		name                 string
		before               int // exchanges added (and indexed) first
		present              []int
		n, addBatch, ixBatch int
		used                 bool
	}{
		{name: "rebuild", n: 17, addBatch: 10, ixBatch: 7, used: true},
		{name: "rebuild, first add batch smaller than the index's", n: 17, addBatch: 5, ixBatch: 7, used: false},
		{name: "catch-up", before: 3, n: 12, addBatch: 10, ixBatch: 4, used: true},
		{name: "catch-up, some present already", before: 3, present: []int{0, 2}, n: 12, addBatch: 10, ixBatch: 4, used: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name string, from, to int, extra []int) string {
				var b strings.Builder
				for _, i := range extra {
					b.WriteString(aheadLine(i) + "\n")
				}
				for i := from; i < to; i++ {
					b.WriteString(aheadLine(i) + "\n")
				}
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			var first []int
			for i := 0; i < tc.before; i++ {
				first = append(first, 100+i)
			}
			early := write("early.jsonl", 0, 0, first)
			var again []int
			for _, i := range tc.present {
				again = append(again, 100+i)
			}
			file := write("ex.jsonl", 0, tc.n, again)
			run := func(on bool) (string, []Result, int64) {
				defer func(a, r, c int, o bool) {
					addBatch, rebuildBatch, catchUpBatch, prepareAheadOn = a, r, c, o
				}(addBatch, rebuildBatch, catchUpBatch, prepareAheadOn)
				addBatch, rebuildBatch, catchUpBatch, prepareAheadOn = tc.addBatch, tc.ixBatch, tc.ixBatch, on
				ctx := context.Background()
				m := newMemory(t)
				if tc.before > 0 {
					if rep, err := m.AddFiles(ctx, []string{early}, nil, "exchange", AddOptions{}); err != nil || rep.Added != tc.before || !rep.Indexed {
						t.Fatalf("early add: %+v %v", rep, err)
					}
				}
				used := aheadUsed.Load()
				rep, err := m.AddFiles(ctx, []string{file}, nil, "exchange", AddOptions{})
				if err != nil || rep.Added != tc.n || !rep.Indexed || rep.Present != len(tc.present) {
					t.Fatalf("add: %+v %v", rep, err)
				}
				used = aheadUsed.Load() - used
				res, _, err := m.Search(ctx, SearchQuery{Text: "retry timeout parser", K: 50})
				if err != nil {
					t.Fatal(err)
				}
				return m.currentGen(), res, used
			}
			genOff, resOff, usedOff := run(false)
			genOn, resOn, usedOn := run(true)
			if usedOff != 0 || (usedOn > 0) != tc.used {
				t.Fatalf("ahead used: off %d, on %d; want used %v", usedOff, usedOn, tc.used)
			}
			for _, f := range []string{"minhash.bin", "vectors.f32", "context.bin", "links.bin", "events.json"} {
				a, errA := os.ReadFile(filepath.Join(genOff, f))
				b, errB := os.ReadFile(filepath.Join(genOn, f))
				if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
					t.Fatalf("%s differs (%v, %v)", f, errA, errB)
				}
			}
			hits := func(rs []Result) string {
				var b strings.Builder
				for _, r := range rs {
					fmt.Fprintf(&b, "%s %v\n", r.Exchange, r.Score)
				}
				return b.String()
			}
			if len(resOff) == 0 || hits(resOff) != hits(resOn) {
				t.Fatalf("hits differ:\noff:\n%s\non:\n%s", hits(resOff), hits(resOn))
			}
		})
	}
}

// aheadLine is exchange i of TestPrepareAheadSameIndex: a tool's output
// every third, author dates in +05:30 with fractions of a second.
func aheadLine(i int) string {
	when := time.Date(2026, 1, 1+i%28, 23, 59, 59, 123456789, time.FixedZone("", 5*3600+1800)).Format(time.RFC3339Nano)
	tool := ""
	if i%3 == 0 {
		tool = fmt.Sprintf(`,{"role":"tool","name":"bash","text":"timeout after %d s in parser.go"}`, i)
	}
	return fmt.Sprintf(`{"id":"e%d","session":"s%d","time":%q,"turns":[{"role":"user","text":"why does the retry %d fail in the parser?"}%s,{"role":"assistant","text":"the timeout was %d ms; raised it"}]}`,
		i, i/4, when, i, tool, i*10)
}

// TestSameDoc: documents analysed ahead match the indexer's in every field
// but Seq and Commit, the time to the second and its offset.
func TestSameDoc(t *testing.T) {
	at := time.Date(2026, 3, 31, 23, 30, 0, 900, time.FixedZone("x", 3600))
	base := search.Doc{ID: "a", Time: at, Core: "c", Context: "x", Rooms: []string{"r"}, Files: []string{}, Project: "p", Agent: "g", Session: "s", Verbatim: "v", Output: "o", Head: "h", Tail: "t"}
	cases := []struct {
		name string
		edit func(d *search.Doc)
		same bool
	}{
		{"seq and commit", func(d *search.Doc) { d.Seq, d.Commit = 9, "abc" }, true},
		{"whole seconds, other zone name", func(d *search.Doc) { d.Time = at.Truncate(time.Second).In(time.FixedZone("", 3600)) }, true},
		{"nil files", func(d *search.Doc) { d.Files = nil }, true},
		{"other offset, same instant", func(d *search.Doc) { d.Time = at.UTC() }, false},
		{"a second later", func(d *search.Doc) { d.Time = at.Add(time.Second) }, false},
		{"id", func(d *search.Doc) { d.ID = "b" }, false},
		{"core", func(d *search.Doc) { d.Core = "d" }, false},
		{"context", func(d *search.Doc) { d.Context = "" }, false},
		{"rooms", func(d *search.Doc) { d.Rooms = []string{"r", "q"} }, false},
		{"files", func(d *search.Doc) { d.Files = []string{"f"} }, false},
		{"project", func(d *search.Doc) { d.Project = "" }, false},
		{"agent", func(d *search.Doc) { d.Agent = "" }, false},
		{"session", func(d *search.Doc) { d.Session = "" }, false},
		{"verbatim", func(d *search.Doc) { d.Verbatim = "w" }, false},
		{"output", func(d *search.Doc) { d.Output = "" }, false},
		{"head", func(d *search.Doc) { d.Head = "" }, false},
		{"tail", func(d *search.Doc) { d.Tail = "" }, false},
	}
	for _, tc := range cases {
		d := base
		tc.edit(&d)
		if got := sameDoc(&base, &d); got != tc.same {
			t.Errorf("%s: sameDoc %v, want %v", tc.name, got, tc.same)
		}
	}
	// A field added to search.Doc must be compared by sameDoc (and get a
	// case above), or an analysis made ahead could be used for a document
	// that differs in it.
	covered := []string{"Seq", "Commit", "ID", "Time", "Core", "Context", "Rooms", "Files",
		"Project", "Agent", "Session", "Verbatim", "Output", "Head", "Tail"}
	ty := reflect.TypeOf(search.Doc{})
	for i := range ty.NumField() {
		if name := ty.Field(i).Name; !slices.Contains(covered, name) {
			t.Errorf("search.Doc.%s is not compared by sameDoc", name)
		}
	}
}
