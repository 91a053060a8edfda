package memory

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/search"
)

// SearchQuery is one search over the memory.
type SearchQuery struct {
	Text     string
	K        int
	Mode     string
	Filter   Filter
	Verbatim bool // read each hit's exchange from git
	// Rerank overrides the configured issue-20 ranking (eval's mode suffixes).
	Rerank *Rerank
}

// Result is one search hit: the card, its scores and, when asked, the
// verbatim exchange (canonical JSON).
type Result struct {
	Entry
	Score     float64                      `json:"score"`
	Layers    map[string]search.LayerScore `json:"layers"`
	Collapsed []string                     `json:"collapsed"`
	Verbatim  string                       `json:"verbatim,omitempty"`
	// Tier names the exact-recall rung that ranked the hit first
	// ("phrase", "terms"; see search.ExactTierN).
	Tier string `json:"tier,omitempty"`
}

// MaxQueryBytes bounds a query; longer ones are refused with a clear error.
const MaxQueryBytes = 256 << 10

// ErrBadQuery marks a query the user must change (exit 2).
var ErrBadQuery = newClassed("bad query", ErrInvalid)

// CheckQuery validates the query text and mode before any work is done.
func CheckQuery(q SearchQuery) error {
	if strings.TrimSpace(q.Text) == "" {
		return fmt.Errorf("%w: the query is empty: give some words to search for", ErrBadQuery)
	}
	if len(q.Text) > MaxQueryBytes {
		return fmt.Errorf("%w: the query is %d KB, over the %d KB limit: search for a few distinctive words", ErrBadQuery, len(q.Text)>>10, MaxQueryBytes>>10)
	}
	if !utf8.ValidString(q.Text) {
		return fmt.Errorf("%w: the query is not valid UTF-8", ErrBadQuery)
	}
	if q.Mode != "" && !validMode(q.Mode) {
		return fmt.Errorf("%w: unknown mode %q: use one of %s", ErrBadQuery, q.Mode, strings.Join(search.Modes, ", "))
	}
	if q.K < 0 {
		return fmt.Errorf("%w: -k must be positive", ErrBadQuery)
	}
	return nil
}

func validMode(m string) bool {
	for _, x := range search.Modes {
		if x == m {
			return true
		}
	}
	return false
}

// Search catches the index up with main (unless another process is writing
// it, then it searches the last consistent snapshot and says so in note) and
// runs the query.
func (m *Memory) Search(ctx context.Context, q SearchQuery) (results []Result, note string, err error) {
	if err := CheckQuery(q); err != nil {
		return nil, "", err
	}
	if q.Mode == "" {
		q.Mode = m.Config.Search.Mode
	}
	if q.K == 0 {
		q.K = m.Config.Search.K
	}

	if m.OneShot {
		defer m.queryGC()()
		// The index opens for this one search: one that ranks by the
		// session context reads it while the index loads.
		m.earlyContext = search.ReadsContext(q.Mode)
		defer func() { m.earlyContext = false }()
	}
	note, err = m.withIndex(ctx, func(ix *search.Index) (err error) {
		results, err = m.searchIn(ix, q)
		return err
	})
	return results, note, err
}

// queryMemLimit is the heap at which a one-shot query's collector runs
// after all (a soft limit, far above what a search holds: 13.7 MB
// allocated at 100,000 exchanges, a few hundred at 1,000,000).
const queryMemLimit = 1 << 30

// queryGC holds the garbage collector off while a one-shot process opens
// the index and ranks, up to queryMemLimit, and returns what restores it.
// Nearly all of it (tables, per-row arrays, postings) is live until the
// process ends, so collecting found little and cost CPU: at 100,000
// exchanges the whole search process took 9–19 % less CPU with GOGC=off,
// at the same RSS (docs/BENCHMARKS.md, session 10). A catch-up or rebuild
// on the way writes with the collector on (writerGC). GOGC or GOMEMLIMIT
// set by the user win.
func (m *Memory) queryGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := debug.SetMemoryLimit(queryMemLimit)
	pct := debug.SetGCPercent(-1)
	m.gcHeld, m.gcPercent = true, pct
	return func() {
		m.gcHeld = false
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
}

// writerGC turns the collector back on while an index writer runs inside
// a query whose collector queryGC holds off (a writer's garbage is most of
// what it allocates), and returns what holds it off again.
func (m *Memory) writerGC() (restore func()) {
	if !m.gcHeld {
		return func() {}
	}
	debug.SetGCPercent(m.gcPercent)
	return func() { debug.SetGCPercent(-1) }
}

// searchIn runs a checked query (mode and k filled in) on an open index;
// Search and the long-lived View share it.
func (m *Memory) searchIn(ix *search.Index, q SearchQuery) ([]Result, error) {
	hits, err := ix.Search(search.Query{Text: q.Text, K: q.K, Mode: q.Mode, Filter: toSearchFilter(q.Filter), Verbatim: m.Talks})
	if err != nil {
		return nil, err
	}
	rr := m.Config.Search.rerank()
	if q.Rerank != nil {
		rr = *q.Rerank
	}
	if hits, err = RerankHits(ix, hits, q.Text, rr); err != nil {
		return nil, err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Doc.ID
	}
	links, err := linksOf(ix, ids)
	if err != nil {
		return nil, err
	}
	results := make([]Result, 0, len(hits))
	for _, h := range hits {
		d := h.Doc
		r := Result{
			Entry: Entry{
				Commit: d.Commit, Short: short(d.Commit), Time: d.Time, Exchange: d.ID, Session: d.Session,
				Project: d.Project, Agent: d.Agent, Core: d.Core, Context: d.Context,
				Rooms: nonNil(d.Rooms), Files: nonNil(d.Files),
			},
			Score: h.Score, Layers: h.Layers, Collapsed: nonNil(h.Collapsed), Tier: h.Tier,
		}
		links.mark(&r.Entry)
		if q.Verbatim {
			_, blob, err := m.Verbatim(d.ID)
			if err != nil {
				return nil, err
			}
			r.Verbatim = string(blob)
		}
		results = append(results, r)
	}
	return results, nil
}

// Talks returns the talk (turns and tool calls) and the tools' output of
// stored exchanges, apart, what search's exact-recall tier reads. Each is
// read at the commit that added it, from the mapped packs in this process
// (gitstore.ReadPathsPacked: no git process to start); when that cannot
// read them all, in one batch (gitstore.ReadPaths: one git cat-file for
// all). Read one by one through go-git, the first object read of a
// process decodes every pack index, +100 ms at 100,000 exchanges
// (docs/BENCHMARKS.md).
func (m *Memory) Talks(refs []search.ExchangeRef) (talk, output []string, err error) {
	reqs := make([]gitstore.PathAt, len(refs))
	for i, r := range refs {
		// An unknown commit (none recorded) reads from main.
		reqs[i] = gitstore.PathAt{Commit: plumbing.NewHash(r.Commit), Path: exchange.BlobPath(r.ID)}
	}
	data, ok, complete := m.Repo.ReadPathsPacked(reqs)
	if !complete {
		if data, ok, err = m.Repo.ReadPaths(reqs); err != nil {
			return nil, nil, err
		}
	}
	talk, output = make([]string, len(refs)), make([]string, len(refs))
	for i, r := range refs {
		if !ok[i] {
			return nil, nil, fmt.Errorf("%w %q", ErrNoSuchExchange, r.ID)
		}
		ex, err := exchange.Parse(data[i])
		if err != nil {
			return nil, nil, fmt.Errorf("stored exchange %s: %w", r.ID, err)
		}
		talk[i], output[i] = ex.RenderSplit()
	}
	return talk, output, nil
}

func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

func toSearchFilter(f Filter) search.Filter {
	return search.Filter{Rooms: f.Rooms, Files: f.Files, Project: f.Project, Agent: f.Agent,
		Session: f.Session, Since: f.Since, Until: f.Until}
}
