package reader

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/search"
)

// FromRepo readies an open memory repo for reading: Bleve's logs go to the
// memory's log file, what a killed writer left is removed, the config is
// read. memory.Open does the same, then readies the writers.
func FromRepo(r *gitstore.Repo) (*Reader, error) {
	RouteLibraryLogs(r.MemDir())
	r.RemoveLeftovers()
	cfg, err := LoadConfig(r.MemDir())
	if err != nil {
		return nil, err
	}
	return &Reader{Repo: r, Config: cfg}, nil
}

// LogDir is where background work logs.
func (r *Reader) LogDir() string { return filepath.Join(r.Repo.MemDir(), "log") }

// WithDefaults fills in the query's mode and k from the config.
func (r *Reader) WithDefaults(q SearchQuery) SearchQuery {
	if q.Mode == "" {
		q.Mode = r.Config.Search.Mode
	}
	if q.K == 0 {
		q.K = r.Config.Search.K
	}
	return q
}

// ErrNeedsCore says a search must be run by git-mem-core, which may write
// the index: it is not caught up with main (or missing, damaged, marked
// stale), another process holds its lock (a writer, or one waiting), or the
// config names what only git-mem-core links (an LLM distiller, a remote
// embedder).
var ErrNeedsCore = errors.New("this search needs git-mem-core")

// SearchIfCurrent is a one-shot process's search (memory.Search with
// OneShot) when it needs no index work: the same query defaults, collector
// and early context, over the generation in use, with the index lock taken
// without waiting. Anything else is ErrNeedsCore, having printed and
// written nothing of its own (git-mem-search then hands the command over).
func (r *Reader) SearchIfCurrent(q SearchQuery) ([]Result, error) {
	if err := CheckQuery(q); err != nil {
		return nil, err
	}
	if r.Config.Distiller != "heuristic" || r.Config.Embedder != "builtin" {
		return nil, ErrNeedsCore
	}
	q = r.WithDefaults(q)
	restore, _, _ := QueryGC()
	defer restore()
	l, err := r.LockIndex(true, 0)
	if err != nil {
		return nil, ErrNeedsCore
	}
	defer l.Unlock()
	ix, ok, err := r.OpenIfCurrent(search.Options{EarlyContext: search.ReadsContext(q.Mode)})
	if err != nil || !ok {
		return nil, ErrNeedsCore
	}
	defer ix.Close()
	results, err := r.SearchIn(ix, q)
	if err != nil {
		// memory.Search rebuilds an index found corrupt and says so, or
		// fails as this did: git-mem-core answers either way.
		return nil, ErrNeedsCore
	}
	return results, nil
}

// queryMemLimit is the heap at which a one-shot query's collector runs
// after all (a soft limit, far above what a search holds: 13.7 MB
// allocated at 100,000 exchanges, a few hundred at 1,000,000).
const queryMemLimit = 1 << 30

// QueryGC holds the garbage collector off while a one-shot process opens
// the index and ranks, up to queryMemLimit, and returns what restores it,
// whether it held it off and the collector's target before. Nearly all of
// it (tables, per-row arrays, postings) is live until the process ends, so
// collecting found little and cost CPU: at 100,000 exchanges the whole
// search process took 9–19 % less CPU with GOGC=off, at the same RSS
// (docs/BENCHMARKS.md, session 10). GOGC or GOMEMLIMIT set by the user win.
func QueryGC() (restore func(), held bool, percent int) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}, false, 0
	}
	limit := debug.SetMemoryLimit(queryMemLimit)
	pct := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}, true, pct
}

// Open opens the memory repo at dir for reading (FromRepo).
func Open(dir string) (*Reader, error) {
	r, err := gitstore.Open(dir)
	if err != nil {
		return nil, err
	}
	return FromRepo(r)
}
