package search

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gitmem/git-mem/search/embed"
)

// contextDocs: a short conversation where the answer ("the kids loved the
// dinosaur bones") does not repeat the topic word of the exchange before it
// ("museum"), plus unrelated sessions and one long self-contained exchange.
func contextDocs() []Doc {
	docs := []Doc{
		{ID: "a1", Session: "a", Verbatim: "user: we went to the natural history museum on saturday\n\nassistant: how was it"},
		{ID: "a2", Session: "a", Verbatim: "user: the kids loved the dinosaur bones\n\nassistant: that sounds fun"},
		{ID: "a3", Session: "a", Verbatim: "user: next week we try the aquarium\n\nassistant: nice plan"},
		{ID: "b1", Session: "b", Verbatim: "user: my dinosaur drawing won a prize\n\nassistant: congratulations"},
		{ID: "c1", Session: "c", Verbatim: "user: the museum cafe was closed\n\nassistant: too bad"},
		{ID: "n1", Verbatim: "user: a museum without a session\n\nassistant: ok"},
	}
	long := strings.Repeat("migration schema postgres index vacuum analyze ", 40)
	docs = append(docs,
		Doc{ID: "d1", Session: "d", Verbatim: "user: museum " + long},
		Doc{ID: "d2", Session: "d", Verbatim: "user: dinosaur " + long},
	)
	for i := range docs {
		docs[i].Seq = i
		docs[i].Commit = docs[i].ID
		docs[i].Core = "card " + docs[i].ID
	}
	return docs
}

func TestSessionNeighbours(t *testing.T) {
	recs := []docRec{
		{Seq: 0, Session: "a", VerbLen: 3}, {Seq: 1, Session: "b", VerbLen: 4}, {Seq: 2, Session: "a", VerbLen: 5},
		{Seq: 3, Session: "", VerbLen: 6}, {Seq: 4, Session: "a", VerbLen: 7}, {Seq: 5, Session: "", VerbLen: 8},
	}
	for i := range recs {
		recs[i].HeadLen, recs[i].AskLen = 1, int32(i%2)
	}
	rows := neighbours(recs)
	var prev, next, lens []int32
	for _, r := range rows {
		prev, next, lens = append(prev, r.prev), append(next, r.next), append(lens, r.verb)
	}
	if want := []int32{-1, -1, 0, -1, 2, -1}; !reflect.DeepEqual(prev, want) {
		t.Errorf("prev = %v, want %v", prev, want)
	}
	if want := []int32{2, -1, 4, -1, -1, -1}; !reflect.DeepEqual(next, want) {
		t.Errorf("next = %v, want %v", next, want)
	}
	if want := []int32{3, 4, 5, 6, 7, 8}; !reflect.DeepEqual(lens, want) {
		t.Errorf("lens = %v", lens)
	}
	defer setFloat(&SessionLenPow, 1.0)() // the streams' arithmetic; the bend is TestSessionLenPow's
	c := newSessionCtx(rows, nil)
	// Row 2: prev row 0 (no question), next row 4 (head 1).
	r2 := ContextLenRef / (ContextLenRef + 5)
	w2, a2 := ContextWeight*r2, AskedWeight*r2
	if math.Abs(c.weight[2]-w2) > 1e-12 || math.Abs(c.askedWeight(2)-a2) > 1e-12 || math.Abs(c.dl[2]-(5+w2*(3+7+1))) > 1e-12 {
		t.Errorf("row 2: weight %v asked %v dl %v", c.weight[2], c.askedWeight(2), c.dl[2])
	}
	// Row 4: prev row 2 (asks: 0), so only its verbatim joins.
	recs[2].AskLen = 4
	c = newSessionCtx(neighbours(recs), nil)
	r4 := ContextLenRef / (ContextLenRef + 7)
	if want := 7 + ContextWeight*r4*5 + AskedWeight*r4*4; math.Abs(c.dl[4]-want) > 1e-12 {
		t.Errorf("row 4: dl %v, want %v", c.dl[4], want)
	}
	if c.dl[3] != 6 {
		t.Errorf("a row without neighbours keeps its length: %v", c.dl[3])
	}
}

// setFloat sets *p to v and returns what puts it back.
func setFloat(p *float64, v float64) func() {
	old := *p
	*p = v
	return func() { *p = old }
}

// The bend keeps the mean and the order of the lengths, and moves each
// length away from the mean by the power: r·avg becomes r^p·avg.
func TestSessionLenPow(t *testing.T) {
	var recs []docRec
	for i, n := range []int32{3, 40, 12, 900, 60, 1} {
		recs = append(recs, docRec{Seq: i, Session: "", VerbLen: n})
	}
	rows := neighbours(recs)
	restore := setFloat(&SessionLenPow, 1.0)
	plain := newSessionCtx(rows, nil)
	restore()
	for _, p := range []float64{1.25, 1.2, 0.8} {
		restore := setFloat(&SessionLenPow, p)
		c := newSessionCtx(rows, nil)
		restore()
		if c.avgdl != plain.avgdl || c.pow != p {
			t.Errorf("p %v: mean %v (pow %v), want %v", p, c.avgdl, c.pow, plain.avgdl)
		}
		for i, d := range plain.dl {
			r := d / plain.avgdl
			if want := math.Pow(r, p) * plain.avgdl; math.Abs(c.dl[i]-want) > 1e-9*want {
				t.Errorf("p %v row %d: %v, want %v", p, i, c.dl[i], want)
			}
			if (r > 1) == (p > 1) && r != 1 && c.dl[i] <= d {
				t.Errorf("p %v row %d: %v did not move away from the mean (was %v)", p, i, c.dl[i], d)
			}
		}
	}
}

func TestAsksQuestion(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"How was it? Anything fun?", true},
		{"Sounds great! What kind of books do you have?", true},
		{"Done.\n\nWant me to add a test for it?", true},
		{"Should I also update the docs?**", true},
		{"Is that right? Let me know.", true},
		{"Was it fun?\n\nI fixed the build.", false}, // the question is not in the closing paragraph
		{"Use `a ?? b` or `x?.y` here.", false},
		{"return ok ? a : b", false},
		{"I fixed the build.", false},
		{"", false},
	} {
		if got := asksQuestion(c.text); got != c.want {
			t.Errorf("asksQuestion(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestSessionBM25Asked: when an exchange ends by asking, the next exchange
// (which opens with the answer) carries the question's words, so it
// outranks the question; without the question mark it does not.
func TestSessionBM25Asked(t *testing.T) {
	for _, c := range []struct {
		ask   string
		first string
	}{
		{"What kind of books do you keep in your library?", "a2"},
		{"I keep lots of books in my library.", "a1"},
	} {
		docs := []Doc{
			{ID: "a1", Session: "a", Head: "I started reading to the kids every night", Tail: c.ask,
				Verbatim: "user: I started reading to the kids every night\n\nassistant: " + c.ask},
			{ID: "a2", Session: "a", Head: "mostly classics and stories from other cultures", Tail: "lovely",
				Verbatim: "user: mostly classics and stories from other cultures\n\nassistant: lovely, books matter"},
			{ID: "b1", Session: "b", Head: "the build is green", Tail: "great",
				Verbatim: "user: the build is green\n\nassistant: great"},
		}
		for i := range docs {
			docs[i].Seq, docs[i].Commit, docs[i].Core = i, docs[i].ID, "card"
		}
		ix := buildIndex(t, t.TempDir(), docs)
		hs, err := ix.Search(Query{Text: "what books are in the library", Mode: ModeSessionBM25})
		ix.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hs); len(got) < 2 || got[0] != c.first {
			t.Errorf("closing with %q: %v, want %s first", c.ask, got, c.first)
		}
	}
}

// TestSessionBM25Output: the session layer ranks by what was said, so an
// exchange that talks about a bug outranks one whose tool output (a grep
// over old logs) repeats the words, which plain BM25 puts first; a word
// seen only in a tool's output still finds its exchange, by
// OutputWeight × the BM25 of the output field alone.
func TestSessionBM25Output(t *testing.T) {
	docs := []Doc{
		{ID: "x1", Session: "x", Verbatim: "user: the login test is flaky\n\nassistant: it clicks before the redirect; I made it wait for the redirect"},
		{ID: "x2", Session: "y", Verbatim: "user: search the logs\n\nassistant: here is what grep found\n\ntool grep: pattern=login",
			Output: "login redirect login redirect login redirect login redirect ECONNRESET"},
		{ID: "x3", Session: "z", Verbatim: "user: bump the go version\n\nassistant: done"},
	}
	for i := range docs {
		docs[i].Seq, docs[i].Commit, docs[i].Core = i, docs[i].ID, "card"
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	search := func(q, mode string) []Hit {
		t.Helper()
		hs, err := ix.Search(Query{Text: q, Mode: mode, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return hs
	}
	if got := ids(search("login redirect", ModeVerbatimBM25)); len(got) == 0 || got[0] != "x2" {
		t.Fatalf("verbatim-bm25: %v, want x2 first (else the test shows nothing)", got)
	}
	if got := ids(search("login redirect", ModeSessionBM25)); len(got) < 2 || got[0] != "x1" {
		t.Errorf("session-bm25: %v, want x1 (the talk) before x2 (the output)", got)
	}
	hs := search("econnreset", ModeSessionBM25)
	if len(hs) != 1 || hs[0].Doc.ID != "x2" {
		t.Fatalf("a word only in a tool's output: %v, want [x2]", ids(hs))
	}
	out := embed.Analyze(docs[1].Output)
	n, df, f := 3.0, 1.0, 1.0
	avg := float64(len(out)) / n
	idf := math.Log(1 + (n-df+0.5)/(df+0.5))
	want := OutputWeight * idf * f * (BM25K1 + 1) / (f + BM25K1*(1-BM25B+BM25B*float64(len(out))/avg))
	if math.Abs(hs[0].Score-want) > 1e-9 {
		t.Errorf("output-only score %.12f, by hand %.12f", hs[0].Score, want)
	}
}

func TestSessionBM25(t *testing.T) {
	dir := t.TempDir()
	ix := buildIndex(t, dir, contextDocs())
	search := func(ix *Index, q, mode string) []string {
		t.Helper()
		hs, err := ix.Search(Query{Text: q, Mode: mode, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return ids(hs)
	}
	// The exchanges about the museum visit borrow each other's words: both
	// outrank b1, which only shares "dinosaur", while plain BM25 puts the
	// short b1 first. The long exchange d2 borrows next to nothing from d1.
	plain := search(ix, "dinosaur museum", ModeVerbatimBM25)
	ctx := search(ix, "dinosaur museum", ModeSessionBM25)
	if len(ctx) < 2 || !(ctx[0] == "a1" && ctx[1] == "a2" || ctx[0] == "a2" && ctx[1] == "a1") {
		t.Errorf("session-bm25: %v, want a1 and a2 first", ctx)
	}
	if plain[0] != "b1" {
		t.Errorf("verbatim-bm25: %v, want b1 first (else the test shows nothing)", plain)
	}
	pos := func(list []string, id string) int {
		for i, x := range list {
			if x == id {
				return i
			}
		}
		return -1
	}
	if pos(ctx, "d2") < pos(ctx, "b1") {
		t.Errorf("long exchange d2 gained from its neighbour: %v", ctx)
	}
	// A filter applies after the context: a2 alone still carries "museum".
	hs, err := ix.Search(Query{Text: "museum", Mode: ModeSessionBM25, K: 10, Filter: Filter{Session: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hs); len(got) < 2 || got[0] != "a1" || pos(got, "a2") < 0 {
		t.Errorf("filtered: %v", got)
	}
	writer := search(ix, "dinosaur museum kids", ModeSessionBM25)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// A reader loads the saved neighbour table and ranks the same.
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := search(ro, "dinosaur museum kids", ModeSessionBM25); !reflect.DeepEqual(got, writer) {
		t.Errorf("reader %v, writer %v", got, writer)
	}
	ro.Close()

	// A damaged table is reported with the fix, never silently ignored.
	path := filepath.Join(dir, contextFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The seal finds it at open (the file changed since it was written).
	if _, err := OpenReadOnly(dir, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("damaged context table: open err = %v, want ErrCorrupt", err)
	}
	// Damage the seal cannot see (the time put back) is found by the
	// table's own checksum when a search reads it.
	if err := writeSeal(dir, nil); err != nil {
		t.Fatal(err)
	}
	ro, err = OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Search(Query{Text: "museum", Mode: ModeSessionBM25}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("damaged context table: err = %v, want ErrCorrupt", err)
	}
}

// TestSessionBM25Incremental: adding the next exchange of a session later
// gives its predecessor context without re-indexing it, and the result is
// the same as indexing everything at once.
func TestSessionBM25Incremental(t *testing.T) {
	docs := contextDocs()
	all := buildIndex(t, t.TempDir(), docs)
	defer all.Close()
	dir := t.TempDir()
	inc := buildIndex(t, dir, docs[:1])
	if err := inc.Add(docs[1:]); err != nil {
		t.Fatal(err)
	}
	defer inc.Close()
	for _, q := range []string{"dinosaur museum", "aquarium kids", "museum"} {
		a, err := all.Search(Query{Text: q, Mode: ModeSessionBM25})
		if err != nil {
			t.Fatal(err)
		}
		b, err := inc.Search(Query{Text: q, Mode: ModeSessionBM25})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(a), ids(b)) {
			t.Errorf("%q: at once %v, incrementally %v", q, ids(a), ids(b))
		}
	}
}

// TestDateTerms: the month and year of an exchange are searchable words of
// its verbatim; the day is not.
func TestDateTerms(t *testing.T) {
	mk := func(id string, tm time.Time) Doc {
		return Doc{ID: id, Commit: id, Core: "card", Time: tm, Verbatim: "user: the cache eviction policy of service " + id + "\n\nassistant: switched to LRU"}
	}
	docs := []Doc{
		mk("jan", time.Date(2026, 1, 18, 9, 0, 0, 0, time.UTC)),
		mk("feb", time.Date(2026, 2, 3, 9, 0, 0, 0, time.UTC)),
		mk("mar", time.Date(2026, 3, 18, 9, 0, 0, 0, time.UTC)),
		mk("none", time.Time{}),
	}
	for i := range docs {
		docs[i].Seq = i
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	for _, mode := range []string{ModeVerbatimBM25, ModeSessionBM25} {
		hs, err := ix.Search(Query{Text: "cache eviction in February 2026", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hs); len(got) != 4 || got[0] != "feb" {
			t.Errorf("%s: %v, want feb first", mode, got)
		}
		hs, err = ix.Search(Query{Text: "node 18", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != 0 {
			t.Errorf("%s: the day of the month matched a number: %v", mode, ids(hs))
		}
	}
	if got := dateTerms(time.Date(2026, 2, 3, 23, 0, 0, 0, time.FixedZone("x", -5*3600))); got != "February 2026" {
		t.Errorf("dateTerms = %q", got)
	}
}

// TestSessionBM25Concurrent: a reader serves fused searches (session-bm25
// beside the other layers) from several goroutines (run with -race).
func TestSessionBM25Concurrent(t *testing.T) {
	ro := readOnlyContextIndex(t)
	fusion := &FusionConfig{K: 60, Layers: []LayerWeight{{ModeSessionBM25, 1}, {ModeVerbatimBM25, 1}, {ModeDistilledVector, 1}}}
	want, err := ro.Search(Query{Text: "dinosaur museum kids", Mode: ModeFused, Fusion: fusion})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			got, err := ro.Search(Query{Text: "dinosaur museum kids", Mode: ModeFused, Fusion: fusion})
			if err == nil && !reflect.DeepEqual(ids(got), ids(want)) {
				err = errors.New("results differ between goroutines")
			}
			errs <- err
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestCardField: two exchanges say the same words once in their talk; the
// one whose card names them ranks first with the card as a field, and the
// newer one (the tie-break) without it.
func TestCardField(t *testing.T) {
	docs := []Doc{
		{Seq: 0, ID: "subject", Core: "Fix the login redirect loop on Safari", Context: "SameSite=None on the session cookie",
			Verbatim: "user: the login redirect keeps looping\n\nassistant: set SameSite=None on the cookie"},
		{Seq: 1, ID: "passing", Core: "Update the README install section", Context: "npm ci instead of npm install",
			Verbatim: "user: the login redirect keeps looping\n\nassistant: set SameSite=None on the cookie"},
	}
	for i := 0; i < 30; i++ {
		docs = append(docs, Doc{Seq: len(docs), ID: "other-" + string(rune('a'+i)), Core: "Tune the build cache",
			Verbatim: "user: the build is slow again\n\nassistant: enabled the cache for step " + string(rune('a'+i))})
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	def := CardWeight
	defer func() { CardWeight = def }()
	for _, c := range []struct {
		w    float64
		want string
	}{{0, "passing"}, {def, "subject"}} {
		CardWeight = c.w
		hits, err := ix.Search(Query{Text: "login redirect loop", Mode: ModeSessionBM25, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Doc.ID != c.want {
			t.Errorf("CardWeight %.2f: first %v, want %s", c.w, hits, c.want)
		}
	}
}

func TestExactQuery(t *testing.T) {
	for _, c := range []struct {
		q    string
		want bool
	}{
		{"Cannot read properties of undefined reading flip", true}, // pasted: many words, no '?'
		{"where does parseConfig fail", true},                      // camelCase
		{"the auth_middleware.go timeout", true},                   // a path
		{`the "retry budget" setting`, true},                       // quoted
		{"when did Caroline go to the support group?", false},
		{"self-care tips?", false}, // a hyphen is not code
		{"fix it", false},          // too few terms
	} {
		if got := exactQuery(c.q, len(queryTerms(c.q))); got != c.want {
			t.Errorf("exactQuery(%q) = %v, want %v", c.q, got, c.want)
		}
	}
}

// TestSessionTitle: the first turn of a session's first exchange scores for
// every exchange of the session (TitleWeight), and for no other session.
func TestSessionTitle(t *testing.T) {
	docs := contextDocs()
	for i := range docs {
		docs[i].Head, _, _ = strings.Cut(docs[i].Verbatim, "\n\n") // the first turn, as memory sets it
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	defer func(w float64) { TitleWeight = w }(TitleWeight)
	run := func(w float64) []string {
		TitleWeight = w
		hs, err := ix.Search(Query{Text: "saturday", Mode: ModeSessionBM25, K: 20})
		if err != nil {
			t.Fatal(err)
		}
		return ids(hs)
	}
	has := func(xs []string, x string) bool {
		for _, y := range xs {
			if y == x {
				return true
			}
		}
		return false
	}
	// "saturday" is only in a1's first turn; a3 is two exchanges on.
	if got := run(0); has(got, "a3") {
		t.Errorf("without the title a3 matches: %v", got)
	}
	got := run(0.1)
	if !has(got, "a3") || got[0] != "a1" {
		t.Errorf("with the title: %v, want a1 first and a3 in", got)
	}
	for _, other := range []string{"b1", "c1", "d1"} {
		if has(got, other) {
			t.Errorf("the title of session a scored %s of another session: %v", other, got)
		}
	}
}

// TestMapContext: the mapped neighbour table reads the same rows as the
// decoded one, in place on a little-endian host, and a damaged row is an
// error, never an index out of range in the scorer.
func TestMapContext(t *testing.T) {
	rows := []ctxRow{{-1, 2, 3, 1, 0, 9}, {-1, -1, 4, 1, 1, 0}, {0, -1, 5, 2, 0, 7}}
	path := filepath.Join(t.TempDir(), contextFile)
	if err := os.WriteFile(path, encodeContext(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	got, f, err := mapContext(path, len(rows))
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := readContext(path, len(rows))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) || !reflect.DeepEqual(decoded, rows) {
		t.Errorf("mapped %v, decoded %v, want %v", got, decoded, rows)
	}
	if hostLittleEndian && &got[0] != (*ctxRow)(unsafe.Pointer(&f.b[16])) {
		t.Error("rows were copied, not read in place")
	}
	if _, _, err := mapContext(path, len(rows)+1); err == nil {
		t.Error("a table of another row count was accepted")
	}
	// A row pointing past the table, under a checksum that matches (a
	// writer's bug rather than a disk's): refused by both readers.
	bad := append([]ctxRow(nil), rows...)
	bad[1].next = 3
	if err := os.WriteFile(path, encodeContext(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mapContext(path, len(rows)); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("mapped: err = %v, want row 1 out of range", err)
	}
	if _, err := readContext(path, len(rows)); err == nil {
		t.Error("decoded: a row out of range was accepted")
	}
}

// readOnlyContextIndex builds contextDocs' index and opens it read-only, as
// a search process does; it is closed when the test ends.
func readOnlyContextIndex(t *testing.T) *Index {
	t.Helper()
	dir := t.TempDir()
	buildIndex(t, dir, contextDocs()).Close()
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return ro
}
