package recall

import (
	"context"

	"github.com/gitmem/git-mem/memory"
)

// CachePath is where the card cache of m lives (memory's entry cache).
func CachePath(m *memory.Memory) string { return m.EntryCachePath() }

// Entries returns every stored card once, newest first, from memory's card
// cache (see memory.Entries). note is kept for callers that print it.
func Entries(ctx context.Context, m *memory.Memory) (entries []*memory.Entry, note string, err error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	entries, err = m.Entries()
	return entries, "", err
}
