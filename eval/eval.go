// Package eval measures retrieval quality the way a user meets it: each eval
// folder's exchanges go into a fresh temporary memory through the real add
// path (memory.Init, memory.Add: redaction, distillation, commits, indexes),
// then every query runs in every mode and is scored by MRR, Recall@5,
// Recall@10, nDCG@10 and all-evidence Recall@10, overall and per category.
// Adversarial queries are scored apart and left out of the headline.
package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/search"
)

// Options configure Run.
type Options struct {
	// Modes to report, in order; empty means search.Modes.
	Modes []string
	// K is the number of results each query asks for; 0 means 10.
	K int
	// TempDir is where the temporary memories are made; "" means os.TempDir().
	TempDir string
	// Fusion, when set, replaces search.DefaultFusion for the fused mode
	// (for experiments; the CLI never sets it).
	Fusion *search.FusionConfig
	// Pooled stores all sets in one memory (Pool) and ranks every query
	// against all of it; the report keeps each folder's queries apart in
	// by_set.
	Pooled bool
	// Progress, when set, receives one line per step.
	Progress func(format string, args ...any)
}

// ModeReport is the result of one mode over all sets.
type ModeReport struct {
	Mode    string `json:"mode"`
	Default bool   `json:"default"` // the mode search uses when none is given
	Metrics
	ByCategory map[string]Metrics `json:"by_category"`
	// BySet is per folder, when there are several (pooled or not).
	BySet       map[string]Metrics `json:"by_set,omitempty"`
	Adversarial Metrics            `json:"adversarial"`
	// VsDefault is the paired-bootstrap difference from the default mode
	// (absent for the default itself, or when it was not measured).
	VsDefault *VsDefault `json:"vs_default,omitempty"`
	Bootstrap Bootstrap  `json:"bootstrap"`
	Pooled    bool       `json:"pooled"` // one memory of all the sets
	K         int        `json:"k"`
	Seconds   float64    `json:"seconds"`   // wall time of the queries (not of building)
	Sets      []string   `json:"sets"`      // the folders, in order
	Embedder  string     `json:"embedder"`  // as configured for the temporary memories
	Distiller string     `json:"distiller"` // idem
	// Collapsed counts the result slots (top k, all queries) that held
	// near-duplicates: such a slot is relevant when any member is.
	Collapsed int `json:"collapsed_slots"`
	// PerQuery holds each non-adversarial query's reciprocal rank.
	PerQuery map[string]float64 `json:"-"`
}

// Report is a whole run.
type Report struct {
	Modes        []ModeReport
	Skipped      []string // subfolders without queries.jsonl
	BuildSeconds float64  // adding all exchanges to the temporary memories
	Exchanges    int
}

// ErrUnknownMode is returned for a mode search does not know.
var ErrUnknownMode = errors.New("unknown mode")

// CheckModes validates mode names.
func CheckModes(modes []string) error {
	for _, m := range modes {
		m, _ := memory.SplitMode(m) // +living, +recent: issue 20's reranking
		ok := false
		for _, x := range search.Modes {
			ok = ok || x == m
		}
		if !ok {
			return fmt.Errorf("%w %q: use one of %s", ErrUnknownMode, m, strings.Join(search.Modes, ", "))
		}
	}
	return nil
}

// Run builds one temporary memory per set and scores every mode on it.
func Run(ctx context.Context, sets []Set, opt Options) (*Report, error) {
	if err := CheckModes(opt.Modes); err != nil {
		return nil, err
	}
	if opt.Pooled && len(sets) > 0 {
		sets = []Set{Pool("pooled", sets)}
	}
	ms, err := Build(ctx, sets, opt)
	if err != nil {
		return nil, err
	}
	rep, err := ms.Measure(ctx, opt)
	if cerr := ms.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return rep, err
}

// Memories are the temporary memories of a run, built once and measured
// as often as wanted (e.g. under several fusion settings).
type Memories struct {
	sets         []Set
	built        []*built
	buildSeconds float64
	exchanges    int
}

// Build stores each set's exchanges in a fresh temporary memory (under
// opt.TempDir) through the real add path. Close removes them.
func Build(ctx context.Context, sets []Set, opt Options) (*Memories, error) {
	progress := opt.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	ms := &Memories{sets: sets}
	for _, s := range sets {
		b, err := build(ctx, s, opt.TempDir)
		if err != nil {
			ms.Close()
			return nil, err
		}
		ms.built = append(ms.built, b)
		ms.buildSeconds += b.seconds
		ms.exchanges += len(s.Exchanges)
		progress("%s: %d exchanges added in %.1fs", s.Name, len(s.Exchanges), b.seconds)
	}
	return ms, nil
}

// Close removes the temporary memories.
func (ms *Memories) Close() error {
	var err error
	for _, b := range ms.built {
		if cerr := b.close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	ms.built = nil
	return err
}

// Measure runs every query of every set in each mode of opt and scores it.
func (ms *Memories) Measure(ctx context.Context, opt Options) (*Report, error) {
	if opt.K <= 0 {
		opt.K = 10
	}
	modes := opt.Modes
	if len(modes) == 0 {
		modes = search.Modes
	}
	if err := CheckModes(modes); err != nil {
		return nil, err
	}
	rep := &Report{BuildSeconds: round4(ms.buildSeconds), Exchanges: ms.exchanges}
	accs := make([]*modeAcc, len(modes))
	for i, m := range modes {
		accs[i] = newModeAcc(m)
	}
	var names []string
	var embedder, distiller, defMode string
	pooled := false
	for si, s := range ms.sets {
		b := ms.built[si]
		if s.Pooled != nil {
			names = append(names, s.Pooled...)
			pooled = true
		} else {
			names = append(names, s.Name)
		}
		embedder, distiller, defMode = b.mem.Config.Embedder, b.mem.Config.Distiller, b.mem.Config.Search.Mode
		for i, mode := range modes {
			start := time.Now()
			err := b.run(ctx, s.Queries, mode, opt, accs[i])
			accs[i].seconds += time.Since(start).Seconds()
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", s.Name, mode, err)
			}
		}
	}
	if defMode == "" {
		defMode = search.DefaultMode
	}
	var def *modeAcc
	for _, a := range accs {
		if a.mode == defMode {
			def = a
		}
	}
	for _, a := range accs {
		mr := a.report(len(names) > 1)
		mr.Default = mr.Mode == defMode
		mr.K, mr.Sets, mr.Embedder, mr.Distiller, mr.Pooled = opt.K, names, embedder, distiller, pooled
		if def != nil && a != def {
			mr.VsDefault = a.vs(def, len(names) > 1)
		}
		rep.Modes = append(rep.Modes, mr)
	}
	return rep, nil
}

// built is one set's temporary memory, its index open for searching.
type built struct {
	dir     string
	mem     *memory.Memory
	ix      *search.Index // nil: search through Memory.Search
	release func()
	seconds float64
	keep    bool // close leaves the memory on disk (buildIn with reuse)
}

// addBatch matches `git mem add`: exchanges are committed and indexed in
// batches of this many.
const addBatch = 2000

func build(ctx context.Context, s Set, tempDir string) (*built, error) {
	dir, err := os.MkdirTemp(tempDir, "git-mem-eval-*")
	if err != nil {
		return nil, fmt.Errorf("eval: temporary memory: %w", err)
	}
	return buildIn(ctx, s, dir, false)
}

// buildIn stores s in the memory at dir; with reuse, a memory already
// there (made by an earlier buildIn) is opened as it is, and close keeps it
// (the all-sets benchmark: LongMemEval's 12,207 exchanges take minutes to add).
func buildIn(ctx context.Context, s Set, dir string, reuse bool) (*built, error) {
	b := &built{dir: dir, keep: reuse}
	start := time.Now()
	if reuse {
		if _, err := os.Stat(filepath.Join(dir, "mem", "eval-built")); err == nil {
			m, err := memory.Open(dir)
			if err != nil {
				return nil, fmt.Errorf("eval: %s: %w", s.Name, err)
			}
			b.mem = m
			return b, b.openIndex(ctx, s)
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("eval: %s: %w", s.Name, err)
		}
	}
	m, _, err := memory.Init(dir)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("eval: %s: %w", s.Name, err)
	}
	b.mem = m
	for i := 0; i < len(s.Exchanges); i += addBatch {
		// Add rewrites what it redacts: give it copies, so a set can be run
		// twice.
		rep, err := m.Add(ctx, cloneAll(s.Exchanges[i:min(i+addBatch, len(s.Exchanges))]), memory.AddOptions{})
		if err != nil {
			b.close()
			return nil, fmt.Errorf("eval: %s: add: %w", s.Name, err)
		}
		if rep.IndexErr != "" {
			b.close()
			return nil, fmt.Errorf("eval: %s: index: %s", s.Name, rep.IndexErr)
		}
	}
	b.seconds = time.Since(start).Seconds()
	if reuse {
		if err := os.WriteFile(filepath.Join(dir, "mem", "eval-built"), nil, 0o644); err != nil {
			b.close()
			return nil, fmt.Errorf("eval: %s: %w", s.Name, err)
		}
	}
	return b, b.openIndex(ctx, s)
}

// openIndex opens the index Memory.Search would open, once: the same Query,
// without reopening Bleve for each of thousands of queries.
func (b *built) openIndex(ctx context.Context, s Set) error {
	if b.mem.Config.Embedder != "builtin" {
		return nil
	}
	ix, release, err := b.mem.OpenIndex(ctx)
	if err != nil {
		b.close()
		return fmt.Errorf("eval: %s: %w", s.Name, err)
	}
	b.ix, b.release = ix, release
	return nil
}

func (b *built) close() error {
	var err error
	if b.ix != nil {
		b.release()
		b.ix, b.release = nil, nil
	}
	if b.keep {
		return err
	}
	if rerr := os.RemoveAll(b.dir); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// run scores the queries of one set in one mode, on all cores; the sums are
// taken in query order, so the report is the same on every run.
func (b *built) run(ctx context.Context, qs []Query, mode string, opt Options, a *modeAcc) error {
	type res struct {
		s         score
		collapsed int
		cur       float64
		err       error
	}
	out := make([]res, len(qs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				// The question's own date, or none (not the clock:
				// the sets' exchanges are dated in the past).
				qctx := search.WithNow(ctx, qs[i].Now)
				slots, err := b.search(qctx, qs[i].Text, mode, opt)
				if err != nil {
					out[i].err = fmt.Errorf("query %s: %w", qs[i].QID, err)
					continue
				}
				for _, s := range slots {
					if len(s) > 1 {
						out[i].collapsed++
					}
				}
				out[i].s = scoreRanking(slots, qs[i].Relevant)
				out[i].cur = -1
				if len(qs[i].Stale) > 0 {
					out[i].cur = currentFirst(slots, qs[i].Relevant, qs[i].Stale)
				}
			}
		}()
	}
	for i := range qs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, q := range qs {
		if out[i].err != nil {
			return out[i].err
		}
		a.add(q, out[i].s, out[i].collapsed)
		a.addCur(q, out[i].cur)
	}
	return nil
}

// search returns the ids of each result slot: the hit and its collapsed
// near-duplicates.
func (b *built) search(ctx context.Context, text, mode string, opt Options) ([][]string, error) {
	var slots [][]string
	mode, rr := memory.SplitMode(mode)
	if b.ix != nil {
		hits, err := b.ix.SearchContext(ctx, search.Query{Text: text, K: opt.K, Mode: mode, Fusion: opt.Fusion, Verbatim: b.mem.Talks})
		if err != nil {
			return nil, err
		}
		if hits, err = memory.RerankHits(b.ix, hits, text, rr); err != nil {
			return nil, err
		}
		for _, h := range hits {
			slots = append(slots, append([]string{h.Doc.ID}, h.Collapsed...))
		}
		return slots, nil
	}
	if opt.Fusion != nil {
		return nil, errors.New("a fusion override needs the builtin embedder")
	}
	rs, _, err := b.mem.Search(ctx, memory.SearchQuery{Text: text, K: opt.K, Mode: mode, Rerank: &rr})
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		slots = append(slots, append([]string{r.Exchange}, r.Collapsed...))
	}
	return slots, nil
}

func cloneAll(exs []*exchange.Exchange) []*exchange.Exchange {
	out := make([]*exchange.Exchange, len(exs))
	for i, ex := range exs {
		c, err := exchange.Parse(ex.Canonical())
		if err != nil {
			c = ex // cannot happen: ex was parsed and validated
		}
		out[i] = c
	}
	return out
}

// Uncategorised is the by_category key of queries without a category.
const Uncategorised = "uncategorised"

// modeAcc gathers one mode's scores.
type modeAcc struct {
	mode      string
	all, adv  acc
	cats      map[string]*acc
	sets      map[string]*acc
	names     map[string]string
	seconds   float64
	collapsed int
	perQuery  map[string]float64
	// rows are the non-adversarial queries in run order (the same order
	// in every mode, which pairs them for the bootstrap).
	rows []qrow
}

type qrow struct {
	cat, set string
	rr       float64
}

func newModeAcc(mode string) *modeAcc {
	return &modeAcc{mode: mode, cats: map[string]*acc{}, sets: map[string]*acc{}, names: map[string]string{}, perQuery: map[string]float64{}}
}

func (a *modeAcc) add(q Query, s score, collapsed int) {
	a.collapsed += collapsed
	if q.Adversarial {
		a.adv.add(s)
		return
	}
	a.perQuery[q.QID] = s.rr
	a.all.add(s)
	key := q.Category
	if key == "" {
		key = Uncategorised
	}
	a.rows = append(a.rows, qrow{cat: key, set: q.Set, rr: s.rr})
	for _, g := range []struct {
		m   map[string]*acc
		key string
	}{{a.cats, key}, {a.sets, q.Set}} {
		c := g.m[g.key]
		if c == nil {
			c = &acc{}
			g.m[g.key] = c
		}
		c.add(s)
	}
	if q.CategoryName != "" {
		a.names[key] = q.CategoryName
	}
}

// addCur counts a current-first score (cur < 0: the query has none).
func (a *modeAcc) addCur(q Query, cur float64) {
	if cur < 0 || q.Adversarial {
		return
	}
	key := q.Category
	if key == "" {
		key = Uncategorised
	}
	a.all.addCur(cur)
	a.cats[key].addCur(cur)
	a.sets[q.Set].addCur(cur)
}

// rr returns the reciprocal ranks of the queries that keep says.
func (a *modeAcc) rr(keep func(qrow) bool) []float64 {
	var out []float64
	for _, r := range a.rows {
		if keep(r) {
			out = append(out, r.rr)
		}
	}
	return out
}

func all(qrow) bool { return true }

func inCat(c string) func(qrow) bool { return func(r qrow) bool { return r.cat == c } }
func inSet(s string) func(qrow) bool { return func(r qrow) bool { return r.set == s } }

func withCI(m Metrics, rr []float64) Metrics {
	if len(rr) > 0 {
		ci := bootstrapCI(rr)
		m.MRRCI = ci[:]
	}
	return m
}

func (a *modeAcc) report(bySet bool) ModeReport {
	r := ModeReport{Mode: a.mode, Metrics: withCI(a.all.metrics(), a.rr(all)), Adversarial: a.adv.metrics(),
		ByCategory: map[string]Metrics{}, Seconds: round4(a.seconds), Collapsed: a.collapsed, PerQuery: a.perQuery,
		Bootstrap: Bootstrap{Seed: BootstrapSeed, Resamples: BootstrapResamples, Level: 0.95}}
	for k, c := range a.cats {
		m := withCI(c.metrics(), a.rr(inCat(k)))
		m.Name = a.names[k]
		r.ByCategory[k] = m
	}
	if bySet {
		r.BySet = map[string]Metrics{}
		for k, c := range a.sets {
			r.BySet[k] = withCI(c.metrics(), a.rr(inSet(k)))
		}
	}
	return r
}

// vs is the paired difference of a's reciprocal ranks from def's.
func (a *modeAcc) vs(def *modeAcc, bySet bool) *VsDefault {
	if len(a.rows) != len(def.rows) {
		return nil // cannot happen: both ran the same queries
	}
	v := &VsDefault{Diff: diff(a.rr(all), def.rr(all)), ByCategory: map[string]Diff{}}
	for k := range a.cats {
		v.ByCategory[k] = diff(a.rr(inCat(k)), def.rr(inCat(k)))
	}
	if bySet {
		v.BySet = map[string]Diff{}
		for k := range a.sets {
			v.BySet[k] = diff(a.rr(inSet(k)), def.rr(inSet(k)))
		}
	}
	return v
}

// Categories returns the category keys of a report in a stable order:
// numbers numerically, then words alphabetically.
func Categories(r ModeReport) []string {
	keys := make([]string, 0, len(r.ByCategory))
	for k := range r.ByCategory {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ni, iok := atoi(keys[i])
		nj, jok := atoi(keys[j])
		switch {
		case iok && jok:
			return ni < nj
		case iok != jok:
			return iok
		}
		return keys[i] < keys[j]
	})
	return keys
}

func atoi(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
