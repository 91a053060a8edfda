package memory

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
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
	seq       int
}

// Filter narrows log, search and context. Fields combine with AND;
// within --room or --file any listed value matches.
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
	if f.Project != "" && !strings.EqualFold(e.Project, f.Project) {
		return false
	}
	if f.Agent != "" && !strings.EqualFold(e.Agent, f.Agent) {
		return false
	}
	if f.Session != "" && e.Session != f.Session {
		return false
	}
	if !f.Since.IsZero() && e.Time.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && e.Time.After(f.Until) {
		return false
	}
	if len(f.Rooms) > 0 && !anyRoom(e.Rooms, f.Rooms) {
		return false
	}
	if len(f.Files) > 0 && !anyFile(e.Files, f.Files) {
		return false
	}
	return true
}

// anyRoom: within --room values any one matches (as in search).
func anyRoom(have, want []string) bool {
	for _, w := range want {
		for _, h := range have {
			if strings.EqualFold(h, w) {
				return true
			}
		}
	}
	return false
}

// anyFile matches a path exactly or as a path suffix (auth.go matches
// internal/auth.go); any listed path may match.
func anyFile(files, want []string) bool {
	for _, w := range want {
		w = strings.TrimPrefix(w, "./")
		for _, f := range files {
			if f == w || strings.HasSuffix(f, "/"+w) {
				return true
			}
		}
	}
	return false
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
var ErrNoSuchExchange = errors.New("no such exchange")

// Show finds an exchange by commit id (full or abbreviated) or exchange id
// and returns its card and verbatim blob (canonical JSON).
func (m *Memory) Show(ref string) (*Entry, []byte, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, nil, fmt.Errorf("%w: give a commit or an exchange id", ErrNoSuchExchange)
	}
	all, err := m.Entries()
	if err != nil {
		return nil, nil, err
	}
	var found *Entry
	lower := strings.ToLower(ref)
	for _, e := range all {
		if e.Exchange == ref || len(ref) >= 4 && strings.HasPrefix(e.Commit, lower) {
			found = e
			break
		}
	}
	if found == nil {
		return nil, nil, fmt.Errorf("%w %q: try `git mem log` or `git mem search`", ErrNoSuchExchange, ref)
	}
	blob, ok, err := m.Repo.ReadPath(plumbing.ZeroHash, exchange.BlobPath(found.Exchange))
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return found, nil, fmt.Errorf("exchange %s has no verbatim blob in main", found.Exchange)
	}
	return found, blob, nil
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
