package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
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
	ix, ok, err := m.OpenIfCurrent(opt)
	if err != nil || !ok {
		return nil, false, err
	}
	defer ix.Close()
	if l, err = linksOf(ix, ids); err != nil {
		return nil, false, nil
	}
	return l, true, nil
}

// PinsOf lists the living pins of a project from resolved links.
func (m *Memory) PinsOf(l *Links, project string) ([]Pin, error) { return m.pinsOf(l, project) }

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
	l.Mark(es...)
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

// Pin records a standing rule as a commit of its own. The note and the
// project are redacted as an exchange's text and project are (the commit
// is pushed by sync).
func (m *Memory) Pin(ctx context.Context, req PinRequest) (PinReport, error) {
	var core, id, project string
	req.Project, _ = redact.String(req.Project)
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
		if e, err := m.lookup(ref); err == nil && l.Pinned(e.Exchange) {
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
					l.Mark(&c)
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
	msg := metaMessage(subject, kind, trailers, project)
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
	if prev, ok := l.LastEvent(kind, trailers[0][1], newID); ok {
		when = datedAfter(when, prev.Time)
	}
	res, err := m.Repo.Append([]gitstore.Entry{{Message: msg, When: when}}, m.LockTimeout)
	if err != nil {
		return PinReport{}, fmt.Errorf("append to memory %s: %w", m.Repo.Dir(), err)
	}
	rep := PinReport{ID: trailers[0][1], Commit: res.Commits[0].String(), Kind: kind, Project: project}
	if _, err := m.UpdateIndex(ctx); err == nil {
		rep.Indexed = true
	}
	return rep, nil
}

// metaMessage is the message of a commit that is not an exchange: the
// subject, then the kind and the trailers.
func metaMessage(subject, kind string, trailers [][2]string, project string) string {
	var b strings.Builder
	b.WriteString(exchange.OneLine(subject, MaxNoteBytes))
	b.WriteString("\n\n" + TrailerKind + ": " + kind + "\n")
	for _, t := range trailers {
		b.WriteString(t[0] + ": " + t[1] + "\n")
	}
	if project != "" {
		b.WriteString(exchange.TrailerProject + ": " + project + "\n")
	}
	return b.String()
}

// linkCompleted states, for each exchange stored under its completed id,
// that it supersedes the prompt stored alone under its own id (one
// supersede commit each, as `git mem supersede` writes): search then puts
// the prompt alone right after its completed exchange and marks it, which
// near-duplicate folding cannot (the reply makes the texts too unlike).
// The pair is new, so no earlier event on it needs dating around.
func (m *Memory) linkCompleted(todo []*prepared, commits []plumbing.Hash) error {
	var entries []gitstore.Entry
	now := time.Now()
	for i, h := range commits {
		p := todo[i]
		if h.IsZero() || p.stage != completedID {
			continue
		}
		entries = append(entries, gitstore.Entry{When: now, Message: metaMessage(p.key+" supersedes "+p.ownKey, KindSupersede,
			[][2]string{{TrailerSupersedes, p.ownKey}, {TrailerSupersededBy, p.key}}, "")})
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := m.Repo.Append(entries, m.LockTimeout); err != nil {
		return fmt.Errorf("append to memory %s: link completed exchanges to their prompts: %w", m.Repo.Dir(), err)
	}
	return nil
}

// datedAfter is now, or the first whole second after prev when now is
// not past prev's second (git keeps whole seconds).
func datedAfter(now, prev time.Time) time.Time {
	if now.Unix() > prev.Unix() {
		return now
	}
	return time.Unix(prev.Unix()+1, 0).In(now.Location())
}
