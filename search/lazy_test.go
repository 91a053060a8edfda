package search

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	randv2 "math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// lazyTable writes recs as docs.bin, whole up to steps[0] and appended in
// segments up to each later step, and reads it back by its last state.
func lazyTable(t *testing.T, recs []docRec, steps []int) *table {
	t.Helper()
	p := filepath.Join(t.TempDir(), docsFile)
	st, err := writeTableState(p, recs[:steps[0]], 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range steps[1:] {
		keep, err := readTableState(p, true, &st)
		if err != nil {
			t.Fatal(err)
		}
		if st, err = appendTable(p, recs[len(keep.seqs):n], keep, st); err != nil {
			t.Fatal(err)
		}
	}
	tab, err := readTableState(p, true, &st)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestLazyRowsAsDecoded: what scanLazy reads of every row (dedup key,
// emptied or not, session, lengths, rooms' and files' rows, the row of
// each id) is what the records decoded whole say, for a table written
// whole and one appended to in segments; an id lookup finds the last row
// of an id and nothing for an unknown id, also when every id shares one
// hash slot; a record read lazily equals the one decoded eagerly.
func TestLazyRowsAsDecoded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []int
	}{
		{"whole", []int{300}},
		{"segments", []int{40, 41, 120, 300}},
		{"from empty", []int{0, 7, 300}},
		{"empty", []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.steps[len(tc.steps)-1]
			recs := randomRecs(randv2.New(randv2.NewPCG(3, uint64(len(tc.name)))), n)
			for i := range recs {
				switch i % 9 {
				case 4:
					recs[i] = docRec{Seq: recs[i].Seq, ID: deadID(int32(i)), Group: int32(i)} // as forget leaves it
				case 5:
					recs[i].Rooms = append(append(recs[i].Rooms, "project:x"), recs[i].Files...) // a project room; repeats
				case 7:
					recs[i].ID = recs[i-3].ID // an id twice: the later row is the id's
				}
			}
			tab := lazyTable(t, recs, tc.steps)
			lz, err := scanLazy(tab)
			if err != nil {
				t.Fatal(err)
			}
			eager := make([]docRec, n)
			if err := tab.all(eager); err != nil {
				t.Fatal(err)
			}
			lastRow := map[string]int32{}
			rooms, files := map[string][]int32{}, map[string][]int32{}
			for i := range recs {
				r := &eager[i]
				lastRow[r.ID] = int32(i)
				for _, s := range r.Rooms {
					rooms[s] = append(rooms[s], int32(i))
				}
				for _, s := range r.Files {
					files[s] = append(files[s], int32(i))
				}
				if lz.exact[i] != r.Exact || lz.isDead(int32(i)) != isDead(r.ID) || lz.dict[lz.sess[i]] != r.Session {
					t.Fatalf("row %d: exact %x dead %v session %q; decoded %x %v %q", i, lz.exact[i], lz.isDead(int32(i)),
						lz.dict[lz.sess[i]], r.Exact, isDead(r.ID), r.Session)
				}
				if l := lz.lens[i]; l.verb != r.VerbLen || l.head != r.HeadLen || l.asked != r.AskLen || l.out != r.OutLen {
					t.Fatalf("row %d: lengths %+v, decoded %+v", i, l, r)
				}
				one, err := tab.recWith(i, (&strDict{list: lz.dict}).get)
				if err != nil || !reflect.DeepEqual(one, *r) {
					t.Fatalf("row %d read lazily: %+v, %v; eagerly %+v", i, one, err, *r)
				}
			}
			named := func(m map[uint32][]int32) map[string][]int32 {
				out := map[string][]int32{}
				for ref, rows := range m {
					out[lz.dict[ref]] = rows
				}
				return out
			}
			if got := named(lz.rooms); !reflect.DeepEqual(got, rooms) && len(rooms)+len(got) > 0 {
				t.Errorf("rooms' rows %v, decoded %v", got, rooms)
			}
			if got := named(lz.files); !reflect.DeepEqual(got, files) && len(files)+len(got) > 0 {
				t.Errorf("files' rows %v, decoded %v", got, files)
			}
			lookups := func(lz *lazyRows) {
				t.Helper()
				for id, want := range lastRow {
					if got, ok := lz.rowOf(tab, id); !ok || got != want {
						t.Fatalf("row of %q: %d %v, want %d", id, got, ok, want)
					}
				}
				for _, id := range []string{"", "ex-", "no such id", "ex-1\x00"} {
					if r, ok := lz.rowOf(tab, id); ok && lastRow[id] != r {
						t.Fatalf("row of %q: %d, want none", id, r)
					}
				}
			}
			lookups(lz)
			// Every row under one hash: a lookup walks them and compares ids.
			for _, id := range []string{"ex-1", "no such id"} {
				one := *lz
				one.ids = make([]int32, len(lz.ids))
				for i := range n {
					one.putID(idSlot(id), int32(i))
				}
				want, known := lastRow[id]
				if got, ok := one.rowOf(tab, id); ok != known || ok && got != want {
					t.Fatalf("one hash: row of %q: %d %v, want %d %v", id, got, ok, want, known)
				}
			}
		})
	}
}

// TestScanRecTruncated: a record cut anywhere is refused by scanRec
// wherever decodeRec refuses it for its structure (scanRec does not read
// the time's or the link meta's contents), and one decodeRec reads is
// read alike by scanRec.
func TestScanRecTruncated(t *testing.T) {
	recs := randomRecs(randv2.New(randv2.NewPCG(9, 9)), 40)
	for i := range recs {
		if i%2 == 0 {
			recs[i].Link = &linkMeta{Change: i%4 == 0, Facts: [][2]string{{"port", fmt.Sprint(i)}}}
		}
		if i%3 == 0 {
			recs[i].Rooms, recs[i].Files = []string{"file:a", "concept:b"}, []string{"a.go"}
		}
	}
	d := newStrDict()
	for i := range recs {
		b := encodeRec(nil, &recs[i], d)
		for cut := 0; cut <= len(b); cut++ {
			var r docRec
			var s recScan
			derr := decodeRec(b[:cut], &r, d.get)
			serr := scanRec(b[:cut], &s, uint64(len(d.list)))
			if derr == nil && serr != nil {
				t.Fatalf("record %d cut at %d of %d: decoded, scan says %v", i, cut, len(b), serr)
			}
			if serr == nil && derr == nil && (string(s.id) != r.ID || s.exact != r.Exact || d.list[s.session] != r.Session) {
				t.Fatalf("record %d cut at %d: scanned %q %x, decoded %q %x", i, cut, s.id, s.exact, r.ID, r.Exact)
			}
		}
	}
}

// neighboursSorted is neighbours as it was before linkSessions: every row
// with a session sorted by (session, Seq, row).
func neighboursSorted(recs []docRec) []ctxRow {
	out := make([]ctxRow, len(recs))
	var rows []int32
	for i := range recs {
		out[i] = ctxRow{prev: -1, next: -1, verb: recs[i].VerbLen, head: recs[i].HeadLen, asked: recs[i].AskLen, out: recs[i].OutLen}
		if recs[i].Session != "" {
			rows = append(rows, int32(i))
		}
	}
	sort.Slice(rows, func(a, b int) bool {
		ra, rb := &recs[rows[a]], &recs[rows[b]]
		return cmp.Or(strings.Compare(ra.Session, rb.Session), cmp.Compare(ra.Seq, rb.Seq), cmp.Compare(rows[a], rows[b])) < 0
	})
	for i := 1; i < len(rows); i++ {
		if a, b := rows[i-1], rows[i]; recs[a].Session == recs[b].Session {
			out[a].next, out[b].prev = b, a
		}
	}
	return out
}

// TestNeighboursCounted: the neighbour table linked by counting sessions
// is the one sorting every row by (session, Seq, row) gives: rows in and
// out of Seq order, ties of Seq, no sessions, one session.
func TestNeighboursCounted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		sessions int // 0: none
		seq      func(rng *randv2.Rand, i int) int
	}{
		{"in order", 500, 40, func(_ *randv2.Rand, i int) int { return i }},
		{"shuffled", 500, 40, func(rng *randv2.Rand, _ int) int { return rng.IntN(1000) }},
		{"ties", 500, 7, func(rng *randv2.Rand, _ int) int { return rng.IntN(5) }},
		{"no sessions", 100, 0, func(_ *randv2.Rand, i int) int { return i }},
		{"one session", 300, 1, func(rng *randv2.Rand, i int) int { return i - rng.IntN(3) }},
		{"none", 0, 3, func(_ *randv2.Rand, i int) int { return i }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := randv2.New(randv2.NewPCG(5, uint64(tc.n)))
			recs := make([]docRec, tc.n)
			for i := range recs {
				recs[i] = docRec{Seq: tc.seq(rng, i), VerbLen: int32(i), HeadLen: 1, AskLen: int32(i % 3), OutLen: 7}
				if tc.sessions > 0 && rng.IntN(10) > 0 {
					recs[i].Session = fmt.Sprintf("s%d", rng.IntN(tc.sessions))
				}
			}
			if got, want := neighbours(recs), neighboursSorted(recs); !reflect.DeepEqual(got, want) {
				t.Fatalf("counted %v\nsorted %v", got, want)
			}
		})
	}
}

// indexFiles reads the files a writer leaves (the manifest without its
// time), for comparing two writers.
func indexFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []string{docsFile, contextFile, linksBinFile, eventsFile, sigsFile, vectorsFile, manifestFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == manifestFile {
			var m manifest
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m.Updated = time.Time{}
			b, _ = json.Marshal(m)
		}
		out[f] = string(b)
	}
	return out
}

// TestLazyWriterAsFull: a writer that loads its rows lazily leaves the
// same files (every table byte for byte, the manifest but its time) and
// the same search results as one that decoded every row at open, whatever
// it does: adds new ids (twice before closing), replaces a loaded id or
// one it added, adds an id twice in a batch, adds after a forget, runs a
// filtered search between adds, meets records stored without link meta.
func TestLazyWriterAsFull(t *testing.T) {
	docs := synthDocs(700, 5)
	for i := range docs {
		if i%3 == 0 {
			docs[i].Rooms = nil // linked through their files only
		}
	}
	queries := []string{"retry timeout", "parseConfig panic nil pointer", "deploy helm chart"}
	type step func(t *testing.T, ix *Index)
	add := func(ds ...Doc) step {
		return func(t *testing.T, ix *Index) {
			if err := ix.Add(ds); err != nil {
				t.Fatal(err)
			}
			last := slices.MaxFunc(ds, func(a, b Doc) int { return cmp.Compare(a.Seq, b.Seq) })
			if err := ix.SetLastCommit(last.Commit, last.Seq); err != nil {
				t.Fatal(err)
			}
		}
	}
	changed := func(d Doc) Doc { d.Core += " (edited)"; d.Commit = strings.Repeat("e", 40); return d }
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, ix *Index) // on the loaded index, by a full writer, before both
		steps []step
	}{
		{"new ids", nil, []step{add(docs[500:560]...)}},
		{"two adds", nil, []step{add(docs[500:501]...), add(docs[501:700]...)}},
		{"a loaded id replaced", nil, []step{add(append([]Doc{changed(docs[7])}, docs[500:520]...)...)}},
		{"an added id replaced", nil, []step{add(docs[500:600]...), add(append([]Doc{changed(docs[505])}, docs[600:650]...)...)}},
		{"an id twice in a batch", nil, []step{add(append(slices.Clone(docs[500:600]), changed(docs[500]))...)}},
		{"after a forget", func(t *testing.T, ix *Index) {
			if _, err := ix.ForgetDocs([]string{docs[3].ID, docs[99].ID}, nil); err != nil {
				t.Fatal(err)
			}
		}, []step{add(docs[500:600]...)}},
		{"a filtered search between adds", nil, []step{add(docs[500:600]...), func(t *testing.T, ix *Index) {
			if _, err := ix.Search(Query{Text: "retry", Mode: ModeFused, K: 5, Filter: Filter{Project: "billing"}}); err != nil {
				t.Fatal(err)
			}
		}, add(docs[600:700]...)}},
		{"no link meta stored", func(t *testing.T, ix *Index) {
			for i := range ix.recs {
				ix.recs[i].Link = nil
			}
			ix.touched = true
		}, []step{add(docs[500:600]...)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "base")
			ix := buildIndex(t, base, docs[:500])
			if tc.setup != nil {
				if err := ix.ensureFull(); err != nil {
					t.Fatal(err)
				}
				tc.setup(t, ix)
				if err := ix.SetLastCommit(docs[499].Commit, 499); err != nil {
					t.Fatal(err)
				}
			}
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			var files []map[string]string
			var results []map[string][]string
			var links [][]Link
			for _, lazy := range []bool{true, false} {
				dir := filepath.Join(t.TempDir(), fmt.Sprint(lazy))
				copyIndex(t, base, dir)
				w, err := Open(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if (w.lazy != nil) != (w.Count() > 0) {
					t.Fatalf("a writer over %d rows opened lazy %v", w.Count(), w.lazy != nil)
				}
				if !lazy {
					if err := w.ensureFull(); err != nil {
						t.Fatal(err)
					}
				}
				for _, s := range tc.steps {
					s(t, w)
				}
				ls, _, err := w.Links() // a lazy writer's links: the file's read, its own after them
				if err != nil {
					t.Fatal(err)
				}
				slices.SortFunc(ls, func(a, b Link) int { // the order is the file's (memory.resolveLinks sorts)
					return cmp.Or(strings.Compare(a.New, b.New), strings.Compare(a.Old, b.Old), cmp.Compare(a.Sim, b.Sim))
				})
				links = append(links, ls)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				files = append(files, indexFiles(t, dir))
				ro, err := OpenReadOnly(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := ro.Verify(); err != nil {
					t.Fatal(err)
				}
				results = append(results, allModesResults(t, ro, queries))
				ro.Close()
			}
			if before, _ := os.ReadFile(filepath.Join(base, linksBinFile)); string(before) == files[1][linksBinFile] {
				t.Fatal("the add derived no link: the test does not exercise the link buckets")
			}
			for f := range files[1] {
				if files[0][f] != files[1][f] {
					t.Errorf("%s: the lazy writer's (%d bytes) is not the full writer's (%d)", f, len(files[0][f]), len(files[1][f]))
				}
			}
			if !reflect.DeepEqual(results[0], results[1]) {
				t.Error("search results differ")
			}
			if !reflect.DeepEqual(links[0], links[1]) || len(links[0]) == 0 && tc.name != "a loaded id replaced" {
				t.Errorf("the writers' links: %v lazily, %v decoded", links[0], links[1])
			}
		})
	}
}

// TestLazyWriterDamagedTable: a writer opening an index whose document
// table is damaged (size and time put back, so that the seal does not see
// it) refuses it as corrupt, as a writer that decoded every row did: a
// byte of a committed record or of the appended tail flipped, the table
// cut short; and one whose signatures are damaged refuses to add.
func TestLazyWriterDamagedTable(t *testing.T) {
	docs := synthDocs(300, 8)
	for _, tc := range []struct {
		name    string
		file    string
		damage  func(b []byte) []byte
		atAdd   bool // found by the add, not by Open
		appends bool // the table was appended to before the damage
	}{
		{"a record's byte", docsFile, func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b }, false, false},
		{"the appended segment's byte", docsFile, func(b []byte) []byte { b[len(b)-5] ^= 0x01; return b }, false, true},
		{"the table cut", docsFile, func(b []byte) []byte { return b[:len(b)-100] }, false, true},
		{"a signature's byte", sigsFile, func(b []byte) []byte { b[len(b)-9] ^= 0x80; return b }, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			n := 300
			if tc.appends {
				n = 250
			}
			ix := buildIndex(t, dir, docs[:n])
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.appends {
				w, err := Open(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				add := docs[250:300]
				if err := w.Add(add); err != nil {
					t.Fatal(err)
				}
				if err := w.SetLastCommit(add[len(add)-1].Commit, add[len(add)-1].Seq); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			p := filepath.Join(dir, tc.file)
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, tc.damage(bytes.Clone(b)), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
			sealAgree(t, dir, tc.file)
			w, err := Open(dir, Options{})
			if !tc.atAdd {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Open of a damaged %s: %v", tc.file, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.Add(synthDocs(301, 8)[300:]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("an add onto damaged %s: %v", tc.file, err)
			}
		})
	}
}

// sealAgree makes the seal's entry of rel say rel's size and time, as if
// the writer had left the file so (only the manifest says then how long a
// table is, and its checksum what its bytes are).
func sealAgree(t *testing.T, dir, rel string) {
	t.Helper()
	s, err := readSeal(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	e := s[rel]
	e.Size, e.MTime = fi.Size(), fi.ModTime().UnixNano()
	s[rel] = e
	raw, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(dir, sealFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyIndex copies an index folder, times kept (the seal compares them).
func copyIndex(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		return os.Chtimes(filepath.Join(to, rel), fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSpillAsWhole: a writer that spills (writes its tables and lets go of
// its rows) every so many rows, as a rebuild does, ends with the index one
// that does not spill builds: the same records, vectors, signatures, links,
// neighbour table and digest, and the same search results; also when a
// spilled row is replaced or forgotten after a spill.
func TestSpillAsWhole(t *testing.T) {
	docs := synthDocs(600, 5)
	for i := range docs {
		if i%3 == 0 {
			docs[i].Rooms = nil // linked through their files only
		}
	}
	queries := []string{"retry timeout", "parseConfig panic nil pointer", "deploy helm chart"}
	changed := docs[30]
	changed.Core += " (edited)"
	changed.Commit = strings.Repeat("f", 40)
	for _, tc := range []struct {
		name    string
		every   int  // rows between spills (0: none)
		replace bool // re-add a spilled id after the last spill
		forget  bool // forget two spilled rows after the last spill
	}{
		{"every 100", 100, false, false},
		{"every batch of 37", 37, false, false},
		{"a spilled id replaced", 150, true, false},
		{"spilled rows forgotten", 150, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type built struct {
				files   map[string]string
				recs    []docRec
				vecs    [][]float32
				results map[string][]string
				links   []Link
			}
			var out []built
			for _, every := range []int{tc.every, 0} {
				dir := filepath.Join(t.TempDir(), "index")
				ix, err := Open(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < len(docs); i += 37 {
					if err := ix.Add(docs[i:min(i+37, len(docs))]); err != nil {
						t.Fatal(err)
					}
					if every > 0 && (i/every != min(i+37, len(docs))/every || every == 37) {
						if err := ix.Spill(); err != nil {
							t.Fatal(err)
						}
						if ix.lazy == nil || ix.lazy.n != len(ix.seqs) || !ix.vecs.Hollow() {
							t.Fatal("a spilled writer holds its rows")
						}
					}
				}
				if tc.replace {
					if err := ix.Add([]Doc{changed}); err != nil {
						t.Fatal(err)
					}
				}
				if tc.forget {
					if _, err := ix.ForgetDocs([]string{docs[5].ID, docs[170].ID}, nil); err != nil {
						t.Fatal(err)
					}
				}
				if err := ix.SetLastCommit("c", len(docs)); err != nil {
					t.Fatal(err)
				}
				if err := ix.Close(); err != nil {
					t.Fatal(err)
				}
				ro, err := OpenReadOnly(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := ro.Verify(); err != nil {
					t.Fatal(err)
				}
				b := built{files: indexFiles(t, dir), results: allModesResults(t, ro, queries)}
				if err := ro.ensureFull(); err != nil {
					t.Fatal(err)
				}
				b.recs = ro.recs
				if err := ro.ensureVectors(); err != nil {
					t.Fatal(err)
				}
				for i := range ro.vecs.Len() {
					b.vecs = append(b.vecs, ro.vecs.Row(i))
				}
				if b.links, _, err = ro.Links(); err != nil {
					t.Fatal(err)
				}
				slices.SortFunc(b.links, func(a, b Link) int {
					return cmp.Or(strings.Compare(a.New, b.New), strings.Compare(a.Old, b.Old), cmp.Compare(a.Sim, b.Sim))
				})
				ro.Close()
				out = append(out, b)
			}
			spilled, whole := out[0], out[1]
			for _, f := range []string{contextFile, linksBinFile, eventsFile, sigsFile} {
				if spilled.files[f] != whole.files[f] {
					t.Errorf("%s differs from the unspilled writer's", f)
				}
			}
			var ms, mw manifest
			json.Unmarshal([]byte(spilled.files[manifestFile]), &ms)
			json.Unmarshal([]byte(whole.files[manifestFile]), &mw)
			if ms.Digest != mw.Digest || ms.Docs != mw.Docs || !reflect.DeepEqual(ms.BM25, mw.BM25) || !reflect.DeepEqual(ms.Dead, mw.Dead) {
				t.Errorf("manifests differ: %+v\n%+v", ms, mw)
			}
			if !reflect.DeepEqual(spilled.recs, whole.recs) {
				t.Error("records differ")
			}
			if !reflect.DeepEqual(spilled.vecs, whole.vecs) {
				t.Error("vectors differ")
			}
			if !reflect.DeepEqual(spilled.results, whole.results) {
				t.Error("search results differ")
			}
			if !reflect.DeepEqual(spilled.links, whole.links) || len(whole.links) == 0 {
				t.Errorf("links: %d spilled, %d whole", len(spilled.links), len(whole.links))
			}
		})
	}
}
