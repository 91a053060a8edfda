package reader

import (
	"fmt"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/search"
	"github.com/go-git/go-git/v5/plumbing"
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
	sf := ToSearchFilter(f)
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
			return f, Invalid(fmt.Errorf("since: %w", err))
		}
	}
	if s.Until != "" {
		if f.Until, err = ParseTime(s.Until, true); err != nil {
			return f, Invalid(fmt.Errorf("until: %w", err))
		}
	}
	return f, nil
}

// NonNil is s, or an empty list for nil (JSON prints [] not null).
func NonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ErrNoSuchExchange means show found neither a commit nor an exchange id.
var ErrNoSuchExchange = NewClassed("no such exchange", ErrNotFound)

// Verbatim reads the stored exchange of an id from main.
func (r *Reader) Verbatim(id string) (*exchange.Exchange, []byte, error) {
	blob, ok, err := r.Repo.ReadPath(plumbing.ZeroHash, exchange.BlobPath(id))
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
