package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
)

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
