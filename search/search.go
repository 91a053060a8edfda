package search

import (
	"context"
	"errors"
	"fmt"
	"math"

	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gitmem/git-mem/search/embed"
)

// Search modes. A layer is one ranked retrieval; fused combines layers.
const (
	ModeVerbatimBM25    = "verbatim-bm25"
	ModeDistilledBM25   = "distilled-bm25"
	ModeDistilledVector = "distilled-vector"
	ModeFused           = "fused"
)

// DefaultMode is chosen by measurement on shared/eval (`git mem eval`,
// docs/bench/eval.md). With the offline defaults (heuristic cards, builtin
// embedder) session-bm25 ranks best on both benchmarks, a conversational
// one (LoCoMo) and a coding one, and no fusion with the builtin vectors
// beats it: the vector layer only pays with a real embedding model, where
// `fused` (search.mode in config.yaml) is the mode to measure.
const DefaultMode = ModeSessionBM25

// Modes lists every valid Query.Mode.
//
// session-bm25 came last and is listed last, so the list earlier modes
// were documented with stays a prefix.
var Modes = []string{ModeVerbatimBM25, ModeDistilledBM25, ModeDistilledVector, ModeFused, ModeSessionBM25}

// layerModes are the modes that rank on their own (all but fused).
var layerModes = []string{ModeVerbatimBM25, ModeDistilledBM25, ModeDistilledVector, ModeSessionBM25}

// LayerWeight is one layer of a fusion and its weight.
type LayerWeight struct {
	Layer  string
	Weight float64
}

// FusionConfig is a weighted reciprocal-rank fusion: a document's fused
// score is Σ weight/(K + rank) over the layers that retrieved it (rank 1 =
// best). RRF needs no score calibration between BM25 and cosine.
type FusionConfig struct {
	K      float64
	Layers []LayerWeight
}

// DefaultFusion follows the paper: BM25 over the verbatim plus vectors over
// the distilled card, k = 60 (Cormack et al.), with the verbatim read in its
// session context (session-bm25 measured above verbatim-bm25 in this fusion
// on both benchmarks, docs/bench/eval.md). Tune here.
var DefaultFusion = FusionConfig{K: 60, Layers: []LayerWeight{
	{ModeSessionBM25, 1},
	{ModeDistilledVector, 1},
}}

// Each layer retrieves max(CandidateMin, CandidateFactor·k) distinct groups
// before fusion.
var (
	CandidateMin    = 50
	CandidateFactor = 5
)

// MaxQueryTerms bounds the analysed terms of a query (a pasted 100 KB log
// keeps its first terms); MaxQueryEmbedBytes bounds the text sent to the
// embedder.
var (
	MaxQueryTerms      = 1000
	MaxQueryEmbedBytes = 8 << 10
)

// Query is one search.
type Query struct {
	Text   string
	K      int    // results wanted; 0 means 10
	Mode   string // one of Modes; "" means DefaultMode
	Filter Filter
	Fusion *FusionConfig // nil means DefaultFusion
	// Verbatim returns the talk and tool output (exchange.RenderSplit) of
	// each exchange, in order, for the exact-recall tier of session-bm25
	// (see ExactTierN); nil skips the tier. It is called once per search
	// with every candidate, so that the caller reads them in one batch.
	Verbatim func(refs []ExchangeRef) (talk, output []string, err error)
}

// ExchangeRef names a stored exchange: its id and the commit that added it
// (Doc.Commit), whose tree holds it.
type ExchangeRef struct {
	ID, Commit string
}

// Filter narrows every layer before ranking. Empty fields do not filter.
// Within Rooms or Files any listed value matches; fields combine with AND.
type Filter struct {
	Rooms   []string // exact "type:key"
	Files   []string // exact path, or a suffix on a '/' boundary ("auth.go" matches "pkg/auth.go")
	Project string
	Agent   string
	Session string
	Since   time.Time // inclusive
	Until   time.Time // inclusive
}

func (f *Filter) empty() bool {
	return len(f.Rooms) == 0 && len(f.Files) == 0 && f.Project == "" && f.Agent == "" &&
		f.Session == "" && f.Since.IsZero() && f.Until.IsZero()
}

func (f *Filter) match(r *docRec) bool {
	return f.Matches(Fields{Project: r.Project, Agent: r.Agent, Session: r.Session, Time: r.Time, Rooms: r.Rooms, Files: r.Files})
}

// Fields are what a Filter looks at in a stored exchange.
type Fields struct {
	Project, Agent, Session string
	Time                    time.Time
	Rooms, Files            []string
}

// Matches is the one filter implementation: search, log, rooms, context and
// the MCP tools all call it. Project, agent and rooms compare without case;
// a project also matches its room form (project:chef_chopsky, chef_chopsky
// and Chef-Chopsky name one project); a session compares exactly.
func (f *Filter) Matches(d Fields) bool {
	if f.Project != "" && !SameProject(d.Project, f.Project) || f.Agent != "" && !strings.EqualFold(d.Agent, f.Agent) ||
		f.Session != "" && d.Session != f.Session {
		return false
	}
	if !f.Since.IsZero() && d.Time.Before(f.Since) || !f.Until.IsZero() && d.Time.After(f.Until) {
		return false
	}
	if len(f.Rooms) > 0 && !anyOf(d.Rooms, f.Rooms, strings.EqualFold) {
		return false
	}
	if len(f.Files) > 0 && !anyOf(d.Files, f.Files, fileMatch) {
		return false
	}
	return true
}

// SameProject reports whether the stored project have is the one the user
// named: the same letters and digits, case and separators aside, with an
// optional "project:" (the room form) before it. It allocates nothing: it
// runs once per indexed exchange.
func SameProject(have, want string) bool {
	if len(want) > len("project:") && strings.EqualFold(want[:len("project:")], "project:") {
		want = want[len("project:"):]
	}
	if strings.EqualFold(have, want) {
		return true
	}
	i, j := 0, 0
	for {
		for i < len(have) && !isWordByte(have[i]) {
			i++
		}
		for j < len(want) && !isWordByte(want[j]) {
			j++
		}
		if i == len(have) || j == len(want) {
			return i == len(have) && j == len(want)
		}
		if lower(have[i]) != lower(want[j]) {
			return false
		}
		i, j = i+1, j+1
	}
}

// isWordByte: ASCII letters and digits, and every byte of a non-ASCII rune
// (compared as is, so "café" still differs from "cafe").
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func fileMatch(have, want string) bool {
	want = strings.TrimPrefix(want, "./")
	return have == want || strings.HasSuffix(have, "/"+want)
}

func anyOf(have, want []string, eq func(string, string) bool) bool {
	for _, h := range have {
		for _, w := range want {
			if eq(h, w) {
				return true
			}
		}
	}
	return false
}

// LayerScore is where one layer ranked a hit (Rank 1 = best).
type LayerScore struct {
	Rank  int
	Score float64
}

// Hit is one result slot. Doc.Verbatim is empty: the caller reads the
// exchange from git (gitstore) when it wants to show it.
type Hit struct {
	Doc    Doc
	Score  float64 // the mode's score: BM25, cosine, or fused RRF
	Layers map[string]LayerScore
	// Collapsed holds the ids of the identical or near-identical exchanges
	// (passing the filter) folded into this slot, newest first.
	Collapsed []string
	// Tier is the exact-recall rung that moved the hit up (TierPhrase,
	// TierTerms), "" for none.
	Tier string
}

// cand is one ranked group in a layer: its best member's row and score.
type cand struct {
	row   int32
	score float64
}

func contextBackground() context.Context { return context.Background() }

// Search runs q. Results are deterministic: ties in any ranking are broken by
// Seq, newer first.
func (ix *Index) Search(q Query) ([]Hit, error) {
	return ix.SearchContext(context.Background(), q)
}

// SearchContext is Search with a context (it bounds a remote embedder call).
func (ix *Index) SearchContext(ctx context.Context, q Query) ([]Hit, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, errors.New("empty query")
	}
	if q.K <= 0 {
		q.K = 10
	}
	if q.Mode == "" {
		q.Mode = DefaultMode
	}
	fusion := DefaultFusion
	if q.Fusion != nil {
		fusion = *q.Fusion
	}
	var layers []string
	switch q.Mode {
	case ModeVerbatimBM25, ModeSessionBM25, ModeDistilledBM25, ModeDistilledVector:
		layers = []string{q.Mode}
	case ModeFused:
		for _, l := range fusion.Layers {
			if l.Layer == ModeFused || !validLayer(l.Layer) {
				return nil, fmt.Errorf("fusion layer %q: want one of %s", l.Layer, strings.Join(layerModes, ", "))
			}
			layers = append(layers, l.Layer)
		}
		if len(layers) == 0 {
			return nil, errors.New("fusion has no layers")
		}
	default:
		return nil, fmt.Errorf("unknown search mode %q: want one of %s", q.Mode, strings.Join(Modes, ", "))
	}
	if len(ix.seqs) == 0 {
		return nil, nil
	}
	var allowed func(row int32) bool
	if !q.Filter.empty() {
		if err := ix.ensureFull(); err != nil {
			return nil, err
		}
		f, recs := q.Filter, ix.recs
		allowed = func(row int32) bool { return f.match(&recs[row]) }
	}
	if dead := ix.deadRows(); dead != nil {
		// Rows a forget emptied match nothing, and no vector either.
		base := allowed
		allowed = func(row int32) bool { return !dead[row] && (base == nil || base(row)) }
	}
	limit := max(CandidateMin, CandidateFactor*q.K)
	tier := q.Mode == ModeSessionBM25 && q.Verbatim != nil && ExactTierN > 0
	switch {
	case tier:
		limit = max(q.K, ExactTierN)
	case q.Mode != ModeFused:
		limit = q.K
	}
	// Layers run concurrently: a fused search costs its slowest layer.
	var uniq []string
	for _, l := range layers {
		if !contains(uniq, l) {
			uniq = append(uniq, l)
		}
	}
	results := make([][]cand, len(uniq))
	errs := make([]error, len(uniq))
	var wg sync.WaitGroup
	for i, l := range uniq {
		wg.Add(1)
		go func(i int, l string) {
			defer wg.Done()
			switch l {
			case ModeVerbatimBM25:
				results[i], errs[i] = ix.sessionBM25Layer(ctx, q.Text, allowed, limit, true)
			case ModeSessionBM25:
				results[i], errs[i] = ix.sessionBM25Layer(ctx, q.Text, allowed, limit, false)
			case ModeDistilledBM25:
				results[i], errs[i] = ix.bm25Layer(ctx, fieldDistilled, q.Text, allowed, limit)
			case ModeDistilledVector:
				results[i], errs[i] = ix.vectorLayer(ctx, q.Text, allowed, limit)
			}
		}(i, l)
	}
	wg.Wait()
	ranked := make(map[string][]cand, len(uniq))
	for i, l := range uniq {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: %w", l, errs[i])
		}
		ranked[l] = results[i]
	}
	var final []cand
	if q.Mode == ModeFused {
		final = ix.fuse(ranked, fusion)
	} else {
		final = ranked[q.Mode]
	}
	var tiers []string
	if tier {
		var err error
		if final, tiers, err = ix.exactTier(final, q.Text, q.Verbatim); err != nil {
			return nil, fmt.Errorf("exact tier: %w", err)
		}
	}
	if len(final) > q.K {
		final = final[:q.K]
	}
	hits, err := ix.hits(final, ranked, allowed)
	for i := range hits {
		if i < len(tiers) {
			hits[i].Tier = tiers[i]
		}
	}
	return hits, err
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func validLayer(l string) bool {
	return l == ModeVerbatimBM25 || l == ModeSessionBM25 || l == ModeDistilledBM25 || l == ModeDistilledVector
}

// better orders candidates: higher score, then newer (higher Seq).
func (ix *Index) better(a, b cand) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return ix.seqs[a.row] > ix.seqs[b.row]
}

// fuse combines the layers' ranked groups by weighted RRF. A group's
// standing member is the one with the largest single contribution.
func (ix *Index) fuse(ranked map[string][]cand, cfg FusionConfig) []cand {
	type acc struct {
		score  float64
		best   float64
		bestAt cand
	}
	groups := map[int32]*acc{}
	for _, lw := range cfg.Layers {
		for i, c := range ranked[lw.Layer] {
			contrib := lw.Weight / (cfg.K + float64(i+1))
			g := ix.groups[c.row]
			a := groups[g]
			if a == nil {
				a = &acc{}
				groups[g] = a
			}
			a.score += contrib
			if contrib > a.best || contrib == a.best && ix.seqs[c.row] > ix.seqs[a.bestAt.row] {
				a.best, a.bestAt = contrib, c
			}
		}
	}
	out := make([]cand, 0, len(groups))
	for _, a := range groups {
		out = append(out, cand{row: a.bestAt.row, score: a.score})
	}
	sort.Slice(out, func(i, j int) bool { return ix.better(out[i], out[j]) })
	return out
}

// hits turns ranked candidates into Hits with per-layer ranks and the
// members of each collapsed group.
func (ix *Index) hits(final []cand, ranked map[string][]cand, allowed func(int32) bool) ([]Hit, error) {
	out := make([]Hit, len(final))
	slot := make(map[int32]int, len(final)) // group → index in out
	for i, c := range final {
		r, err := ix.rec(c.row)
		if err != nil {
			return nil, err
		}
		out[i] = Hit{Doc: r.doc(), Score: c.score, Layers: map[string]LayerScore{}}
		slot[ix.groups[c.row]] = i
	}
	for name, cs := range ranked {
		for rank, c := range cs {
			if i, ok := slot[ix.groups[c.row]]; ok {
				out[i].Layers[name] = LayerScore{Rank: rank + 1, Score: c.score}
			}
		}
	}
	// Members of the shown groups (passing the filter), newest first. A
	// bit per group says which are shown, so the walk over every row looks
	// in the map only for their members (a map look-up per row was 1.6 %
	// of the warm search process at 100,000 exchanges).
	shown := make([]uint64, (len(ix.groups)+63)/64)
	for g := range slot {
		if g < 0 || int(g) >= 64*len(shown) {
			shown = nil // not a row number: look every row up
			break
		}
		shown[g/64] |= 1 << (g % 64)
	}
	// The rows are walked in two halves at once (1,000,000 rows: ~2 ms
	// of wall on one goroutine), each half's members in row order, the
	// first half's first: the same lists.
	var members [][]int32
	if shared, ok := ix.multiRows(); ok && !testWalkAllRows {
		// A kept index lists the rows of the groups with other members: a
		// row of a group of its own is its group's hit or no hit's member
		// (members.go). The same tests on the same rows in the same order.
		members = make([][]int32, len(out))
		for _, row := range shared {
			g := ix.groups[row]
			if shown != nil && (g < 0 || int(g) >= 64*len(shown) || shown[g/64]&(1<<(g%64)) == 0) {
				continue
			}
			i, ok := slot[g]
			if !ok || row == final[i].row || allowed != nil && !allowed(row) {
				continue
			}
			members[i] = append(members[i], row)
		}
	} else {
		var parts [2][][]int32
		inHalves(len(ix.groups), func(half, lo, hi int) {
			members := make([][]int32, len(out))
			for row := lo; row < hi; row++ {
				g := ix.groups[row]
				if shown != nil && (g < 0 || int(g) >= 64*len(shown) || shown[g/64]&(1<<(g%64)) == 0) {
					continue
				}
				i, ok := slot[g]
				if !ok || row == int(final[i].row) || allowed != nil && !allowed(int32(row)) {
					continue
				}
				members[i] = append(members[i], int32(row))
			}
			parts[half] = members
		})
		members = parts[0]
		for i, rows := range parts[1] {
			members[i] = append(members[i], rows...)
		}
	}
	for i, rows := range members {
		sort.Slice(rows, func(a, b int) bool { return ix.better(cand{row: rows[a]}, cand{row: rows[b]}) })
		for _, row := range rows {
			r, err := ix.rec(row)
			if err != nil {
				return nil, err
			}
			out[i].Collapsed = append(out[i].Collapsed, r.ID)
		}
	}
	return out, nil
}

// pickGroups walks candidates in rank order and keeps the first (best)
// member of each dedup group until limit groups are found.
func (ix *Index) pickGroups(sorted []cand, limit int) []cand {
	seen := make(map[int32]bool, limit)
	out := make([]cand, 0, limit)
	for _, c := range sorted {
		g := ix.groups[c.row]
		if seen[g] {
			continue
		}
		seen[g] = true
		out = append(out, c)
		if len(out) == limit {
			break
		}
	}
	return out
}

// queryTerms analyses the query: unique terms in order of first appearance,
// at most MaxQueryTerms.
func queryTerms(text string) []string {
	seen := map[string]bool{}
	var out []string
	embed.Words(text, func(w string, _ bool) {
		if len(out) >= MaxQueryTerms {
			return
		}
		if t := embed.Term(w); t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

// vectorLayer ranks groups by cosine between the query and the distilled
// cards: exact scan below HNSWCrossover, the graph above it.
func (ix *Index) vectorLayer(ctx context.Context, text string, allowed func(int32) bool, limit int) ([]cand, error) {
	if err := ix.ensureVectors(); err != nil {
		return nil, err
	}
	if len(text) > MaxQueryEmbedBytes {
		text = text[:MaxQueryEmbedBytes]
	}
	vs, err := ix.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query with %s: %w", ix.emb.Name(), err)
	}
	if len(vs) != 1 || len(vs[0]) != ix.vecs.Dims {
		return nil, fmt.Errorf("embedder %s returned a query vector of the wrong size", ix.emb.Name())
	}
	q := vs[0]
	var norm float64
	for _, x := range q {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return nil, nil // nothing the embedder can see (only stop words)
	}
	if ix.graph != nil {
		return ix.graphLayer(q, allowed, limit), nil
	}
	scores := ix.vecs.Scores(q)
	all := make([]cand, 0, len(scores))
	for i, s := range scores {
		if allowed == nil || allowed(int32(i)) {
			all = append(all, cand{row: int32(i), score: float64(s)})
		}
	}
	return ix.topGroups(all, limit), nil
}

// topGroups picks the best limit groups without sorting everything: a
// partial selection of a few times limit, widened when duplicates eat it.
// It reorders all and returns a slice of its own, never of all (the session
// layer passes all from a scratch it releases after).
func (ix *Index) topGroups(all []cand, limit int) []cand {
	want := limit * 4
	for {
		if want >= len(all) {
			sort.Slice(all, func(i, j int) bool { return ix.better(all[i], all[j]) })
			return ix.pickGroups(all, limit)
		}
		top := ix.selectTopSplit(all, want) // tail.go
		got := ix.pickGroups(top, limit)
		if len(got) == limit {
			return got
		}
		want *= 4
	}
}

// selectTop returns the n best candidates, sorted, leaving all reordered.
func (ix *Index) selectTop(all []cand, n int) []cand {
	t := topHeap{ix: ix, h: make([]cand, 0, n)}
	for _, c := range all {
		if len(t.h) < n {
			t.push(c)
		} else if ix.better(c, t.h[0]) {
			t.replaceWorst(c)
		}
	}
	return t.sorted()
}

// topHeap is a bounded min-heap of candidates on better (its root the
// worst kept): the selection of selectTop and selectTopRows. The callers
// test a candidate against the root themselves, the common case at a
// million rows, so that test stays in their loops.
type topHeap struct {
	ix *Index
	h  []cand
}

// less: a is worse than b.
func (t *topHeap) less(a, b cand) bool { return t.ix.better(b, a) }

func (t *topHeap) push(c cand) {
	t.h = append(t.h, c)
	h, i := t.h, len(t.h)-1
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// replaceWorst puts c in the root's place and sifts it down.
func (t *topHeap) replaceWorst(c cand) {
	h, i := t.h, 0
	h[0] = c
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && t.less(h[l], h[m]) {
			m = l
		}
		if r < len(h) && t.less(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// sorted is the kept candidates, best first.
func (t *topHeap) sorted() []cand {
	h := t.h
	sort.Slice(h, func(i, j int) bool { return t.ix.better(h[i], h[j]) })
	return h
}

// HNSWCrossover is the document count from which the vector layer searches
// an HNSW graph instead of scanning every vector: never, by default.
// Measured (docs/bench/search.md): loading the graph costs more than the
// exact scan saves at every size a personal memory reaches, in a CLI
// process that opens the index per query; and a writer builds the graph
// again over every vector at each flush, which at 1,000,000 (where it was
// set) did not end in the minutes a reindex's own work took, at 8.4 GB
// (docs/BENCHMARKS.md, session 7). The exact int8 scan needs no build.
var HNSWCrossover = math.MaxInt

// HNSWEf is the beam width of a graph search.
var HNSWEf = 128

// graphLayer searches the HNSW graph; a filtered query scans the allowed
// rows exactly instead (a graph walk under a selective filter loses recall).
func (ix *Index) graphLayer(q []float32, allowed func(int32) bool, limit int) []cand {
	if allowed != nil {
		scores := ix.vecs.Scores(q)
		all := make([]cand, 0, len(scores))
		for i, s := range scores {
			if allowed(int32(i)) {
				all = append(all, cand{row: int32(i), score: float64(s)})
			}
		}
		return ix.topGroups(all, limit)
	}
	k := limit * 2
	for {
		res := ix.graph.Search(q, k, max(HNSWEf, k), nil)
		all := make([]cand, len(res))
		for i, r := range res {
			all[i] = cand{row: int32(r.Row), score: float64(r.Score)}
		}
		sort.Slice(all, func(i, j int) bool { return ix.better(all[i], all[j]) })
		got := ix.pickGroups(all, limit)
		if len(got) == limit || len(res) < k || k >= len(ix.seqs) {
			return got
		}
		k *= 4
	}
}
