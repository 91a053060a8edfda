package reader

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/search"
	"github.com/go-git/go-git/v5/plumbing"
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
var ErrBadQuery = NewClassed("bad query", ErrInvalid)

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

// SearchIn runs a checked query (mode and k filled in) on an open index:
// memory's Search and View, and git-mem-search, share it.
func (rd *Reader) SearchIn(ix *search.Index, q SearchQuery) ([]Result, error) {
	hits, err := ix.Search(search.Query{Text: q.Text, K: q.K, Mode: q.Mode, Filter: ToSearchFilter(q.Filter), Verbatim: rd.Talks})
	if err != nil {
		return nil, err
	}
	rr := rd.Config.Search.Ranking()
	if q.Rerank != nil {
		rr = *q.Rerank
	}
	hits, links, err := rerankHits(ix, hits, q.Text, rr)
	if err != nil {
		return nil, err
	}
	// The rerank read the links of these exchanges when it put the living
	// first (the same ids, reordered): read once, they were ~0.25 ms of a
	// warm search's serial end at 1,000,000 exchanges each time
	// (docs/BENCHMARKS.md, session 30).
	if links == nil || testLinksTwice {
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.Doc.ID
		}
		if links, err = LinksOf(ix, ids); err != nil {
			return nil, err
		}
	}
	results := make([]Result, 0, len(hits))
	for _, h := range hits {
		d := h.Doc
		r := Result{
			Entry: Entry{
				Commit: d.Commit, Short: Short(d.Commit), Time: d.Time, Exchange: d.ID, Session: d.Session,
				Project: d.Project, Agent: d.Agent, Core: d.Core, Context: d.Context,
				Rooms: NonNil(d.Rooms), Files: NonNil(d.Files),
			},
			Score: h.Score, Layers: h.Layers, Collapsed: NonNil(h.Collapsed), Tier: h.Tier,
		}
		links.Mark(&r.Entry)
		if q.Verbatim {
			_, blob, err := rd.Verbatim(d.ID)
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
func (r *Reader) Talks(refs []search.ExchangeRef) (talk, output []string, err error) {
	reqs := make([]gitstore.PathAt, len(refs))
	for i, ref := range refs {
		// An unknown commit (none recorded) reads from main.
		reqs[i] = gitstore.PathAt{Commit: plumbing.NewHash(ref.Commit), Path: exchange.BlobPath(ref.ID)}
	}
	data, ok, complete := r.Repo.ReadPathsPacked(reqs)
	if !complete {
		if data, ok, err = r.Repo.ReadPaths(reqs); err != nil {
			return nil, nil, err
		}
	}
	talk, output = make([]string, len(refs)), make([]string, len(refs))
	for i, ref := range refs {
		if !ok[i] {
			return nil, nil, fmt.Errorf("%w %q", ErrNoSuchExchange, ref.ID)
		}
		ex, err := exchange.Parse(data[i])
		if err != nil {
			return nil, nil, fmt.Errorf("stored exchange %s: %w", ref.ID, err)
		}
		talk[i], output[i] = ex.RenderSplit()
	}
	return talk, output, nil
}

// Short is a commit id's 7-character form.
func Short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// ToSearchFilter is f as the search package takes it.
func ToSearchFilter(f Filter) search.Filter {
	return search.Filter{Rooms: f.Rooms, Files: f.Files, Project: f.Project, Agent: f.Agent,
		Session: f.Session, Since: f.Since, Until: f.Until}
}

// testLinksTwice makes SearchIn read its results' links again after the
// rerank read them (tests compare).
var testLinksTwice = false
