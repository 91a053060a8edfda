package reader

import (
	"sort"
	"strings"
	"time"

	"github.com/gitmem/git-mem/internal/lazy"
	"github.com/gitmem/git-mem/search"
)

// Trailers of commits that are not exchanges.
const (
	TrailerKind         = "Mem-Kind"
	TrailerPinned       = "Pinned"
	TrailerSupersedes   = "Supersedes"
	TrailerSupersededBy = "Superseded-By"
)

// Kinds of Mem-Kind.
const (
	KindPin         = "pin"
	KindUnpin       = "unpin"
	KindSupersede   = "supersede"
	KindUnsupersede = "unsupersede"
)

// NotePrefix starts the id of a pinned note.
const NotePrefix = "note:"

// Pin is a standing rule: a pinned exchange or a note.
type Pin struct {
	ID      string    `json:"id"`             // exchange id or note:<hex>
	Note    string    `json:"note,omitempty"` // the rule, for a note
	Project string    `json:"project,omitempty"`
	Commit  string    `json:"commit"` // the pin commit
	Time    time.Time `json:"time"`
	// Entry is the pinned exchange's card (not for a note).
	Entry *Entry `json:"entry,omitempty"`
	// SupersededBy names what replaced this pin (it is then not a living rule).
	SupersededBy []string `json:"superseded_by,omitempty"`
}

// Links is the resolved view: the living supersession links and pins.
type Links struct {
	SupersededBy map[string][]string // old id → newer ids
	Supersedes   map[string][]string // new id → older ids
	Pins         []Pin               // living pins, oldest first
	Derived      int                 // derived links in force
	Stated       int                 // stated links in force
	// last is the latest event per pin target or (new, old) pair
	// (eventKey): a new event is dated after it.
	last map[string]search.Event
}

// eventKey names what an event speaks of: one pin target, or one
// (new, old) pair.
func eventKey(kind, target, newID string) string {
	switch kind {
	case KindPin, KindUnpin:
		return "p\x00" + target
	}
	return "l\x00" + newID + "\x00" + target
}

// Superseded reports whether id was replaced.
func (l *Links) Superseded(id string) bool { return l != nil && len(l.SupersededBy[id]) > 0 }

// Pinned reports whether id is a living pin.
func (l *Links) Pinned(id string) bool {
	if l == nil {
		return false
	}
	for _, p := range l.Pins {
		if p.ID == id {
			return true
		}
	}
	return false
}

// later orders events: author date, then commit id.
func later(a, b search.Event) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.After(b.Time)
	}
	return a.Commit > b.Commit
}

// resolveLinks applies the rule: per pin target and per (new, old) pair,
// the latest event wins; a derived link holds unless a stated clearing
// is the latest word on its pair.
func resolveLinks(derived []search.Link, events []search.Event) *Links {
	last := map[string]search.Event{}
	var order []string
	for _, e := range events {
		k := eventKey(e.Kind, e.Target, e.New)
		if old, ok := last[k]; !ok || later(e, old) {
			if !ok {
				order = append(order, k)
			}
			last[k] = e
		}
	}
	l := &Links{SupersededBy: map[string][]string{}, Supersedes: map[string][]string{}, last: last}
	add := func(n, o string) {
		for _, x := range l.Supersedes[n] {
			if x == o {
				return
			}
		}
		l.Supersedes[n] = append(l.Supersedes[n], o)
		l.SupersededBy[o] = append(l.SupersededBy[o], n)
	}
	for _, d := range derived {
		if e, ok := last[eventKey(KindSupersede, d.Old, d.New)]; ok && e.Kind == KindUnsupersede {
			continue
		}
		l.Derived++
		add(d.New, d.Old)
	}
	for _, k := range order {
		e := last[k]
		switch e.Kind {
		case KindSupersede:
			l.Stated++
			add(e.New, e.Target)
		case KindPin:
			l.Pins = append(l.Pins, Pin{ID: e.Target, Note: e.Note, Project: e.Project, Commit: e.Commit, Time: e.Time})
		}
	}
	for i := range l.Pins {
		l.Pins[i].SupersededBy = l.SupersededBy[l.Pins[i].ID]
	}
	sort.SliceStable(l.Pins, func(i, j int) bool { return l.Pins[i].Time.Before(l.Pins[j].Time) })
	for _, m := range []map[string][]string{l.SupersededBy, l.Supersedes} {
		for k := range m {
			sort.Strings(m[k])
		}
	}
	return l
}

// LinksIn resolves every link of an open index (a cycle check needs them
// all; marking a few exchanges is LinksOf's job).
func LinksIn(ix *search.Index) (*Links, error) {
	derived, events, err := ix.Links()
	if err != nil {
		return nil, err
	}
	return resolveLinks(derived, events), nil
}

// LinksOf resolves the links that ids and the pinned or stated exchanges
// take part in: for those the view is the same as LinksIn's, at the cost
// of their own links only.
func LinksOf(ix *search.Index, ids []string) (*Links, error) {
	derived, events, err := ix.LinksOf(ids)
	if err != nil {
		return nil, err
	}
	return resolveLinks(derived, events), nil
}

// MarkWith fills the supersession and pin fields of entries from l.
func MarkWith(l *Links, es []*Entry) { l.Mark(es...) }

// Mark fills the supersession and pin fields of entries.
func (l *Links) Mark(es ...*Entry) {
	if l == nil {
		return
	}
	for _, e := range es {
		e.SupersededBy = l.SupersededBy[e.Exchange]
		e.Supersedes = l.Supersedes[e.Exchange]
		e.Pinned = l.Pinned(e.Exchange)
	}
}

// Ranking of issue 20, applied over a result list. Living: a superseded
// exchange comes right after the first result that replaced it. Recent:
// a query that asks for the latest state ("latest", "current", "now"…)
// boosts newer hits. Eval names them as mode suffixes: session-bm25+living.
type Rerank struct{ Living, Recent bool }

// Mode suffixes of Rerank.
const (
	SuffixLiving = "+living"
	SuffixRecent = "+recent"
)

// SplitMode parses "mode+living+recent" into the mode and its reranking.
func SplitMode(mode string) (string, Rerank) {
	var r Rerank
	for {
		switch {
		case strings.HasSuffix(mode, SuffixLiving):
			mode, r.Living = strings.TrimSuffix(mode, SuffixLiving), true
		case strings.HasSuffix(mode, SuffixRecent):
			mode, r.Recent = strings.TrimSuffix(mode, SuffixRecent), true
		default:
			return mode, r
		}
	}
}

// recencyWords ask for the state of things now.
var recencyWords = lazy.Regexp(`(?i)\b(latest|current|currently|now|nowadays|newest|most recent|these days|today|at the moment|anymore)\b`)

// RecencyBoost is the largest factor the newest hit's score gains.
const RecencyBoost = 0.25

// RerankHits applies r to hits of an open index (search and eval share it).
func RerankHits(ix *search.Index, hits []search.Hit, query string, r Rerank) ([]search.Hit, error) {
	hits, _, err := rerankHits(ix, hits, query, r)
	return hits, err
}

// rerankHits is RerankHits, and the links of the hits when it read them
// (Living; nil otherwise): the reranked hits are the same exchanges, so
// they are the links SearchIn marks its results with (LinksOf's answer
// depends on the set of ids, not their order).
func rerankHits(ix *search.Index, hits []search.Hit, query string, r Rerank) ([]search.Hit, *Links, error) {
	if r.Recent && len(hits) > 1 && recencyWords().MatchString(query) {
		lo, hi := hits[0].Doc.Time, hits[0].Doc.Time
		for _, h := range hits {
			if h.Doc.Time.Before(lo) {
				lo = h.Doc.Time
			}
			if h.Doc.Time.After(hi) {
				hi = h.Doc.Time
			}
		}
		if span := hi.Sub(lo); span > 0 {
			hits = append([]search.Hit(nil), hits...)
			for i := range hits {
				hits[i].Score *= 1 + RecencyBoost*float64(hits[i].Doc.Time.Sub(lo))/float64(span)
			}
			sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
		}
	}
	if !r.Living {
		return hits, nil, nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Doc.ID
	}
	l, err := LinksOf(ix, ids)
	if err != nil {
		return nil, nil, err
	}
	return LivingFirst(hits, func(h search.Hit) string { return h.Doc.ID }, l), l, nil
}

// LivingFirst reorders results so that a superseded exchange comes right
// after the first result that replaced it (when that one is in the list);
// otherwise the order is kept.
func LivingFirst[T any](rs []T, idOf func(T) string, l *Links) []T {
	if l == nil || len(l.SupersededBy) == 0 {
		return rs
	}
	pos := map[string]int{}
	for i, r := range rs {
		pos[idOf(r)] = i
	}
	// A result waits for the earliest later result that supersedes it.
	waitFor := map[int]int{}
	for i, r := range rs {
		best := -1
		for _, n := range l.SupersededBy[idOf(r)] {
			if j, ok := pos[n]; ok && j > i && (best < 0 || j < best) {
				best = j
			}
		}
		if best >= 0 {
			waitFor[i] = best
		}
	}
	if len(waitFor) == 0 {
		return rs
	}
	after := map[int][]int{}
	for i := range rs {
		if j, ok := waitFor[i]; ok {
			after[j] = append(after[j], i)
		}
	}
	out := make([]T, 0, len(rs))
	var emit func(i int)
	emit = func(i int) {
		out = append(out, rs[i])
		for _, k := range after[i] {
			emit(k)
		}
	}
	for i := range rs {
		if _, waits := waitFor[i]; !waits {
			emit(i)
		}
	}
	return out
}

// AsksForLatest reports whether a query asks for the state of things now
// (the words that switch the recency boost on).
func AsksForLatest(query string) bool { return recencyWords().MatchString(query) }

// LastEvent is the latest event on what kind, target and newID speak of
// (one pin target, or one (new, old) pair): a writer dates its next event
// after it.
func (l *Links) LastEvent(kind, target, newID string) (search.Event, bool) {
	e, ok := l.last[eventKey(kind, target, newID)]
	return e, ok
}
