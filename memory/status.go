package memory

import (
	"errors"
	"fmt"

	"github.com/gitmem/git-mem/search"
)

// Status is what `git mem status` shows.
type Status struct {
	MemDir     string      `json:"mem_dir"`
	Head       string      `json:"head"`
	Index      string      `json:"index"` // in plain words
	IndexDocs  int         `json:"index_docs"`
	IndexedAt  string      `json:"indexed_commit"`
	UpToDate   bool        `json:"index_up_to_date"`
	Pending    int         `json:"pending"`
	Failed     []FailedJob `json:"failed"`
	QueueError string      `json:"queue_error,omitempty"`
}

// FailedJob is background work that gave up.
type FailedJob struct {
	Kind     string `json:"kind"`
	Source   string `json:"source"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

// Status reports the index state and the background work.
func (m *Memory) Status() (*Status, error) {
	st := &Status{MemDir: m.Repo.Dir(), Failed: []FailedJob{}}
	head, err := m.Repo.Head()
	if err != nil {
		return nil, err
	}
	if !head.IsZero() {
		st.Head = head.String()
	}
	opt, err := m.searchOptions()
	if err != nil {
		return nil, err
	}
	ix, err := search.OpenReadOnly(m.IndexDir(), opt)
	switch {
	case errors.Is(err, search.ErrMissing):
		st.Index = "not built yet (built on the next search, or run `git mem reindex`)"
	case errors.Is(err, search.ErrBusy):
		st.Index = "being updated by another git mem process"
	case err != nil:
		st.Index = err.Error()
	default:
		st.IndexDocs, st.IndexedAt = ix.Count(), ix.LastCommit()
		ix.Close()
		st.UpToDate = st.IndexedAt == st.Head
		if st.UpToDate {
			st.Index = fmt.Sprintf("up to date (%d exchanges)", st.IndexDocs)
		} else {
			st.Index = fmt.Sprintf("behind main (%d exchanges indexed; catches up on the next search)", st.IndexDocs)
		}
	}
	pending, err := m.Jobs(false)
	if err != nil {
		st.QueueError = err.Error()
	}
	st.Pending = len(pending)
	failed, _ := m.Jobs(true)
	for _, j := range failed {
		st.Failed = append(st.Failed, FailedJob{Kind: j.Kind, Source: j.source(), Attempts: j.Attempts, Error: j.LastError})
	}
	return st, nil
}
