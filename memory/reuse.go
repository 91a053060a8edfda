package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
)

// Ids built from positions (Continue's history index, Cursor CLI's t<n>,
// specstory's and Aider's /<n>, Cline and Roo without timestamps, Claude
// Code's line-<n>) are reused when an agent rewrites a session's history:
// an edited earlier message, a compaction. An item whose path is taken is
// present when the stored blob is its canonical bytes (the common case, a
// hook re-reading its transcript: no blob is read), or when the stored
// exchange has the same first user turn (the same exchange redacted or
// read differently: never stored twice). Otherwise it is another exchange
// and is stored under a derived id, <id>~<first 12 hex of the SHA-256 of
// its canonical bytes>: deterministic, so a re-read finds it present.

// state of an item after lookup.
type state uint8

const (
	stNew state = iota
	stPresent
	stForgotten
	stCheck // its path holds a blob: is it this exchange?
)

// DerivedID is the id an exchange is stored under when its own id holds
// another exchange: id + "~" + the first 12 hex digits of the SHA-256 of
// its canonical bytes (as read, with its own id).
func DerivedID(id string, canonical []byte) string {
	s := sha256.Sum256(canonical)
	return id + "~" + hex.EncodeToString(s[:6])
}

// rawFirstUser is the text of the exchange's first user turn.
func rawFirstUser(ex *exchange.Exchange) string {
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleUser {
			return t.Text
		}
	}
	return ""
}

// firstUser is rawFirstUser with its whitespace folded.
func firstUser(ex *exchange.Exchange) string { return fold(rawFirstUser(ex)) }

func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// classify says which items are new, present or forgotten, in main and in
// seen (keys found new before, which it does not change); an item whose id
// holds another exchange gets its derived id (key, path, ex.ID, blob) and
// is classified by that. It returns the trees of its first look.
func (m *Memory) classify(items []*prepared, seen map[string]bool) ([]state, *gitstore.Looked, error) {
	st := make([]state, len(items))
	paths := make([]string, len(items))
	for i, p := range items {
		paths[i] = p.path
	}
	ids, looked, err := m.Repo.StoredLooked(paths)
	if err != nil {
		return nil, nil, fmt.Errorf("look up stored exchanges: %w", err)
	}
	// An exchange once forgotten is never stored again (re-import, hook).
	// An item whose id a tombstone names is refused even when it differs
	// from the forgotten one: a tombstone keeps no text to compare, and a
	// reader or redaction change must not bring forgotten text back.
	dead, err := m.Repo.Tombstoned(paths)
	if err != nil {
		return nil, nil, fmt.Errorf("look up forgotten exchanges: %w", err)
	}
	var check []int
	for i, p := range items {
		switch {
		case dead[i]:
			st[i] = stForgotten
		case seen[p.key]:
			st[i] = stPresent
		case !ids[i].IsZero():
			st[i] = stCheck
			check = append(check, i)
		}
	}
	if len(check) == 0 {
		return st, looked, nil
	}
	// The same blob: present, no blob read.
	parallel(len(check), func(j int) {
		i := check[j]
		if gitstore.BlobID(items[i].blob) == ids[i] {
			st[i] = stPresent
		}
	})
	var reused []int
	for _, i := range check {
		if st[i] != stCheck {
			continue
		}
		stored, err := m.Repo.Blob(ids[i])
		if err != nil {
			return nil, nil, fmt.Errorf("read stored exchange %s: %w", items[i].key, err)
		}
		p := items[i]
		if old, err := exchange.Parse(stored); err == nil {
			if u := firstUser(old); u == firstUser(p.ex) || u == fold(p.prompt) {
				st[i] = stPresent
				continue
			}
		}
		reused = append(reused, i)
	}
	if len(reused) == 0 {
		return st, looked, nil
	}
	dpaths := make([]string, len(reused))
	for j, i := range reused {
		p := items[i]
		id := DerivedID(p.key, p.blob)
		p.ex.ID, p.key, p.path = id, id, exchange.BlobPath(id)
		p.blob = p.ex.Canonical()
		p.reused = true
		dpaths[j] = p.path
	}
	dids, _, err := m.Repo.StoredLooked(dpaths)
	if err != nil {
		return nil, nil, fmt.Errorf("look up stored exchanges: %w", err)
	}
	ddead, err := m.Repo.Tombstoned(dpaths)
	if err != nil {
		return nil, nil, fmt.Errorf("look up forgotten exchanges: %w", err)
	}
	for j, i := range reused {
		switch {
		case ddead[j]:
			st[i] = stForgotten
		case seen[items[i].key] || !dids[j].IsZero():
			// The derived id names its content: whatever is there is it.
			st[i] = stPresent
		default:
			st[i] = stNew
		}
	}
	return st, looked, nil
}
