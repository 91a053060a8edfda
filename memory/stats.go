package memory

import (
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gitmem/git-mem/tokens"
)

// Stats summarises the memory. Compression is the paper's: the sum of BPE
// tokens of the verbatim exchanges as rendered for a model over the sum of
// tokens of the cards' core + context.
type Stats struct {
	Exchanges       int            `json:"exchanges"`
	Sessions        int            `json:"sessions"`
	Projects        int            `json:"projects"`
	Rooms           int            `json:"rooms"`
	VerbatimTokens  int64          `json:"verbatim_tokens"`
	DistilledTokens int64          `json:"distilled_tokens"`
	Compression     float64        `json:"compression"`
	Redactions      int            `json:"redactions"`
	Distillers      map[string]int `json:"distillers"`
	Agents          map[string]int `json:"agents"`
	First           *time.Time     `json:"first,omitempty"`
	Last            *time.Time     `json:"last,omitempty"`
}

// tokenCache keeps token counts under mem/cache so stats does not
// re-tokenise everything each time: verbatim counts by exchange id, card
// counts by commit (a card is fixed by its commit). Counting every card
// afresh was 72% of a `git mem stats` at 15,000 exchanges (955 ms CPU;
// docs/BENCHMARKS.md, "Scale").
type tokenCache map[string]int

func (m *Memory) cachePath(name string) string {
	return filepath.Join(m.Repo.MemDir(), "cache", name)
}

func (m *Memory) loadTokenCache(name string) tokenCache {
	c := tokenCache{}
	f, err := os.Open(m.cachePath(name))
	if err != nil {
		return c
	}
	defer f.Close()
	if gob.NewDecoder(f).Decode(&c) != nil {
		return tokenCache{}
	}
	return c
}

func (m *Memory) saveTokenCache(name string, c tokenCache) {
	_ = WriteFileAtomic(m.cachePath(name), func(f *os.File) error { return gob.NewEncoder(f).Encode(c) })
}

const (
	verbatimTokensFile = "verbatim-tokens.gob"
	cardTokensFile     = "card-tokens.gob"
)

const statsFile = "stats.json"

// statsCacheVersion changes whenever what Stats counts, or how, changes: a
// result kept by another version is computed again.
const statsCacheVersion = 1

// statsCacheFile is the last result of Stats and the head of main it
// describes: stats of a memory that has not changed since is a file read
// (decoding every card and summing was 117 ms CPU at 15,000 exchanges).
type statsCacheFile struct {
	Version int    `json:"version"`
	Head    string `json:"head"`
	Stats   *Stats `json:"stats"`
}

// Stats computes the memory's statistics, or reads them when main has not
// moved since they were last computed.
func (m *Memory) Stats() (*Stats, error) {
	head, err := m.Repo.Head()
	if err != nil {
		return nil, fmt.Errorf("read main: %w", err)
	}
	path := m.cachePath(statsFile)
	if b, err := os.ReadFile(path); err == nil && !head.IsZero() {
		var c statsCacheFile
		if json.Unmarshal(b, &c) == nil && c.Version == statsCacheVersion && c.Head == head.String() && c.Stats != nil {
			return c.Stats, nil
		}
	}
	st, complete, err := m.computeStats()
	if err != nil || !complete || head.IsZero() {
		return st, err
	}
	// Saved only when main did not move while it was computed.
	if now, err := m.Repo.Head(); err == nil && now == head {
		if b, err := json.Marshal(statsCacheFile{Version: statsCacheVersion, Head: head.String(), Stats: st}); err == nil {
			_ = WriteFileAtomic(path, func(f *os.File) error { _, err := f.Write(b); return err })
		}
	}
	return st, nil
}

// computeStats walks every card; complete is false when a verbatim blob
// could not be read (its tokens are then left out, and the result not kept).
func (m *Memory) computeStats() (st *Stats, complete bool, err error) {
	entries, err := m.Entries()
	if err != nil {
		return nil, false, err
	}
	st = &Stats{Distillers: map[string]int{}, Agents: map[string]int{}}
	sessions, projects, rooms := map[string]bool{}, map[string]bool{}, map[string]bool{}
	cache := m.loadTokenCache(verbatimTokensFile)
	cards := m.loadTokenCache(cardTokensFile)
	var missing, missingCards []*Entry
	for _, e := range entries {
		st.Exchanges++
		if e.Session != "" {
			sessions[e.Session] = true
		}
		if e.Project != "" {
			projects[e.Project] = true
		}
		for _, r := range e.Rooms {
			rooms[r] = true
		}
		st.Redactions += e.Redacted
		st.Distillers[e.Distiller]++
		if e.Agent != "" {
			st.Agents[e.Agent]++
		}
		if _, ok := cards[e.Commit]; !ok {
			missingCards = append(missingCards, e)
		}
		if _, ok := cache[e.Exchange]; !ok {
			missing = append(missing, e)
		}
		t := e.Time
		if st.First == nil || t.Before(*st.First) {
			st.First = &t
		}
		if st.Last == nil || t.After(*st.Last) {
			st.Last = &t
		}
	}
	counts := make([]int, len(missing))
	errs := make([]error, len(missing))
	parallel(len(missing), func(i int) {
		ex, _, err := m.Verbatim(missing[i].Exchange)
		if err != nil {
			errs[i] = err
			return
		}
		counts[i] = tokens.Count(ex.Render())
	})
	complete = true
	for i, e := range missing {
		if errs[i] == nil {
			cache[e.Exchange] = counts[i]
		} else {
			complete = false
		}
	}
	if len(missing) > 0 {
		m.saveTokenCache(verbatimTokensFile, cache)
	}
	cardCounts := make([]int, len(missingCards))
	parallel(len(missingCards), func(i int) {
		cardCounts[i] = tokens.Count(missingCards[i].Core + " " + missingCards[i].Context)
	})
	for i, e := range missingCards {
		cards[e.Commit] = cardCounts[i]
	}
	if len(missingCards) > 0 {
		kept := make(tokenCache, len(entries)) // commits forgotten or rewritten drop out
		for _, e := range entries {
			kept[e.Commit] = cards[e.Commit]
		}
		m.saveTokenCache(cardTokensFile, kept)
	}
	for _, e := range entries {
		st.VerbatimTokens += int64(cache[e.Exchange])
		st.DistilledTokens += int64(cards[e.Commit])
	}
	st.Sessions, st.Projects, st.Rooms = len(sessions), len(projects), len(rooms)
	if st.DistilledTokens > 0 {
		st.Compression = float64(st.VerbatimTokens) / float64(st.DistilledTokens)
	}
	return st, complete, nil
}

// RoomCount is one room of the memory palace.
type RoomCount struct {
	Room     string    `json:"room"`
	Count    int       `json:"count"`
	LastUsed time.Time `json:"last_used"`
}

// Rooms lists every room with its number of exchanges and last use, the
// busiest first.
func (m *Memory) Rooms(f Filter) ([]RoomCount, error) {
	entries, err := m.Entries()
	if err != nil {
		return nil, err
	}
	return roomsIn(entries, f), nil
}

// roomsIn is Rooms over entries already read (the long-lived View keeps them).
func roomsIn(entries []*Entry, f Filter) []RoomCount {
	counts := countKeys(entries, f, func(e *Entry) []string { return e.Rooms })
	out := make([]RoomCount, len(counts))
	for i, c := range counts {
		out[i] = RoomCount{Room: c.key, Count: c.count, LastUsed: c.last}
	}
	return out
}
