package search

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitmem/git-mem/search/embed"
)

func buildIndex(t testing.TB, dir string, docs []Doc) *Index {
	t.Helper()
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := ix.Add(docs); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if len(docs) > 0 {
		last := docs[len(docs)-1]
		if err := ix.SetLastCommit(last.Commit, last.Seq); err != nil {
			t.Fatalf("SetLastCommit: %v", err)
		}
	}
	return ix
}

func ids(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Doc.ID
	}
	return out
}

// TestBM25ByHand checks that a score is the textbook BM25 of the formula in
// bm25.go, computed here from the analysed texts; verbatim-bm25 reads an
// exchange's talk and tool output as one text.
func TestBM25ByHand(t *testing.T) {
	docs := []Doc{
		{Seq: 0, ID: "a", Verbatim: "the retry timeout fired twice,", Output: "retry again later"},
		{Seq: 1, ID: "b", Verbatim: "database connection pool exhausted under load while the cache warmed up slowly"},
		{Seq: 2, ID: "c", Verbatim: "retry"},
		{Seq: 3, ID: "d", Verbatim: "nothing relevant here at all, only words about lunch"},
	}
	for i := range docs {
		docs[i].Core = "card " + docs[i].ID
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	hits, err := ix.Search(Query{Text: "retries", Mode: ModeVerbatimBM25, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); !reflect.DeepEqual(got, []string{"c", "a"}) {
		t.Fatalf("hits = %v, want [c a]", got)
	}
	var total float64
	for _, d := range docs {
		total += float64(len(embed.Analyze(d.Verbatim)) + len(embed.Analyze(d.Output)))
	}
	n, df := 4.0, 2.0
	avgdl := total / n
	idf := math.Log(1 + (n-df+0.5)/(df+0.5))
	bm25 := func(text string) float64 {
		terms := embed.Analyze(text)
		f := 0.0
		for _, w := range terms {
			if w == "retri" {
				f++
			}
		}
		dl := float64(len(terms))
		return idf * f * (BM25K1 + 1) / (f + BM25K1*(1-BM25B+BM25B*dl/avgdl))
	}
	for i, want := range []float64{bm25(docs[2].Verbatim), bm25(docs[0].Verbatim + " " + docs[0].Output)} {
		if math.Abs(hits[i].Score-want) > 1e-9 {
			t.Errorf("hit %s score %.12f, hand BM25 %.12f", hits[i].Doc.ID, hits[i].Score, want)
		}
	}
}

func TestModesAndFilters(t *testing.T) {
	docs := synthDocs(600, 1)
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	mid := docs[300].Time
	tests := []struct {
		name   string
		filter Filter
		ok     func(Doc) bool
	}{
		{"none", Filter{}, func(Doc) bool { return true }},
		{"project", Filter{Project: "billing"}, func(d Doc) bool { return d.Project == "billing" }},
		{"agent", Filter{Agent: "codex"}, func(d Doc) bool { return d.Agent == "codex" }},
		{"session", Filter{Session: "s0010"}, func(d Doc) bool { return d.Session == "s0010" }},
		{"room", Filter{Rooms: []string{"file:middleware"}}, func(d Doc) bool { return contains(d.Rooms, "file:middleware") }},
		{"file suffix", Filter{Files: []string{"pool.go"}}, func(d Doc) bool { return contains(d.Files, "pkg/db/pool.go") }},
		{"file exact", Filter{Files: []string{"config.yaml"}}, func(d Doc) bool { return contains(d.Files, "config.yaml") }},
		{"since", Filter{Since: mid}, func(d Doc) bool { return !d.Time.Before(mid) }},
		{"until", Filter{Until: mid}, func(d Doc) bool { return !d.Time.After(mid) }},
		{"combined", Filter{Project: "gateway", Since: mid, Files: []string{"main.go"}}, func(d Doc) bool {
			return d.Project == "gateway" && !d.Time.Before(mid) && contains(d.Files, "cmd/server/main.go")
		}},
	}
	for _, tc := range tests {
		for _, mode := range Modes {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				hits, err := ix.Search(Query{Text: "retry timeout in authMiddleware", Mode: mode, K: 10, Filter: tc.filter})
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) == 0 {
					t.Fatal("no hits")
				}
				for i, h := range hits {
					if !tc.ok(h.Doc) {
						t.Errorf("hit %s fails the filter", h.Doc.ID)
					}
					if i > 0 && (h.Score > hits[i-1].Score || h.Score == hits[i-1].Score && h.Doc.Seq > hits[i-1].Doc.Seq) {
						t.Errorf("hits out of order at %d", i)
					}
					if h.Doc.Verbatim != "" {
						t.Errorf("hit carries the verbatim")
					}
				}
				if mode == ModeFused && len(hits[0].Layers) == 0 {
					t.Errorf("fused hit without layer ranks")
				}
			})
		}
	}
}

// TestCollapse: a status message repeated every week (with small changes)
// takes one slot and cannot push the rare exchange out of the top k.
func TestCollapse(t *testing.T) {
	var docs []Doc
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	weekly := "user: weekly deploy status for the gateway service please\n\nassistant: The deploy pipeline for the gateway " +
		"service finished, all health checks green, no retry timeout errors, the canary stayed within its error budget " +
		"and the rollout completed across every region without any manual intervention needed this week"
	for i := 0; i < 40; i++ {
		v := weekly
		if i%2 == 1 {
			v = weekly + " today" // near-identical, not identical
		}
		docs = append(docs, Doc{Seq: len(docs), ID: "weekly-" + string(rune('A'+i%26)) + string(rune('a'+i/26)),
			Time: base.AddDate(0, 0, 7*i), Core: "Weekly gateway deploy status: green, no retry timeout errors.",
			Context: "canary within error budget", Verbatim: v})
	}
	docs = append(docs, Doc{Seq: len(docs), ID: "rare", Time: base.AddDate(0, 0, 3),
		Core: "Gateway deploy failed once with a retry timeout in the canary.", Context: "retry_timeout=30s exceeded",
		Verbatim: "user: why did the gateway deploy fail\n\nassistant: the canary hit a retry timeout: retry_timeout=30s exceeded while draining"})
	docs = append(docs, synthDocs(200, 7)...)
	for i := range docs {
		docs[i].Seq = i
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	for _, mode := range Modes {
		hits, err := ix.Search(Query{Text: "gateway deploy retry timeout", Mode: mode, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		weeklySlots, rare := 0, false
		for _, h := range hits {
			if strings.HasPrefix(h.Doc.ID, "weekly-") {
				weeklySlots++
				if len(h.Collapsed) != 39 {
					t.Errorf("%s: weekly slot folds %d, want 39", mode, len(h.Collapsed))
				}
			}
			rare = rare || h.Doc.ID == "rare"
		}
		if weeklySlots > 1 || !rare {
			t.Errorf("%s: hits %v: weekly slots %d, rare found %v", mode, ids(hits), weeklySlots, rare)
		}
	}
}

func TestSignatureSimilarity(t *testing.T) {
	var words []string
	for i := 0; i < 150; i++ {
		words = append(words, fmt.Sprintf("w%d", i*7919%1000))
	}
	a := strings.Join(words, " ")
	tests := []struct {
		b    string
		want bool
	}{
		{strings.ToUpper(a), true},
		{strings.ReplaceAll(a, " ", "\n  "), true},
		{a + " lambda", true},
		{strings.Join(words[:120], " "), false}, // J = 0.79
		{"completely different words that share nothing with the greek alphabet at all here", false},
	}
	ea, sa := signature(a)
	for _, tc := range tests {
		eb, sb := signature(tc.b)
		if got := ea == eb || similar(&sa, &sb); got != tc.want {
			t.Errorf("similar(%.30q) = %v, want %v", tc.b, got, tc.want)
		}
	}
}

func allModesResults(t *testing.T, ix *Index, queries []string) map[string][]string {
	out := map[string][]string{}
	for _, q := range queries {
		for _, m := range Modes {
			hs, err := ix.Search(Query{Text: q, Mode: m, K: 20})
			if err != nil {
				t.Fatal(err)
			}
			out[m+"|"+q] = ids(hs)
		}
	}
	return out
}

// TestDeterministicRebuild: Remove + re-Add of the same docs gives the same
// ids in the same order, and so does a read-only reopen.
func TestDeterministicRebuild(t *testing.T) {
	docs := synthDocs(1200, 3)
	dir := filepath.Join(t.TempDir(), "index")
	queries := []string{"retry timeout", "parseConfig panic nil pointer", "error E0042 in pkg/db/pool.go", "deploy helm chart", "the"}
	ix := buildIndex(t, dir, docs[:700])
	if err := ix.Add(docs[700:]); err != nil { // incremental
		t.Fatal(err)
	}
	if err := ix.SetLastCommit(docs[1199].Commit, 1199); err != nil {
		t.Fatal(err)
	}
	before := allModesResults(t, ix, queries)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ro.Count() != 1200 || ro.LastCommit() != docs[1199].Commit {
		t.Errorf("reopened: count %d last %q", ro.Count(), ro.LastCommit())
	}
	if got := allModesResults(t, ro, queries); !reflect.DeepEqual(got, before) {
		t.Errorf("read-only reopen changed results")
	}
	ro.Close()
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	ix = buildIndex(t, dir, docs)
	defer ix.Close()
	after := allModesResults(t, ix, queries)
	for k, v := range before {
		if !reflect.DeepEqual(after[k], v) {
			t.Errorf("%s: before %v\nafter %v", k, v, after[k])
		}
	}
}

type fakeEmbedder struct {
	embed.Builtin
	name string
	dims int
}

func (f fakeEmbedder) Name() string { return f.name }
func (f fakeEmbedder) Dims() int    { return f.dims }

func TestOpenErrors(t *testing.T) {
	docs := synthDocs(50, 5)
	mk := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "index")
		ix := buildIndex(t, dir, docs)
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	tests := []struct {
		name   string
		damage func(dir string) error
		opt    Options
		want   error
	}{
		{"truncated vectors", func(dir string) error {
			p := filepath.Join(dir, vectorsFile)
			st, _ := os.Stat(p)
			return os.Truncate(p, st.Size()-7)
		}, Options{}, ErrCorrupt},
		{"flipped vector byte", func(dir string) error {
			p := filepath.Join(dir, vectorsFile)
			b, _ := os.ReadFile(p)
			b[100] ^= 0xff
			return os.WriteFile(p, b, 0o644)
		}, Options{}, ErrCorrupt},
		{"bad manifest", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, manifestFile), []byte(`{"schema": 1,`), 0o644)
		}, Options{}, ErrCorrupt},
		{"bleve gone", func(dir string) error { return os.RemoveAll(filepath.Join(dir, bleveDir)) }, Options{}, ErrCorrupt},
		{"table truncated", func(dir string) error { return os.Truncate(filepath.Join(dir, docsFile), 10) }, Options{}, ErrCorrupt},
		{"other embedder", func(string) error { return nil }, Options{Embedder: fakeEmbedder{name: "openai/x", dims: embed.BuiltinDims}}, ErrMismatch},
		{"other dims", func(string) error { return nil }, Options{Embedder: fakeEmbedder{name: "builtin/1", dims: 12}}, ErrMismatch},
		{"other schema", func(dir string) error {
			p := filepath.Join(dir, manifestFile)
			b, _ := os.ReadFile(p)
			return os.WriteFile(p, []byte(strings.Replace(string(b), fmt.Sprintf(`"schema": %d`, SchemaVersion), `"schema": 99`, 1)), 0o644)
		}, Options{}, ErrMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := mk(t)
			if err := tc.damage(dir); err != nil {
				t.Fatal(err)
			}
			for _, open := range []func(string, Options) (*Index, error){Open, OpenReadOnly} {
				ix, err := open(dir, tc.opt)
				if err == nil {
					// a reader verifies the vectors' checksum on first use
					_, err = ix.Search(Query{Text: "retry", Mode: ModeDistilledVector})
				}
				if !errors.Is(err, tc.want) {
					if ix != nil {
						ix.Close()
					}
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if !strings.Contains(err.Error(), "git mem reindex") {
					t.Errorf("error %q does not name the fix", err)
				}
			}
		})
	}
	t.Run("missing read-only", func(t *testing.T) {
		_, err := OpenReadOnly(filepath.Join(t.TempDir(), "none"), Options{})
		if !errors.Is(err, ErrMissing) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestReadOnlyWhileWriting: a searcher never hangs on a held index: it is
// refused at once (busy, or not sealed since its writer has not closed it).
// memory's index lock keeps readers away from writers in the first place.
func TestReadOnlyWhileWriting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	w := buildIndex(t, dir, synthDocs(20, 2))
	defer w.Close()
	start := time.Now()
	ro, err := OpenReadOnly(dir, Options{})
	if err == nil {
		ro.Close()
		t.Skip("this platform lets a reader share the writer's lock")
	}
	if !errors.Is(err, ErrBusy) && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrBusy or ErrCorrupt", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("waited %v", d)
	}
}

func TestBadInput(t *testing.T) {
	ix := buildIndex(t, t.TempDir(), synthDocs(100, 4))
	defer ix.Close()
	if _, err := ix.Search(Query{Text: "  \n"}); err == nil || err.Error() != "empty query" {
		t.Errorf("empty query: %v", err)
	}
	_, err := ix.Search(Query{Text: "retry", Mode: "magic"})
	if err == nil || !strings.Contains(err.Error(), strings.Join(Modes, ", ")) {
		t.Errorf("unknown mode: %v", err)
	}
	big := strings.Repeat("retry timeout authMiddleware parse config with some filler words ", 1600) // ~100 KB
	for _, m := range Modes {
		hs, err := ix.Search(Query{Text: big, Mode: m})
		if err != nil || len(hs) == 0 {
			t.Errorf("%s: 100 KB query: %d hits, %v", m, len(hs), err)
		}
	}
	if _, err := ix.Search(Query{Text: "the of and"}); err != nil {
		t.Errorf("stop-word query: %v", err)
	}
	if err := ix.Add([]Doc{{Seq: 1}}); err == nil {
		t.Error("doc without id accepted")
	}
}

// TestHNSWLayer forces the graph path on a small index: it is persisted,
// reloaded by a reader, and agrees with the exact scan on the top hits.
func TestHNSWLayer(t *testing.T) {
	docs := synthDocs(400, 11)
	exactDir, graphDir := filepath.Join(t.TempDir(), "e"), filepath.Join(t.TempDir(), "g")
	ex := buildIndex(t, exactDir, docs)
	defer ex.Close()
	old := HNSWCrossover
	HNSWCrossover = 100
	defer func() { HNSWCrossover = old }()
	g := buildIndex(t, graphDir, docs)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(graphDir, hnswFile)); err != nil {
		t.Fatalf("no graph written: %v", err)
	}
	ro, err := OpenReadOnly(graphDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	agree, total := 0, 0
	for _, q := range []string{"retry timeout", "parseConfig panic", "deploy helm chart", "jwt refresh cookie"} {
		a, err1 := ex.Search(Query{Text: q, Mode: ModeDistilledVector, K: 5})
		b, err2 := ro.Search(Query{Text: q, Mode: ModeDistilledVector, K: 5})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		want := map[string]bool{}
		for _, h := range a {
			want[h.Doc.ID] = true
		}
		for _, h := range b {
			total++
			if want[h.Doc.ID] {
				agree++
			}
		}
		if _, err := ro.Search(Query{Text: q, Mode: ModeDistilledVector, K: 5, Filter: Filter{Project: "billing"}}); err != nil {
			t.Fatal(err)
		}
	}
	if agree < total*9/10 {
		t.Errorf("graph agrees with exact on %d of %d hits", agree, total)
	}
}

// TestConcurrentSearch: a read-only index serves parallel searches (run
// with -race) with the same answers as serial ones.
func TestConcurrentSearch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	w := buildIndex(t, dir, synthDocs(300, 8))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qs := []Query{{Text: "retry timeout"}, {Text: "deploy helm", Filter: Filter{Project: "infra"}}, {Text: "parseConfig", Mode: ModeDistilledBM25}}
	want := make([][]string, len(qs))
	for i, q := range qs {
		hs, err := ix.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = ids(hs)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			i := g % len(qs)
			hs, err := ix.Search(qs[i])
			if err != nil || !reflect.DeepEqual(ids(hs), want[i]) {
				t.Errorf("query %d: %v %v", i, ids(hs), err)
			}
		}(g)
	}
	wg.Wait()
}
