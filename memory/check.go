package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/search"
)

// Problem is one thing `git mem check` found wrong.
type Problem struct {
	Area string `json:"area"` // repo | index | cache | queue | locks
	What string `json:"what"`
	// Repairable means `git mem check --repair` fixes it (it never touches
	// commits: only what is rebuilt from them, and leftovers).
	Repairable bool `json:"repairable"`
}

// CheckReport is what `git mem check` found (and, with --repair, did).
type CheckReport struct {
	Commits   int       `json:"commits"`
	Exchanges int       `json:"exchanges"`
	IndexDocs int       `json:"index_docs"`
	Pending   int       `json:"pending"`
	Problems  []Problem `json:"problems"`
	Repaired  []string  `json:"repaired"`
}

// ErrCheckFailed marks a check that found problems (exit 1).
var ErrCheckFailed = errors.New("check found problems")

// Check verifies the memory like `git fsck` and `restic check`: every
// commit and blob of main is readable and well formed, the index holds
// exactly main's exchanges with their current cards and its files pass
// their checksums, the card cache agrees, and the queue and locks hold
// nothing stale. With repair it rebuilds the index and the cache and
// removes leftovers; commits are never changed, except to finish an
// interrupted forget.
func (m *Memory) Check(ctx context.Context, repair bool) (*CheckReport, error) {
	rep := &CheckReport{Problems: []Problem{}, Repaired: []string{}}
	add := func(area, what string, repairable bool) {
		rep.Problems = append(rep.Problems, Problem{Area: area, What: what, Repairable: repairable})
	}
	head, err := m.Repo.Head()
	if err != nil {
		return nil, err
	}
	if m.Repo.Pending() {
		add("forget", "a forget or a sync that carried one was interrupted before it finished (mem/forget.pending): run `git mem check --repair`, or any add, sync or forget finishes it", true)
	}
	// A pack whose header counts more objects than its index (written by
	// a forget before main e544dbc) is mended first: git refuses it, so
	// fsck and the pending forget's purge can only work after.
	// A tracking ref a killed write left empty (before session 31 go-git
	// wrote them in place) fails fsck and every later sync: it only records
	// what the remote held, so --repair removes it and the next sync of
	// that remote writes it again.
	damaged := m.Repo.DamagedTrackingRefs()
	for _, name := range damaged {
		add("repo", fmt.Sprintf("ref %s holds no commit id (a write killed halfway); it only records what the remote held at the last sync", name), true)
	}
	if repair && len(damaged) > 0 {
		dropped, err := m.Repo.DropDamagedTrackingRefs()
		for _, name := range dropped {
			rep.Repaired = append(rep.Repaired, "removed the damaged ref "+name+" (the next sync of its remote writes it again)")
		}
		if err != nil {
			return rep, err
		}
		damaged = nil
	}
	bad := m.Repo.BadPacks()
	for _, b := range bad {
		add("repo", fmt.Sprintf("pack %s: its header counts %d objects, its index %d: git refuses it", b.Pack, b.Header, b.Index), true)
	}
	if repair && len(bad) > 0 {
		mended, err := m.Repo.RepairPacks()
		for _, b := range mended {
			rep.Repaired = append(rep.Repaired, fmt.Sprintf("rewrote pack %s with each of its %d objects once", b.Pack, b.Index))
		}
		if err != nil {
			return rep, err
		}
		bad = nil
	}
	unlock, err := m.Repo.HoldPacks(10 * time.Minute)
	if err != nil {
		return nil, err
	}
	living, err := m.checkRepo(ctx, head, rep, bad, damaged, add)
	unlock()
	if err != nil {
		return nil, err
	}
	rep.Exchanges = len(living)
	m.checkIndex(head, living, rep, add)
	m.checkCache(head, living, add)
	if files, err := m.forgottenDistillEntries(); err != nil {
		add("distill", "the distiller's cache cannot be read: "+err.Error(), false)
	} else if len(files) > 0 {
		add("distill", fmt.Sprintf("the distiller's cache holds %d forgotten exchange(s)", len(files)), true)
	}
	m.checkQueue(rep, add)
	if repair {
		if err := m.repair(ctx, rep); err != nil {
			return rep, err
		}
	}
	if len(rep.Problems) > 0 && !(repair && allRepaired(rep.Problems)) {
		return rep, fmt.Errorf("%w: %d", ErrCheckFailed, len(rep.Problems))
	}
	return rep, nil
}

func allRepaired(ps []Problem) bool {
	for _, p := range ps {
		if !p.Repairable {
			return false
		}
	}
	return true
}

// checkRepo walks main: every commit and the blob of every exchange must
// read back; it returns the living commit of each exchange id (the one
// whose blob main's tree holds).
//
// fsck's lines about a pack in bad or a damaged tracking ref are left out:
// each is reported (and mended by --repair) on its own.
func (m *Memory) checkRepo(ctx context.Context, head plumbing.Hash, rep *CheckReport, bad []gitstore.BadPack, damaged []string, add func(string, string, bool)) (map[string]string, error) {
	living := map[string]string{}
	if head.IsZero() {
		return living, nil
	}
	if gitPath, err := exec.LookPath("git"); err == nil {
		out, err := exec.CommandContext(ctx, gitPath, "--git-dir", m.Repo.Dir(), "fsck", "--strict", "--no-dangling", "--no-progress").CombinedOutput()
		if err != nil {
		lines:
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				for _, b := range bad {
					if strings.Contains(line, b.Pack) {
						continue lines
					}
				}
				for _, name := range damaged {
					if strings.Contains(line, name+":") {
						continue lines
					}
				}
				if line != "" {
					add("repo", "git fsck: "+line, false)
				}
			}
		}
	}
	err := m.Repo.Walk(head, nil, func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rep.Commits++
		if len(c.ParentHashes) > 1 {
			return nil
		}
		e := entryOf(c)
		if e.Exchange == "" {
			// A pin or a supersede link (Supersession and pins): a commit
			// that adds nothing, its tree its parent's.
			if _, ok := metaEvent(c); ok && sameTreeAsParent(m, c) {
				return nil
			}
			add("repo", fmt.Sprintf("commit %s carries no Exchange: trailer", c.Hash), false)
			return nil
		}
		path := exchange.BlobPath(e.Exchange)
		blob, ok, err := m.Repo.ReadPath(c.Hash, path)
		switch {
		case err != nil:
			add("repo", fmt.Sprintf("commit %s: exchange %s: %v", c.Hash, e.Exchange, err), false)
			return nil
		case !ok:
			add("repo", fmt.Sprintf("commit %s: exchange %s has no blob at %s", c.Hash, e.Exchange, path), false)
			return nil
		}
		if _, err := exchange.Parse(blob); err != nil {
			add("repo", fmt.Sprintf("commit %s: exchange %s: blob is not a valid exchange: %v", c.Hash, e.Exchange, err), false)
		}
		if _, seen := living[e.Exchange]; seen {
			if ok, err := m.isLiving(head, c.Hash, e.Exchange); err == nil && ok {
				living[e.Exchange] = c.Hash.String()
			}
			return nil
		}
		if ok, err := m.isLiving(head, c.Hash, e.Exchange); err == nil && ok {
			living[e.Exchange] = c.Hash.String()
		} else {
			living[e.Exchange] = "" // resolved by a later (older) commit
		}
		return nil
	})
	if err != nil {
		add("repo", "walking main: "+err.Error(), false)
	}
	for id, c := range living {
		if c == "" {
			add("repo", fmt.Sprintf("exchange %s: no commit of main carries the blob main's tree holds", id), false)
			delete(living, id)
		}
	}
	return living, nil
}

// checkIndex compares the current index generation with main's exchanges.
func (m *Memory) checkIndex(head plumbing.Hash, living map[string]string, rep *CheckReport, add func(string, string, bool)) {
	opt, err := m.searchOptions()
	if err != nil {
		add("index", err.Error(), false)
		return
	}
	l, err := m.lockIndex(true)
	if err != nil {
		add("index", err.Error(), false)
		return
	}
	defer l.Unlock()
	gen := m.currentGen()
	if gen == "" {
		if len(living) > 0 {
			add("index", "no search index yet", true)
		}
		return
	}
	ix, err := search.OpenReadOnly(gen, opt)
	if err != nil {
		add("index", "cannot be opened: "+rebuildReason(err), true)
		return
	}
	defer ix.Close()
	rep.IndexDocs = ix.Count()
	if err := ix.Verify(); err != nil {
		add("index", rebuildReason(err), true)
	}
	// An empty main (every exchange forgotten) is indexed by an index of
	// nothing: its last commit is none.
	if at := headString(head); ix.LastCommit() != at {
		add("index", fmt.Sprintf("indexed up to %s, main is at %s", orEmpty(ix.LastCommit()), orEmpty(at)), true)
	}
	docs, err := ix.Docs()
	if err != nil {
		add("index", rebuildReason(err), true)
		return
	}
	var missing, extra, stale []string
	for id, c := range living {
		switch dc, ok := docs[id]; {
		case !ok:
			missing = append(missing, id)
		case dc != c:
			stale = append(stale, id)
		}
	}
	for id := range docs {
		if _, ok := living[id]; !ok {
			extra = append(extra, id)
		}
	}
	report := func(ids []string, what string) {
		if len(ids) == 0 {
			return
		}
		sort.Strings(ids)
		add("index", fmt.Sprintf("%d exchange(s) %s, e.g. %s", len(ids), what, ids[0]), true)
	}
	report(missing, "of main are not in the index")
	report(extra, "in the index are not in main")
	report(stale, "are indexed with another commit's card than main's")
}

// checkCache compares the card cache (when it describes main's head) with
// main's exchanges.
func (m *Memory) checkCache(head plumbing.Hash, living map[string]string, add func(string, string, bool)) {
	cf, ok := loadEntryCache(m.EntryCachePath())
	if _, err := os.Stat(m.EntryCachePath()); err == nil && !ok {
		add("cache", "the card cache cannot be read", true)
		return
	}
	if !ok || cf.Head != head.String() {
		return // behind: brought up to date on the next log
	}
	seen := map[string]bool{}
	for _, e := range cf.Entries {
		if seen[e.Exchange] {
			add("cache", "the card cache lists exchange "+e.Exchange+" twice", true)
			return
		}
		seen[e.Exchange] = true
		if c, ok := living[e.Exchange]; !ok || c != e.Commit {
			add("cache", "the card cache disagrees with main on exchange "+e.Exchange, true)
			return
		}
	}
	if len(seen) != len(living) {
		add("cache", fmt.Sprintf("the card cache holds %d exchanges, main %d", len(seen), len(living)), true)
	}
}

// checkQueue reports background work not yet done and stale leftovers.
func (m *Memory) checkQueue(rep *CheckReport, add func(string, string, bool)) {
	pending, err := m.Jobs(false)
	if err != nil {
		add("queue", err.Error(), false)
	}
	rep.Pending = len(pending)
	failed, _ := m.Jobs(true)
	for _, j := range failed {
		add("queue", fmt.Sprintf("failed job %s (%s %s) after %d attempts: %s; `git mem queue retry %s` or `git mem queue drop %s`",
			j.id(), j.Kind, j.source(), j.Attempts, j.LastError, j.id(), j.id()), false)
	}
	for _, p := range m.Repo.Leftovers() {
		add("locks", "temporary file of a killed writer: "+p, true)
	}
	if m.Repo.StaleRefLock() {
		add("locks", "refs/heads/main.lock was left by a killed git mem", true)
	}
}

// repair rebuilds what is rebuildable. The report's problems stay listed;
// Repaired says what was done.
func (m *Memory) repair(ctx context.Context, rep *CheckReport) error {
	needIndex, needCache := false, false
	for _, p := range rep.Problems {
		if !p.Repairable {
			continue
		}
		switch p.Area {
		case "index":
			needIndex = true
		case "cache":
			needCache = true
		}
	}
	for _, p := range rep.Problems {
		if p.Area != "forget" {
			continue
		}
		// The one repair that moves main: it finishes what forget began.
		ran, err := m.Repo.FinishPending(m.LockTimeout)
		if err != nil {
			return err
		}
		if _, err := m.UpdateIndex(ctx); err != nil {
			return err
		}
		if ran {
			rep.Repaired = append(rep.Repaired, "finished the interrupted forget")
		} else {
			rep.Repaired = append(rep.Repaired, "left the interrupted forget to the forget or sync running now, which finishes it")
		}
		break
	}
	if n := m.Repo.RemoveLeftovers(); n > 0 {
		rep.Repaired = append(rep.Repaired, fmt.Sprintf("removed %d temporary file(s)", n))
	}
	if m.Repo.RecoverStaleRefLock() {
		rep.Repaired = append(rep.Repaired, "removed a stale refs/heads/main.lock")
	}
	if n, err := m.purgeDistillCache(); err != nil {
		return err
	} else if n > 0 {
		rep.Repaired = append(rep.Repaired, fmt.Sprintf("removed %d forgotten exchange(s) from the distiller's cache", n))
	}
	if needCache {
		if err := os.Remove(m.EntryCachePath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if _, err := m.Entries(); err != nil {
			return err
		}
		rep.Repaired = append(rep.Repaired, "rebuilt the card cache")
	}
	if needIndex {
		r, err := m.Reindex(ctx)
		if err != nil {
			return fmt.Errorf("rebuild the search index: %w", err)
		}
		rep.IndexDocs = r.Docs
		rep.Repaired = append(rep.Repaired, fmt.Sprintf("rebuilt the search index (%d exchanges)", r.Docs))
	}
	return nil
}

// sameTreeAsParent says whether commit c's tree is its parent's (an
// empty tree for a first commit).
func sameTreeAsParent(m *Memory, c *object.Commit) bool {
	if len(c.ParentHashes) == 0 {
		return c.TreeHash == plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	}
	p, err := m.Repo.Commit(c.ParentHashes[0])
	return err == nil && p.TreeHash == c.TreeHash
}

// headString is main's tip as an index records it: "" for no main.
func headString(head plumbing.Hash) string {
	if head.IsZero() {
		return ""
	}
	return head.String()
}

func orEmpty(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}
