package memory

import (
	"context"
	"runtime/debug"

	"github.com/gitmem/git-mem/memory/reader"
	"github.com/gitmem/git-mem/search"
)

// Search catches the index up with main (unless another process is writing
// it, then it searches the last consistent snapshot and says so in note) and
// runs the query.
func (m *Memory) Search(ctx context.Context, q SearchQuery) (results []Result, note string, err error) {
	if err := CheckQuery(q); err != nil {
		return nil, "", err
	}
	q = m.WithDefaults(q)

	if m.OneShot {
		defer m.queryGC()()
		// The index opens for this one search: one that ranks by the
		// session context reads it while the index loads.
		m.earlyContext = search.ReadsContext(q.Mode)
		defer func() { m.earlyContext = false }()
	}
	note, err = m.withIndex(ctx, func(ix *search.Index) (err error) {
		results, err = m.searchIn(ix, q)
		return err
	})
	return results, note, err
}

// queryGC holds the collector off for a one-shot query (reader.QueryGC)
// and remembers it for writerGC; a catch-up or rebuild on the way writes
// with the collector on.
func (m *Memory) queryGC() (restore func()) {
	undo, held, pct := reader.QueryGC()
	if !held {
		return undo
	}
	m.gcHeld, m.gcPercent = true, pct
	return func() {
		m.gcHeld = false
		undo()
	}
}

// writerGC turns the collector back on while an index writer runs inside
// a query whose collector queryGC holds off (a writer's garbage is most of
// what it allocates), and returns what holds it off again.
func (m *Memory) writerGC() (restore func()) {
	if !m.gcHeld {
		return func() {}
	}
	debug.SetGCPercent(m.gcPercent)
	return func() { debug.SetGCPercent(-1) }
}
