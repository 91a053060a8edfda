// Package reader is the read path of a memory: its config, cards and
// filters, the search over an open index (rerank, links, verbatim), the
// index lock and generation in use. Package memory embeds it and adds the
// writers; git-mem-search links it alone, without the writers' libraries
// (distill's openai-go, redact's gitleaks, hooks' SQLite), so a cold
// search starts fast (docs/CONTRACT.md, "Three binaries").
package reader

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/search"
)

// Files of the index's locks and generation (memory/index.go says how the
// indexer uses them).
const (
	IndexLockFile = "index.lock"
	IndexGateFile = "index.gate"
	CurrentFile   = "CURRENT"
)

// Reader is an open memory repo for reading: its git store and config.
// memory.Memory embeds it and adds the writers; git-mem-search links this
// alone (docs/CONTRACT.md, "Three binaries").
type Reader struct {
	Repo   *gitstore.Repo
	Config Config
}

// IndexDir is where the search index generations live.
func (r *Reader) IndexDir() string { return filepath.Join(r.Repo.MemDir(), "index") }

// StaleMarker, beside CURRENT, names a generation that status found out of
// step with main; the next search rebuilds it.
const StaleMarker = "STALE"

// IsStale reports whether status marked gen out of step with main.
func (r *Reader) IsStale(gen string) bool {
	b, err := os.ReadFile(filepath.Join(r.IndexDir(), StaleMarker))
	return err == nil && gen != "" && string(b) == filepath.Base(gen)+"\n"
}

// IndexLockTimeout bounds a wait for the index lock. A holder keeps it for
// one batch of a catch-up (about a second) or a rebuild's switch.
const IndexLockTimeout = 30 * time.Second

// LockIndex takes the index lock (timeout: how long to wait for it). flock does not queue: searches that
// overlap would hold the shared level without a gap and starve a writer
// for good (measured: adds waited out the 30 s beside two searchers). So a
// writer first closes a gate (mem/index.gate, exclusive) that every reader
// passes (shared, for a moment) before it takes its shared level: readers
// that come after a waiting writer wait behind it.
func (r *Reader) LockIndex(shared bool, timeout time.Duration) (*gitstore.FileLock, error) {
	p := filepath.Join(r.Repo.MemDir(), IndexLockFile)
	gate := filepath.Join(r.Repo.MemDir(), IndexGateFile)
	if shared {
		g, err := gitstore.LockFileShared(gate, timeout)
		if err != nil {
			return nil, err
		}
		defer g.Unlock()
		return gitstore.LockFileShared(p, timeout)
	}
	g, err := gitstore.LockFile(gate, timeout)
	if err != nil {
		return nil, err
	}
	l, err := gitstore.LockFile(p, timeout)
	if err != nil {
		g.Unlock()
		return nil, err
	}
	return l.With(g), nil
}

// CurrentGen is the folder of the index generation in use ("" for none).
// The caller holds the index lock.
func (r *Reader) CurrentGen() string {
	b, err := os.ReadFile(filepath.Join(r.IndexDir(), CurrentFile))
	name := strings.TrimSpace(string(b))
	if err != nil || name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return ""
	}
	return filepath.Join(r.IndexDir(), name)
}

// OpenIfCurrent opens the index generation in use read-only when it is
// caught up with main (or main is empty and so is the index), doing no
// index work: ok is false when it is behind, missing, marked stale or does
// not open (the caller that may write catches it up or rebuilds it). The
// caller holds the index lock and closes ix.
func (r *Reader) OpenIfCurrent(opt search.Options) (ix *search.Index, ok bool, err error) {
	head, err := r.Repo.Head()
	if err != nil {
		return nil, false, err
	}
	gen := r.CurrentGen()
	if gen == "" || r.IsStale(gen) {
		return nil, false, nil
	}
	ix, err = search.OpenReadOnly(gen, opt)
	if err != nil {
		return nil, false, nil
	}
	if ix.LastCommit() != head.String() && !(head.IsZero() && ix.Count() == 0) {
		ix.Close()
		return nil, false, nil
	}
	return ix, true, nil
}
