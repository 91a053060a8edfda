package memory

import (
	"encoding/gob"
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

// tokenCache keeps per-exchange verbatim token counts under mem/cache so
// stats does not re-read and re-tokenise every blob each time.
type tokenCache map[string]int

func (m *Memory) tokenCachePath() string {
	return filepath.Join(m.Repo.MemDir(), "cache", "verbatim-tokens.gob")
}

func (m *Memory) loadTokenCache() tokenCache {
	c := tokenCache{}
	f, err := os.Open(m.tokenCachePath())
	if err != nil {
		return c
	}
	defer f.Close()
	if gob.NewDecoder(f).Decode(&c) != nil {
		return tokenCache{}
	}
	return c
}

func (m *Memory) saveTokenCache(c tokenCache) {
	_ = WriteFileAtomic(m.tokenCachePath(), func(f *os.File) error { return gob.NewEncoder(f).Encode(c) })
}

// Stats computes the memory's statistics.
func (m *Memory) Stats() (*Stats, error) {
	entries, err := m.Entries()
	if err != nil {
		return nil, err
	}
	st := &Stats{Distillers: map[string]int{}, Agents: map[string]int{}}
	sessions, projects, rooms := map[string]bool{}, map[string]bool{}, map[string]bool{}
	cache := m.loadTokenCache()
	var missing []*Entry
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
		st.DistilledTokens += int64(tokens.Count(e.Core + " " + e.Context))
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
	for i, e := range missing {
		if errs[i] == nil {
			cache[e.Exchange] = counts[i]
		}
	}
	if len(missing) > 0 {
		m.saveTokenCache(cache)
	}
	for _, e := range entries {
		st.VerbatimTokens += int64(cache[e.Exchange])
	}
	st.Sessions, st.Projects, st.Rooms = len(sessions), len(projects), len(rooms)
	if st.DistilledTokens > 0 {
		st.Compression = float64(st.VerbatimTokens) / float64(st.DistilledTokens)
	}
	return st, nil
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
