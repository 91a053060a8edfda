package memory

import (
	"context"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/search"
)

// DefaultRemote is the remote `git mem sync` uses without --remote.
const DefaultRemote = "origin"

// SyncReport says what a sync did (`git mem sync --json`).
type SyncReport struct {
	Remote        string `json:"remote"`
	URL           string `json:"url"`                    // password hidden
	Fetched       int    `json:"fetched"`                // exchange commits the remote had that main lacked
	Merged        int    `json:"merged"`                 // exchanges new to main (an id on both sides counts once)
	Pushed        int    `json:"pushed"`                 // exchange commits sent to the remote
	FastForward   bool   `json:"fast_forward"`           // main moved to the remote's main without a merge commit
	MergeCommit   string `json:"merge_commit,omitempty"` // the union merge, when one was written
	Head          string `json:"head,omitempty"`         // main after the sync
	UpToDate      bool   `json:"up_to_date"`
	BytesReceived int64  `json:"bytes_received"`
	BytesSent     int64  `json:"bytes_sent"`
	Rounds        int    `json:"rounds"` // fetch-merge-push rounds (more than 1 after a push race)
	// Forgets carried by sync (refs/mem/tombstones): tombstones learned
	// from the remote, exchanges that left this main because of them, and
	// whether the remote's main was replaced by one without them.
	TombstonesLearned int    `json:"tombstones_learned"`
	Forgotten         int    `json:"forgotten"`
	RemoteRewritten   bool   `json:"remote_rewritten"`
	Indexed           int    `json:"indexed"`
	IndexErr          string `json:"index_error,omitempty"`
}

// Sync fetches the remote's main, merges it into main (a fast-forward, or
// a merge commit whose tree is the union of both trees), pushes main back
// (never forced) and brings the indexes up to date. remote "" means origin.
// A failed index update does not fail the sync: the commits are the truth
// and the next command catches the index up; it is reported in IndexErr.
func (m *Memory) Sync(ctx context.Context, remote string) (SyncReport, error) {
	if remote == "" {
		remote = DefaultRemote
	}
	rep := SyncReport{Remote: remote}
	// The index catches up with main as soon as the fetch moved it, beside
	// the push (the remote's receive-pack, our pack): both take about a
	// second of a sync that merged 1,000 new exchanges on each side at
	// 100,000, and on two cores they overlap. It is the same catch-up as
	// after the sync, run while another git mem process could be adding
	// anyway (the index has its own lock; the sync holds none of it).
	var (
		bg      chan struct{}
		bgHead  plumbing.Hash
		bgRep   IndexReport
		bgErr   error
		indexed bool
	)
	opt := gitstore.SyncOptions{LockTimeout: m.LockTimeout}
	opt.MainMoved = func(head plumbing.Hash) {
		if bg != nil {
			return // a later move (after a push race) is caught up below
		}
		bg, bgHead = make(chan struct{}), head
		go func() {
			defer close(bg)
			bgRep, bgErr = m.UpdateIndex(ctx)
		}()
	}
	res, err := m.Repo.Sync(ctx, remote, opt)
	if res.Forgotten > 0 {
		m.dropTombstonedCards()      // TestSyncThatLearnsAForgetLeavesNoCard
		_, _ = m.purgeDistillCache() // check reports what is left (TestForgetPurgesDistillCache)
		m.statsFollow()
	}
	if bg != nil {
		<-bg
		rep.Indexed = bgRep.Indexed
		if bgErr != nil {
			rep.IndexErr = bgErr.Error()
		}
		indexed = bgErr == nil && res.Head == bgHead
	}
	rep.URL = res.URL
	rep.Fetched, rep.Merged, rep.Pushed = res.Fetched, res.Merged, res.Pushed
	rep.FastForward, rep.UpToDate, rep.Rounds = res.FastForward, res.UpToDate, res.Rounds
	rep.BytesReceived, rep.BytesSent = res.BytesReceived, res.BytesSent
	rep.TombstonesLearned, rep.Forgotten, rep.RemoteRewritten = res.TombstonesLearned, res.Forgotten, res.RemoteRewritten
	if !res.MergeCommit.IsZero() {
		rep.MergeCommit = res.MergeCommit.String()
	}
	if !res.Head.IsZero() {
		rep.Head = res.Head.String()
	}
	if err != nil {
		return rep, err
	}
	if indexed || res.Head == res.Before && m.indexAtMain() {
		return rep, nil
	}
	ix, err := m.UpdateIndex(ctx)
	rep.IndexErr = ""
	if err != nil {
		rep.IndexErr = err.Error()
	}
	rep.Indexed += ix.Indexed
	return rep, nil
}

// RemoteInfo is one remote of the memory (`git mem remote --json`).
type RemoteInfo struct {
	Name string `json:"name"`
	URL  string `json:"url"` // password hidden
}

// RemoteList lists the memory's remotes sorted by name, passwords hidden.
func (m *Memory) RemoteList() ([]RemoteInfo, error) {
	rs, err := m.Remotes()
	if err != nil {
		return nil, err
	}
	out := make([]RemoteInfo, 0, len(rs))
	for n, u := range rs {
		out = append(out, RemoteInfo{Name: n, URL: gitstore.RedactURL(u)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// indexAtMain reports whether the index's last commit is main, read without
// loading the index (search.LastCommitAt): a sync that did not move main
// (a push alone, or nothing to do) then has nothing to index. Anything
// else (no index, a stale or damaged one, another commit) is false, and
// UpdateIndex does what it did.
func (m *Memory) indexAtMain() bool {
	opt, err := m.searchOptions()
	if err != nil {
		return false
	}
	l, err := m.lockIndex(true)
	if err != nil {
		return false
	}
	defer l.Unlock()
	head, err := m.Repo.Head()
	if err != nil || head.IsZero() {
		return false
	}
	gen := m.currentGen()
	if gen == "" || m.isStale(gen) {
		return false
	}
	last, err := search.LastCommitAt(gen, opt)
	return err == nil && last == head.String()
}
