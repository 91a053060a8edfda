package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/internal/lazy"
	"github.com/gitmem/git-mem/redact"
	"github.com/gitmem/git-mem/search"
)

// Commits that are not exchanges (issue 20): pins and stated supersession
// links. Each is a commit on main whose tree is its parent's (it adds no
// blob) and whose trailers say what it is; sync accepts exactly those
// (gitstore.SyncOptions.MetaTrailer). The indexer hands them to the index
// as events, and the view below resolves them: for one pin target or one
// (new, old) pair, the event with the later author date wins, ties by the
// larger commit id, so two machines that set and clear the same thing
// agree once they have synced. A writer dates its event after the last
// word it has seen on the same thing (writeMeta), so an unpin written a
// moment after a pin, in the same second of git's clock, still wins.

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

// notePrefix starts the id of a pinned note.
const notePrefix = "note:"

// MaxNoteBytes bounds a pinned note: a rule is a sentence or two.
const MaxNoteBytes = 400

// metaEvent parses a commit that is not an exchange; ok is false for
// anything else.
func metaEvent(c *object.Commit) (search.Event, bool) {
	if len(c.ParentHashes) > 1 {
		return search.Event{}, false
	}
	m := exchange.ParseMessage(c.Message)
	if m.Trailers.Exchange != "" {
		return search.Event{}, false
	}
	ev := search.Event{Commit: c.Hash.String(), Time: c.Author.When, Project: m.Trailers.Project}
	for _, kv := range m.All {
		switch kv[0] {
		case TrailerKind:
			ev.Kind = kv[1]
		case TrailerPinned, TrailerSupersedes:
			ev.Target = kv[1]
		case TrailerSupersededBy:
			ev.New = kv[1]
		}
	}
	switch ev.Kind {
	case KindPin, KindUnpin:
		if ev.Target == "" {
			return search.Event{}, false
		}
		if ev.Kind == KindPin && strings.HasPrefix(ev.Target, notePrefix) {
			ev.Note = m.Card.Core
		}
	case KindSupersede, KindUnsupersede:
		if ev.Target == "" || ev.New == "" || ev.Target == ev.New {
			return search.Event{}, false
		}
	default:
		return search.Event{}, false
	}
	return ev, true
}

// metaPaths names the exchange blobs a commit that is not an exchange
// refers to (gitstore.Repo.MetaPaths): forgetting one drops that commit.
func metaPaths(msg string) []string {
	if !strings.Contains(msg, TrailerKind+":") {
		return nil // an exchange: a forget reads every message after the oldest forgotten one
	}
	m := exchange.ParseMessage(msg)
	if m.Trailers.Exchange != "" {
		return nil
	}
	var kind string
	var ids []string
	for _, kv := range m.All {
		switch kv[0] {
		case TrailerKind:
			kind = kv[1]
		case TrailerPinned, TrailerSupersedes, TrailerSupersededBy:
			if !strings.HasPrefix(kv[1], notePrefix) {
				ids = append(ids, kv[1])
			}
		}
	}
	if kind == "" {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = exchange.BlobPath(id)
	}
	return out
}

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

// pinned reports whether id is a living pin.
func (l *Links) pinned(id string) bool {
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

// linksIn resolves every link of an open index (a cycle check needs them
// all; marking a few exchanges is linksOf's job).
func linksIn(ix *search.Index) (*Links, error) {
	derived, events, err := ix.Links()
	if err != nil {
		return nil, err
	}
	return resolveLinks(derived, events), nil
}

// linksOf resolves the links that ids and the pinned or stated exchanges
// take part in: for those the view is the same as linksIn's, at the cost
// of their own links only.
func linksOf(ix *search.Index, ids []string) (*Links, error) {
	derived, events, err := ix.LinksOf(ids)
	if err != nil {
		return nil, err
	}
	return resolveLinks(derived, events), nil
}

// Links reads every resolved link of main (the index caught up first).
func (m *Memory) Links(ctx context.Context) (l *Links, err error) {
	_, err = m.withIndex(ctx, func(ix *search.Index) (err error) {
		l, err = linksIn(ix)
		return err
	})
	return l, err
}

// LinksFor reads the resolved links of ids and of every pinned or stated
// exchange (the index caught up first): the pins, and the marks of ids.
func (m *Memory) LinksFor(ctx context.Context, ids []string) (l *Links, err error) {
	_, err = m.withIndex(ctx, func(ix *search.Index) (err error) {
		l, err = linksOf(ix, ids)
		return err
	})
	return l, err
}

// LinksIfCurrent reads the links of the index generation in use only when
// it is caught up with main, doing no index work and opening nothing
// else: the SessionStart hook must answer within a second, and a catch-up
// or a rebuild (after an upgrade of the index schema) takes longer. ok is
// false when the index is behind, missing or damaged.
func (m *Memory) LinksIfCurrent(ids []string) (l *Links, ok bool, err error) {
	opt, err := m.searchOptions()
	if err != nil {
		return nil, false, err
	}
	lk, err := m.lockIndex(true)
	if err != nil {
		return nil, false, err
	}
	defer lk.Unlock()
	head, err := m.Repo.Head()
	if err != nil {
		return nil, false, err
	}
	gen := m.currentGen()
	if gen == "" || m.isStale(gen) {
		return nil, false, nil
	}
	ix, err := search.OpenReadOnly(gen, opt)
	if err != nil {
		return nil, false, nil
	}
	defer ix.Close()
	if ix.LastCommit() != head.String() && !(head.IsZero() && ix.Count() == 0) {
		return nil, false, nil
	}
	if l, err = linksOf(ix, ids); err != nil {
		return nil, false, nil
	}
	return l, true, nil
}

// PinsOf lists the living pins of a project from resolved links.
func (m *Memory) PinsOf(l *Links, project string) ([]Pin, error) { return m.pinsOf(l, project) }

// MarkWith fills the supersession and pin fields of entries from l.
func MarkWith(l *Links, es []*Entry) { l.mark(es...) }

// mark fills the supersession and pin fields of entries.
func (l *Links) mark(es ...*Entry) {
	if l == nil {
		return
	}
	for _, e := range es {
		e.SupersededBy = l.SupersededBy[e.Exchange]
		e.Supersedes = l.Supersedes[e.Exchange]
		e.Pinned = l.pinned(e.Exchange)
	}
}

// Mark fills the supersession and pin fields of entries from main's links.
func (m *Memory) Mark(ctx context.Context, es []*Entry) error {
	if len(es) == 0 {
		return nil
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.Exchange
	}
	l, err := m.LinksFor(ctx, ids)
	if err != nil {
		return err
	}
	l.mark(es...)
	return nil
}

// PinRequest pins an exchange (Ref: commit or exchange id) or a note.
type PinRequest struct {
	Ref     string
	Note    string
	Project string // a note's project; an exchange pin takes the exchange's
}

// PinReport says what a pin, unpin or supersede wrote.
type PinReport struct {
	ID      string `json:"id"`
	Commit  string `json:"commit"`
	Kind    string `json:"kind"`
	New     string `json:"new,omitempty"`
	Project string `json:"project,omitempty"`
	Indexed bool   `json:"indexed"`
}

// NoteID is the id of a pinned note: a hash of its (redacted) text.
func NoteID(note string) string {
	s := sha256.Sum256([]byte(note))
	return notePrefix + hex.EncodeToString(s[:8])
}

// Pin records a standing rule as a commit of its own.
func (m *Memory) Pin(ctx context.Context, req PinRequest) (PinReport, error) {
	var core, id, project string
	switch {
	case req.Ref != "" && req.Note != "":
		return PinReport{}, invalid(fmt.Errorf("give an exchange or --note, not both"))
	case req.Note != "":
		note, _ := redact.String(strings.Join(strings.Fields(req.Note), " "))
		if len(note) > MaxNoteBytes {
			return PinReport{}, invalid(fmt.Errorf("the note is %d bytes, over %d: pin a sentence or two, or pin the exchange that says it", len(note), MaxNoteBytes))
		}
		core, id, project = note, NoteID(note), req.Project
	case req.Ref != "":
		e, err := m.lookup(req.Ref)
		if err != nil {
			return PinReport{}, err
		}
		core, id, project = "Pin: "+e.Core, e.Exchange, e.Project
		if req.Project != "" {
			project = req.Project
		}
	default:
		return PinReport{}, invalid(fmt.Errorf("give an exchange (commit or exchange id) or --note TEXT"))
	}
	return m.writeMeta(ctx, core, KindPin, [][2]string{{TrailerPinned, id}}, project)
}

// Unpin clears a pin (a pin id as `git mem pins` lists it, a commit or an
// exchange id).
func (m *Memory) Unpin(ctx context.Context, ref string) (PinReport, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return PinReport{}, invalid(fmt.Errorf("give the pin to clear (`git mem pins` lists them)"))
	}
	l, err := m.LinksFor(ctx, nil)
	if err != nil {
		return PinReport{}, err
	}
	target := ""
	for _, p := range l.Pins {
		if p.ID == ref || len(ref) >= minPrefix && strings.HasPrefix(p.Commit, strings.ToLower(ref)) {
			target = p.ID
		}
	}
	if target == "" {
		if e, err := m.lookup(ref); err == nil && l.pinned(e.Exchange) {
			target = e.Exchange
		}
	}
	if target == "" {
		return PinReport{}, fmt.Errorf("%w: %q is not pinned: `git mem pins` lists the pins", ErrNoSuchExchange, ref)
	}
	return m.writeMeta(ctx, "Unpin "+target, KindUnpin, [][2]string{{TrailerPinned, target}}, "")
}

// Pins lists the living pins of a project ("" = all), oldest first, with
// the cards of pinned exchanges and what superseded them.
func (m *Memory) Pins(ctx context.Context, project string) ([]Pin, error) {
	l, err := m.LinksFor(ctx, nil)
	if err != nil {
		return nil, err
	}
	return m.pinsOf(l, project)
}

func (m *Memory) pinsOf(l *Links, project string) ([]Pin, error) {
	out := []Pin{}
	var all []*Entry
	for _, p := range l.Pins {
		if project != "" && p.Project != "" && !search.SameProject(p.Project, project) {
			continue
		}
		if !strings.HasPrefix(p.ID, notePrefix) {
			if all == nil {
				var err error
				if all, err = m.Entries(); err != nil {
					return nil, err
				}
			}
			for _, e := range all {
				if e.Exchange == p.ID {
					c := *e
					l.mark(&c)
					p.Entry = &c
				}
			}
			if p.Entry == nil {
				continue // forgotten
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// Supersede states that new replaces old (clear: withdraws that, derived
// or stated). Both are exchange refs or pinned note ids.
func (m *Memory) Supersede(ctx context.Context, newRef, oldRef string, clear bool) (PinReport, error) {
	resolve := func(ref string) (string, error) {
		if strings.HasPrefix(ref, notePrefix) {
			return ref, nil
		}
		e, err := m.lookup(ref)
		if err != nil {
			return "", err
		}
		return e.Exchange, nil
	}
	n, err := resolve(strings.TrimSpace(newRef))
	if err != nil {
		return PinReport{}, err
	}
	o, err := resolve(strings.TrimSpace(oldRef))
	if err != nil {
		return PinReport{}, err
	}
	if n == o {
		return PinReport{}, invalid(fmt.Errorf("an exchange cannot supersede itself"))
	}
	kind, subject := KindSupersede, n+" supersedes "+o
	if clear {
		kind, subject = KindUnsupersede, n+" no longer supersedes "+o
	} else if l, err := m.Links(ctx); err != nil {
		return PinReport{}, err
	} else if reaches(l, o, n) {
		return PinReport{}, invalid(fmt.Errorf("%s already supersedes %s: a link the other way would make a cycle (clear it first with --clear)", o, n))
	}
	rep, err := m.writeMeta(ctx, subject, kind, [][2]string{{TrailerSupersedes, o}, {TrailerSupersededBy, n}}, "")
	rep.ID, rep.New = o, n
	return rep, err
}

// reaches reports whether a supersedes b, directly or through others.
func reaches(l *Links, a, b string) bool {
	seen := map[string]bool{}
	stack := []string{a}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == b {
			return true
		}
		if seen[x] {
			continue
		}
		seen[x] = true
		stack = append(stack, l.Supersedes[x]...)
	}
	return false
}

// lookup resolves a commit or exchange id to its card.
func (m *Memory) lookup(ref string) (*Entry, error) {
	all, err := m.Entries()
	if err != nil {
		return nil, err
	}
	return findEntry(all, strings.TrimSpace(ref))
}

// writeMeta appends a commit that is not an exchange and indexes it.
func (m *Memory) writeMeta(ctx context.Context, subject, kind string, trailers [][2]string, project string) (PinReport, error) {
	var b strings.Builder
	b.WriteString(exchange.OneLine(subject, MaxNoteBytes))
	b.WriteString("\n\n" + TrailerKind + ": " + kind + "\n")
	for _, t := range trailers {
		b.WriteString(t[0] + ": " + t[1] + "\n")
	}
	if project != "" {
		b.WriteString(exchange.TrailerProject + ": " + project + "\n")
	}
	// Git dates to the second: an event written in the second of the
	// last word on the same thing would tie with it and lose half the
	// time (by commit id), so it is dated a second after.
	l, err := m.LinksFor(ctx, nil)
	if err != nil {
		return PinReport{}, err
	}
	newID := ""
	if len(trailers) > 1 {
		newID = trailers[1][1]
	}
	when := time.Now()
	if prev, ok := l.last[eventKey(kind, trailers[0][1], newID)]; ok {
		when = datedAfter(when, prev.Time)
	}
	res, err := m.Repo.Append([]gitstore.Entry{{Message: b.String(), When: when}}, m.LockTimeout)
	if err != nil {
		return PinReport{}, fmt.Errorf("append to memory %s: %w", m.Repo.Dir(), err)
	}
	rep := PinReport{ID: trailers[0][1], Commit: res.Commits[0].String(), Kind: kind, Project: project}
	if _, err := m.UpdateIndex(ctx); err == nil {
		rep.Indexed = true
	}
	return rep, nil
}

// datedAfter is now, or the first whole second after prev when now is
// not past prev's second (git keeps whole seconds).
func datedAfter(now, prev time.Time) time.Time {
	if now.Unix() > prev.Unix() {
		return now
	}
	return time.Unix(prev.Unix()+1, 0).In(now.Location())
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
		return hits, nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Doc.ID
	}
	l, err := linksOf(ix, ids)
	if err != nil {
		return nil, err
	}
	return livingFirst(hits, func(h search.Hit) string { return h.Doc.ID }, l), nil
}

// livingFirst reorders results so that a superseded exchange comes right
// after the first result that replaced it (when that one is in the list);
// otherwise the order is kept.
func livingFirst[T any](rs []T, idOf func(T) string, l *Links) []T {
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
