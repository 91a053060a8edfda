package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/search"
)

// IndexReport says what an index update did.
type IndexReport struct {
	Indexed int    `json:"indexed"`
	Rebuilt bool   `json:"rebuilt"`
	Reason  string `json:"reason,omitempty"` // why it was rebuilt
	Docs    int    `json:"docs"`
}

func (m *Memory) searchOptions() (search.Options, error) {
	emb, err := newEmbedder(m.Config)
	if err != nil {
		return search.Options{}, err
	}
	return search.Options{Embedder: emb}, nil
}

// openIndexForWrite opens the index for writing; a corrupt or mismatched
// index is a cache, so it is rebuilt and the reason reported.
func (m *Memory) openIndexForWrite() (*search.Index, string, error) {
	opt, err := m.searchOptions()
	if err != nil {
		return nil, "", err
	}
	ix, err := search.Open(m.IndexDir(), opt)
	if errors.Is(err, search.ErrCorrupt) || errors.Is(err, search.ErrMismatch) {
		// The advice to run reindex is what happens next: keep the cause.
		reason := err.Error()
		for _, e := range []error{search.ErrCorrupt, search.ErrMismatch} {
			reason = strings.TrimSuffix(reason, ": "+e.Error())
		}
		if rerr := search.Remove(m.IndexDir()); rerr != nil {
			return nil, "", rerr
		}
		ix, err = search.Open(m.IndexDir(), opt)
		return ix, reason, err
	}
	return ix, "", err
}

// UpdateIndex indexes the commits not yet indexed (after add, sync or a
// plain `git fetch origin main:main`). Corrupt or mismatched indexes are
// rebuilt from the commits.
func (m *Memory) UpdateIndex(ctx context.Context) (IndexReport, error) {
	ix, reason, err := m.openIndexForWrite()
	if err != nil {
		return IndexReport{}, err
	}
	defer ix.Close()
	rep, err := m.catchUp(ctx, ix)
	if reason != "" {
		rep.Rebuilt, rep.Reason = true, reason
	}
	return rep, err
}

// Reindex deletes the index and builds it again from the commits alone.
func (m *Memory) Reindex(ctx context.Context) (IndexReport, error) {
	opt, err := m.searchOptions()
	if err != nil {
		return IndexReport{}, err
	}
	// Take the index as a writer first, so a live writer is not pulled out
	// from under: it answers ErrBusy instead.
	ix, err := search.Open(m.IndexDir(), opt)
	if err == nil {
		ix.Close()
	} else if errors.Is(err, search.ErrBusy) {
		return IndexReport{}, err
	}
	if err := search.Remove(m.IndexDir()); err != nil {
		return IndexReport{}, err
	}
	ix, err = search.Open(m.IndexDir(), opt)
	if err != nil {
		return IndexReport{}, err
	}
	defer ix.Close()
	rep, err := m.catchUp(ctx, ix)
	rep.Rebuilt = true
	return rep, err
}

// pendingCommits lists the commits main has that the index has not seen,
// oldest first.
func (m *Memory) pendingCommits(last string) ([]*object.Commit, error) {
	lastHash := plumbing.ZeroHash
	if last != "" {
		lastHash = plumbing.NewHash(last)
	}
	var walked []*object.Commit
	merges := false
	err := m.Repo.Walk(plumbing.ZeroHash, func(h plumbing.Hash) bool { return h == lastHash }, func(c *object.Commit) error {
		if len(c.ParentHashes) > 1 {
			merges = true
		}
		walked = append(walked, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if merges && !lastHash.IsZero() {
		// A merge brought in a side branch: drop what was already indexed
		// through the last indexed commit's ancestry.
		old := map[plumbing.Hash]bool{}
		err := m.Repo.Walk(lastHash, nil, func(c *object.Commit) error {
			old[c.Hash] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
		kept := walked[:0]
		for _, c := range walked {
			if !old[c.Hash] {
				kept = append(kept, c)
			}
		}
		walked = kept
	}
	for i, j := 0, len(walked)-1; i < j; i, j = i+1, j-1 {
		walked[i], walked[j] = walked[j], walked[i]
	}
	return walked, nil
}

// catchUp feeds the pending commits to the index in batches.
func (m *Memory) catchUp(ctx context.Context, ix *search.Index) (IndexReport, error) {
	var rep IndexReport
	head, err := m.Repo.Head()
	if err != nil || head.IsZero() {
		rep.Docs = ix.Count()
		return rep, err
	}
	if ix.LastCommit() == head.String() {
		rep.Docs = ix.Count()
		return rep, nil
	}
	pending, err := m.pendingCommits(ix.LastCommit())
	if err != nil {
		return rep, err
	}
	seq := ix.LastSeq() + 1
	const batch = 500
	for start := 0; start < len(pending); start += batch {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		end := min(start+batch, len(pending))
		docs, err := m.docsOf(pending[start:end], seq)
		if err != nil {
			return rep, err
		}
		if err := ix.Add(docs); err != nil {
			return rep, fmt.Errorf("index: %w", err)
		}
		seq += end - start
		rep.Indexed += len(docs)
		if err := ix.SetLastCommit(pending[end-1].Hash.String(), seq-1); err != nil {
			return rep, err
		}
	}
	if err := ix.SetLastCommit(head.String(), seq-1); err != nil {
		return rep, err
	}
	rep.Docs = ix.Count()
	return rep, nil
}

// docsOf turns commits into index documents; reading and rendering the
// verbatim blobs runs on all cores.
func (m *Memory) docsOf(commits []*object.Commit, seq int) ([]search.Doc, error) {
	docs := make([]search.Doc, len(commits))
	errs := make([]error, len(commits))
	parallel(len(commits), func(i int) {
		c := commits[i]
		if len(c.ParentHashes) > 1 {
			return
		}
		e := entryOf(c)
		if e.Exchange == "" {
			return
		}
		blob, ok, err := m.Repo.ReadPath(c.Hash, exchange.BlobPath(e.Exchange))
		if err != nil {
			errs[i] = err
			return
		}
		var verbatim, output, head, tail string
		if ok {
			if ex, err := exchange.Parse(blob); err == nil {
				verbatim, output = ex.RenderSplit()
				head, tail = ex.HeadTail()
			} else {
				verbatim = string(blob)
			}
		}
		docs[i] = search.Doc{
			Seq: seq + i, Commit: e.Commit, ID: e.Exchange, Time: e.Time,
			Core: e.Core, Context: e.Context, Rooms: e.Rooms, Files: e.Files,
			Project: e.Project, Agent: e.Agent, Session: e.Session,
			Verbatim: verbatim, Output: output, Head: head, Tail: tail,
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := docs[:0]
	for _, d := range docs {
		if d.ID != "" {
			out = append(out, d)
		}
	}
	return out, nil
}
