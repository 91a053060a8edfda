package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/search"
)

// Entry is one stored exchange as the read side shows it: its commit and card.
type Entry struct {
	Commit    string    `json:"commit"`
	Short     string    `json:"short"`
	Time      time.Time `json:"time"`
	Exchange  string    `json:"exchange"`
	Session   string    `json:"session,omitempty"`
	Project   string    `json:"project,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Core      string    `json:"core"`
	Context   string    `json:"context,omitempty"`
	Rooms     []string  `json:"rooms"`
	Files     []string  `json:"files"`
	Distiller string    `json:"distiller,omitempty"`
	Redacted  int       `json:"redacted,omitempty"`
	// SupersededBy names the newer exchanges that replaced this one (it is
	// still found, ranked after them); Supersedes the older ones it
	// replaced; Pinned says it is a standing rule (issue 20).
	SupersededBy []string `json:"superseded_by,omitempty"`
	Supersedes   []string `json:"supersedes,omitempty"`
	Pinned       bool     `json:"pinned,omitempty"`
	seq          int
}

// Filter narrows log, search, rooms and context. Fields combine with AND;
// within --room or --file any listed value matches. search.Filter.Matches
// is the one implementation.
type Filter struct {
	Rooms   []string
	Files   []string
	Project string
	Agent   string
	Session string
	Since   time.Time
	Until   time.Time
}

// Match reports whether e passes the filter.
func (f Filter) Match(e *Entry) bool {
	sf := toSearchFilter(f)
	return sf.Matches(search.Fields{Project: e.Project, Agent: e.Agent, Session: e.Session, Time: e.Time, Rooms: e.Rooms, Files: e.Files})
}

// IsZero reports whether the filter lets every exchange through.
func (f Filter) IsZero() bool {
	return len(f.Rooms) == 0 && len(f.Files) == 0 && f.Project == "" && f.Agent == "" &&
		f.Session == "" && f.Since.IsZero() && f.Until.IsZero()
}

// FilterSpec is a filter as the user types it (CLI flags, MCP arguments).
type FilterSpec struct {
	Rooms, Files            []string
	Project, Agent, Session string
	Since, Until            string // RFC 3339, a date, or 2.weeks.ago
}

// Filter parses the times; a bad one is an invalid request naming its flag.
func (s FilterSpec) Filter() (Filter, error) {
	f := Filter{Rooms: s.Rooms, Files: s.Files, Project: strings.TrimSpace(s.Project), Agent: strings.TrimSpace(s.Agent), Session: s.Session}
	var err error
	if s.Since != "" {
		if f.Since, err = ParseTime(s.Since, false); err != nil {
			return f, invalid(fmt.Errorf("since: %w", err))
		}
	}
	if s.Until != "" {
		if f.Until, err = ParseTime(s.Until, true); err != nil {
			return f, invalid(fmt.Errorf("until: %w", err))
		}
	}
	return f, nil
}

// entryOf parses a memory commit.
func entryOf(c *object.Commit) *Entry {
	m := exchange.ParseMessage(c.Message)
	h := c.Hash.String()
	return &Entry{
		Commit: h, Short: h[:7], Time: c.Author.When,
		Exchange: m.Trailers.Exchange, Session: m.Trailers.Session,
		Project: m.Trailers.Project, Agent: m.Trailers.Agent,
		Core: m.Card.Core, Context: m.Card.Context,
		Rooms: exchange.RoomStrings(m.Card.Rooms), Files: nonNil(m.Card.Files),
		Distiller: m.Card.Distiller, Redacted: m.Trailers.Redacted,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Log lists cards newest first, filtered, at most n (0 = all).
func (m *Memory) Log(f Filter, n int) ([]*Entry, error) {
	out, err := m.Newest(f, n)
	if err != nil {
		return nil, err
	}
	return out, m.Mark(context.Background(), out)
}

// Newest is Log without the marks: the first n cards that match f, newest
// first (0 = all), decoding only as much of the card cache as that needs.
func (m *Memory) Newest(f Filter, n int) ([]*Entry, error) {
	if n > 0 {
		if out, ok := m.firstEntries(f, n); ok {
			return out, nil
		}
	}
	all, err := m.Entries()
	if err != nil {
		return nil, err
	}
	out := []*Entry{}
	for _, e := range all {
		if f.Match(e) {
			out = append(out, e)
			if n > 0 && len(out) == n {
				break
			}
		}
	}
	return out, nil
}

// ErrNoSuchExchange means show found neither a commit nor an exchange id.
var ErrNoSuchExchange = newClassed("no such exchange", ErrNotFound)

// Show finds an exchange by commit id (full or abbreviated) or exchange id
// and returns its card and verbatim blob (canonical JSON).
func (m *Memory) Show(ref string) (*Entry, []byte, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, nil, fmt.Errorf("%w: give a commit or an exchange id", ErrNoSuchExchange)
	}
	found, ok, err := m.findCached(ref)
	if !ok {
		all, aerr := m.Entries()
		if aerr != nil {
			return nil, nil, aerr
		}
		found, err = findEntry(all, ref)
	}
	var en *Entry
	var blob []byte
	if err == nil {
		en, blob, err = m.blobOf(found)
	}
	if err == nil {
		c := *en
		en = &c
		err = m.Mark(context.Background(), []*Entry{en})
	}
	return en, blob, err
}

// showIn is Show over entries already read (the long-lived View keeps them).
func (m *Memory) showIn(all []*Entry, ref string) (*Entry, []byte, error) {
	found, err := findEntry(all, ref)
	if err != nil {
		return nil, nil, err
	}
	return m.blobOf(found)
}

// blobOf reads the verbatim blob of a card's exchange from main.
func (m *Memory) blobOf(found *Entry) (*Entry, []byte, error) {
	blob, ok, err := m.Repo.ReadPath(plumbing.ZeroHash, exchange.BlobPath(found.Exchange))
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return found, nil, fmt.Errorf("exchange %s has no verbatim blob in main", found.Exchange)
	}
	return found, blob, nil
}

// minPrefix is the shortest commit prefix show takes, as git's.
const minPrefix = 4

// findEntry resolves an exchange id (exact) or a commit id or prefix (at
// least minPrefix hex digits, and matching one commit only).
func findEntry(all []*Entry, ref string) (*Entry, error) {
	for _, e := range all {
		if e.Exchange == ref {
			return e, nil
		}
	}
	lower := strings.ToLower(ref)
	if !isHex(lower) {
		return nil, fmt.Errorf("%w %q: try `git mem log` or `git mem search`", ErrNoSuchExchange, ref)
	}
	if len(lower) < minPrefix {
		return nil, invalid(fmt.Errorf("commit prefix %q is too short: give at least %d hex digits (`git mem log --oneline` shows 7)", ref, minPrefix))
	}
	var matches []*Entry
	for _, e := range all {
		if strings.HasPrefix(e.Commit, lower) {
			matches = append(matches, e)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("%w %q: try `git mem log` or `git mem search`", ErrNoSuchExchange, ref)
	case 1:
		return matches[0], nil
	}
	var names []string
	for i, e := range matches {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(matches)-i))
			break
		}
		names = append(names, fmt.Sprintf("%s %s", e.Commit[:min(len(e.Commit), len(lower)+3)], e.Time.Format("2006-01-02")))
	}
	return nil, invalid(fmt.Errorf("ambiguous: commit prefix %q matches %d exchanges (%s): give more digits", ref, len(matches), strings.Join(names, ", ")))
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Verbatim reads the stored exchange of an id from main.
func (m *Memory) Verbatim(id string) (*exchange.Exchange, []byte, error) {
	blob, ok, err := m.Repo.ReadPath(plumbing.ZeroHash, exchange.BlobPath(id))
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, fmt.Errorf("%w %q", ErrNoSuchExchange, id)
	}
	ex, err := exchange.Parse(blob)
	if err != nil {
		return nil, blob, fmt.Errorf("stored exchange %s: %w", id, err)
	}
	return ex, blob, nil
}
