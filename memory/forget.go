package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/redact"
	"github.com/gitmem/git-mem/search"
)

// ForgetSelect says which exchanges to forget: any of the given commits or
// exchange ids, the exchanges matching a filter, or a search's results.
type ForgetSelect struct {
	Refs   []string // commit (≥ 4 hex digits) or exchange id
	Filter Filter   // session, project, time range, rooms, files…
	Query  string   // the top K results of a search
	K      int
}

// ErrNothingSelected is a forget that names nothing (exit 2).
var ErrNothingSelected = errors.New("forget needs exchanges: give commits or exchange ids, a filter (--session, --project, --since/--until …) or --query")

// ForgetReport says what forget removed.
type ForgetReport struct {
	Forgotten []string             `json:"forgotten"` // exchange ids
	Before    string               `json:"before"`    // main before
	After     string               `json:"after"`     // main after ("" when empty)
	Purged    gitstore.PurgeReport `json:"purged"`
	Index     IndexReport          `json:"index"`
	DryRun    bool                 `json:"dry_run"`
	Plan      []*Entry             `json:"plan,omitempty"`
}

// ForgetPlan lists the exchanges a forget would remove, newest first. It
// also takes every exchange a tombstone names that is still in main (a
// forget killed between its two ref updates), so the next forget finishes
// the last one.
func (m *Memory) ForgetPlan(ctx context.Context, sel ForgetSelect) ([]*Entry, error) {
	var out []*Entry
	seen := map[string]bool{}
	take := func(e *Entry) {
		if !seen[e.Exchange] {
			seen[e.Exchange] = true
			out = append(out, e)
		}
	}
	for _, ref := range sel.Refs {
		e, _, err := m.Show(ref)
		if err != nil {
			return nil, err
		}
		take(e)
	}
	if !sel.Filter.IsZero() {
		es, err := m.Log(sel.Filter, 0)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			take(e)
		}
	}
	if sel.Query != "" {
		rs, _, err := m.Search(ctx, SearchQuery{Text: sel.Query, K: sel.K, Filter: sel.Filter})
		if err != nil {
			return nil, err
		}
		all, err := m.Entries()
		if err != nil {
			return nil, err
		}
		byID := map[string]*Entry{}
		for _, e := range all {
			byID[e.Exchange] = e
		}
		for _, r := range rs {
			for _, id := range append([]string{r.Exchange}, r.Collapsed...) {
				if e := byID[id]; e != nil {
					take(e)
				}
			}
		}
	}
	if len(sel.Refs) == 0 && sel.Filter.IsZero() && sel.Query == "" {
		return nil, ErrNothingSelected
	}
	if err := m.takeCompletions(ctx, out, take); err != nil {
		return nil, err
	}
	pending, err := m.tombstonedInMain()
	if err != nil {
		return nil, err
	}
	for _, e := range pending {
		take(e)
	}
	return out, nil
}

// takeCompletions takes, for each exchange of sel, its other copies of one
// prompt: the exchange an add stored under its completed id <id>~<12 hex>
// when the reply came after the prompt was stored alone, and the prompt
// alone such an exchange supersedes (both hold the person's message: a
// forget of one alone kept the text in the other). They are known by the
// supersede link between <id> and <id>~<12 hex>; taken again until none is
// new (a completion completed again).
func (m *Memory) takeCompletions(ctx context.Context, sel []*Entry, take func(*Entry)) error {
	if len(sel) == 0 {
		return nil
	}
	ids := make([]string, len(sel))
	for i, e := range sel {
		ids[i] = e.Exchange
	}
	l, err := m.LinksFor(ctx, ids)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	for len(ids) > 0 {
		var next []string
		for _, id := range ids {
			for _, other := range append(append([]string(nil), l.Supersedes[id]...), l.SupersededBy[id]...) {
				if seen[other] || !completionPair(id, other) {
					continue
				}
				seen[other] = true
				e, _, err := m.Show(other)
				if err != nil {
					if errors.Is(err, ErrNotFound) {
						continue // the link outlived its exchange
					}
					return err
				}
				take(e)
				next = append(next, other)
			}
		}
		if len(next) > 0 {
			if l, err = m.LinksFor(ctx, next); err != nil {
				return err
			}
		}
		ids = next
	}
	return nil
}

// completionPair reports whether one id is the other's completed (or
// derived) id: <id>~<12 hex>.
func completionPair(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	rest, ok := strings.CutPrefix(b, a+"~")
	if !ok || len(rest) != 12 {
		return false
	}
	for _, c := range rest {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// tombstonedInMain lists the exchanges of main that a tombstone names.
func (m *Memory) tombstonedInMain() ([]*Entry, error) {
	tip, err := m.Repo.TombstoneTip()
	if err != nil || tip.IsZero() {
		return nil, err
	}
	all, err := m.Entries()
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(all))
	for i, e := range all {
		paths[i] = exchange.BlobPath(e.Exchange)
	}
	dead, err := m.Repo.Tombstoned(paths)
	if err != nil {
		return nil, err
	}
	var out []*Entry
	for i, d := range dead {
		if d {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// Forget removes the exchanges for good: main is rewritten without them
// (every other exchange keeps its id and blob path), a tombstone (id, blob
// id, time, reason — never the content) is recorded on refs/mem/tombstones,
// reflogs and unreachable objects are purged, the index and the card cache
// follow main. A later add, import or hook of the same exchange stores
// nothing.
func (m *Memory) Forget(ctx context.Context, plan []*Entry, reason string) (ForgetReport, error) {
	rep := ForgetReport{Forgotten: []string{}}
	if len(plan) == 0 {
		return rep, nil
	}
	head, err := m.Repo.Head()
	if err != nil {
		return rep, err
	}
	now := time.Now().UTC()
	// The reason is pushed with the tombstones and never purged: a person
	// may well name what leaked in it (TestForgetReasonRedacted).
	reason, _ = redact.String(reason)
	paths := make([]string, 0, len(plan))
	ts := make([]gitstore.Tombstone, 0, len(plan))
	for _, e := range plan {
		p := exchange.BlobPath(e.Exchange)
		bh, _, err := m.Repo.BlobHashAt(head, p)
		if err != nil {
			return rep, err
		}
		paths = append(paths, p)
		ts = append(ts, gitstore.Tombstone{Exchange: e.Exchange, Blob: hashString(bh), Time: now, Reason: reason})
		rep.Forgotten = append(rep.Forgotten, e.Exchange)
	}
	// The index and the card cache follow in place when they can (a
	// rebuild costs a reindex), beside the purge; UpdateIndex then catches
	// up, or rebuilds when that failed.
	inPlace := false
	res, err := m.Repo.ForgetThen(paths, ts, m.LockTimeout, func(res gitstore.ForgetResult) {
		m.followRewrite(res.Before, res.After, res.Moved, rep.Forgotten)
		inPlace = m.forgetInPlace(ctx, rep.Forgotten, res.Moved) == nil
	})
	rep.Before, rep.After = hashString(res.Before), hashString(res.After)
	rep.Purged = res.Purge
	if err != nil {
		return rep, fmt.Errorf("forget: %w", err)
	}
	m.statsFollow() // after the purge: it may read commits an add brought meanwhile
	if _, err := m.purgeDistillCache(); err != nil {
		return rep, fmt.Errorf("forgotten, but the distiller's cache still holds a copy (run `git mem check --repair`): %w", err)
	}
	if !inPlace {
		// The in-place follow failed somewhere (its compaction, say): a
		// half-followed index may still hold the forgotten words in a file
		// even where it looks caught up, so it is rebuilt.
		if rep.Index, err = m.Reindex(ctx); err != nil {
			return rep, fmt.Errorf("forgotten, but the index was not rebuilt (run `git mem reindex`): %w", err)
		}
	} else if rep.Index, err = m.UpdateIndex(ctx); err != nil {
		return rep, fmt.Errorf("forgotten, but the index was not rebuilt (run `git mem reindex`): %w", err)
	}
	if inPlace {
		if ok, err := m.indexAgrees(ctx); err != nil || !ok {
			// Never leave an index that disagrees with main: rebuild.
			if rep.Index, err = m.Reindex(ctx); err != nil {
				return rep, fmt.Errorf("forgotten, but the index was not rebuilt (run `git mem reindex`): %w", err)
			}
		}
	}
	if _, err := m.Entries(); err != nil {
		return rep, err
	}
	return rep, nil
}

func hashString(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// indexAgrees reports whether the index holds exactly main's exchanges at
// their commits (count and set digest, as status proves it).
func (m *Memory) indexAgrees(ctx context.Context) (bool, error) {
	n, d, err := m.mainSummary()
	if err != nil {
		return false, err
	}
	agree := false
	_, err = m.withIndex(ctx, func(ix *search.Index) error {
		agree = ix.Count() == n && ix.Digest() == fmt.Sprintf("%016x", d)
		return nil
	})
	return agree, err
}
