package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gitmem/git-mem/memory/reader"
	"github.com/gitmem/git-mem/search"
)

// Status is what `git mem status` shows.
type Status struct {
	MemDir     string       `json:"mem_dir"`
	Head       string       `json:"head"`
	Index      string       `json:"index"` // in plain words
	IndexDocs  int          `json:"index_docs"`
	IndexedAt  string       `json:"indexed_commit"`
	UpToDate   bool         `json:"index_up_to_date"`
	Exchanges  int          `json:"exchanges"` // in main, from the card cache
	Pending    int          `json:"pending"`
	Failed     []FailedJob  `json:"failed"`
	Dropped    []DroppedJob `json:"dropped"`
	QueueError string       `json:"queue_error,omitempty"`
}

// FailedJob is background work that gave up: data not yet stored.
type FailedJob struct {
	ID       string `json:"id"` // for `git mem queue retry|drop ID`
	Kind     string `json:"kind"`
	Source   string `json:"source"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

// Status reports the index state, proved against main: the index's
// document count and digest must equal those of main's exchanges (the
// card cache's header), not merely its last commit. A mismatch marks the
// index for a rebuild on the next search. It also lists background work.
func (m *Memory) Status() (*Status, error) {
	st := &Status{MemDir: m.Repo.Dir(), Failed: []FailedJob{}, Dropped: []DroppedJob{}}
	head, err := m.Repo.Head()
	if err != nil {
		return nil, err
	}
	if !head.IsZero() {
		st.Head = head.String()
	}
	mainN, mainDigest, err := m.mainSummary()
	if err != nil {
		return nil, err
	}
	st.Exchanges = mainN
	opt, err := m.searchOptions()
	if err != nil {
		return nil, err
	}
	l, err := m.lockIndex(true)
	if err != nil {
		st.Index = "being updated by another git mem process"
	} else {
		gen := m.currentGen()
		var ix *search.Index
		err := search.ErrMissing
		if gen != "" {
			ix, err = search.OpenReadOnly(gen, opt)
		}
		switch {
		case errors.Is(err, search.ErrMissing) || errors.Is(err, os.ErrNotExist):
			st.Index = "not built yet (built on the next search, or run `git mem reindex`)"
		case err != nil:
			st.Index = "damaged, rebuilt on the next search (" + rebuildReason(err) + ")"
		default:
			st.IndexDocs, st.IndexedAt = ix.Count(), ix.LastCommit()
			digest := ix.Digest()
			ix.Close()
			switch {
			case st.IndexedAt != st.Head:
				st.Index = fmt.Sprintf("behind main (%d of %d exchanges indexed; catches up on the next search)", st.IndexDocs, mainN)
			// An index of nothing records no digest (every exchange
			// forgotten: main is empty).
			case st.IndexDocs != mainN || digest != fmt.Sprintf("%016x", mainDigest) && mainN > 0:
				st.Index = fmt.Sprintf("out of step with main (%d exchanges indexed, %d in main): rebuilt on the next search", st.IndexDocs, mainN)
				_ = os.WriteFile(filepath.Join(m.IndexDir(), reader.StaleMarker), []byte(filepath.Base(gen)+"\n"), 0o644)
			default:
				st.UpToDate = true
				st.Index = fmt.Sprintf("up to date (%d exchanges)", st.IndexDocs)
			}
		}
		l.Unlock()
	}
	pending, err := m.Jobs(false)
	if err != nil {
		st.QueueError = err.Error()
	}
	st.Pending = len(pending)
	failed, _ := m.Jobs(true)
	for _, j := range failed {
		st.Failed = append(st.Failed, j.failedView())
	}
	st.Dropped = m.recentDrops()
	return st, nil
}

// mainSummary is the number of exchanges in main and their set digest, from
// the card cache's header (brought up to date first when main moved).
func (m *Memory) mainSummary() (int, uint64, error) {
	head, err := m.Repo.Head()
	if err != nil || head.IsZero() {
		return 0, 0, err
	}
	if h, n, d, ok := entryCacheSummary(m.EntryCachePath()); ok && h == head.String() {
		return n, d, nil
	}
	es, err := m.Entries()
	if err != nil {
		return 0, 0, err
	}
	var d uint64
	for _, e := range es {
		d ^= search.DocDigest(e.Exchange, e.Commit)
	}
	return len(es), d, nil
}
