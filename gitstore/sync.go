package gitstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Sync follows git's own model: fetch the remote's main into
// refs/remotes/<name>/main, bring it into main (fast-forward, or a merge
// commit whose tree is the union of both trees), then push main back,
// never forced. Network work runs without the write lock; only the final
// compare-and-swap of main takes it, so a hook appending meanwhile is never
// held up by a slow remote.

// ErrNoRemote means the memory has no remote of that name.
var ErrNoRemote = errors.New("no such remote")

// ErrNotMemory means the remote's main is not a memory: nothing was merged.
var ErrNotMemory = errors.New("the remote is not a git mem memory")

// ErrRewritten means the remote's main no longer contains what it held at
// the last sync: its history was rewritten (force-pushed).
var ErrRewritten = errors.New("the remote's history was rewritten")

// SyncOptions tune a sync; the zero value is the default.
type SyncOptions struct {
	// Auth overrides the credentials found from the URL, the environment,
	// the git credential helpers or the ssh agent.
	Auth transport.AuthMethod
	// LockTimeout bounds the wait for the write lock (default DefaultLockTimeout).
	LockTimeout time.Duration
	// Retries bounds the fetch-merge-push rounds when another machine pushes
	// in between (default 8).
	Retries int
	// RecordTrailer is the trailer every non-merge commit of a memory carries
	// (default "Exchange"); RecordDir the one top-level folder of its tree
	// (default "ex"). A remote whose main breaks either is refused.
	RecordTrailer string
	RecordDir     string
	// MetaTrailer marks a commit that is not a record (a pin, a link; default
	// "Mem-Kind"): accepted when its tree is its parent's, so it adds no
	// content a record does not explain.
	MetaTrailer string
	// MainMoved, when set, is called once main has moved to head by the
	// fetch (a fast-forward or the union merge), before the push; it must
	// not block (the caller starts its indexing there, which then runs
	// beside the push). After a push race main may move again: it is
	// called for every move.
	MainMoved func(head plumbing.Hash)
	// noWarm turns the warm-up during the fetch off (tests compare both).
	noWarm bool
}

// SyncResult says what a sync did. Counts are of record commits (merges
// excluded).
type SyncResult struct {
	Remote        string        `json:"remote"`
	URL           string        `json:"url"`
	Fetched       int           `json:"fetched"` // record commits the remote had that main lacked
	Merged        int           `json:"merged"`  // records (blob paths) new to main's tree
	Pushed        int           `json:"pushed"`  // record commits sent to the remote
	FastForward   bool          `json:"fast_forward"`
	MergeCommit   plumbing.Hash `json:"merge_commit"` // zero when no merge was needed
	Before        plumbing.Hash `json:"before"`       // main before
	Head          plumbing.Hash `json:"head"`         // main after
	RemoteHead    plumbing.Hash `json:"remote_head"`  // the remote's main after
	UpToDate      bool          `json:"up_to_date"`
	BytesReceived int64         `json:"bytes_received"`
	BytesSent     int64         `json:"bytes_sent"`
	Rounds        int           `json:"rounds"` // fetch-merge-push rounds (more than 1 after a push race)
	// Forgets carried by the tombstone refs: tombstones this memory learned
	// from the remote, exchanges that left this main because of them, and
	// whether the remote's main was replaced by one without what they name.
	TombstonesLearned int  `json:"tombstones_learned"`
	Forgotten         int  `json:"forgotten"`
	RemoteRewritten   bool `json:"remote_rewritten"`
	purgeOwed         bool // objects no ref reaches hold forgotten content
}

func (o *SyncOptions) defaults() {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.Retries <= 0 {
		o.Retries = 8
	}
	if o.RecordTrailer == "" {
		o.RecordTrailer = "Exchange"
	}
	if o.RecordDir == "" {
		o.RecordDir = "ex"
	}
	if o.MetaTrailer == "" {
		o.MetaTrailer = "Mem-Kind"
	}
}

// TrackingRef is where the remote's main is kept after a fetch.
func TrackingRef(remote string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/remotes/" + remote + "/" + Branch)
}

// RemoteURL returns the URL of a configured remote.
func (r *Repo) RemoteURL(name string) (string, error) {
	cfg, err := r.repo.Config()
	if err != nil {
		return "", fmt.Errorf("read memory config: %w", err)
	}
	rc, ok := cfg.Remotes[name]
	if !ok || len(rc.URLs) == 0 {
		return "", fmt.Errorf("%w %q in %s: add it with `git mem remote add %s URL`", ErrNoRemote, name, r.dir, name)
	}
	return rc.URLs[0], nil
}

// Fetch brings the remote's main into refs/remotes/<remote>/main and
// returns its tip: zero for an empty remote (a success, as is "already up
// to date"). Nothing of main changes.
func (r *Repo) Fetch(remote string) (plumbing.Hash, error) {
	url, err := r.RemoteURL(remote)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	a, err := newRemoteAuth(url, nil)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	l, err := r.syncLock(DefaultLockTimeout)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer l.Unlock()
	s, done, err := r.forSync()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer done()
	tip, _, err := s.fetch(context.Background(), remote, a)
	return tip, err
}

func (r *Repo) fetch(ctx context.Context, remote string, a *remoteAuth) (plumbing.Hash, int64, error) {
	track := TrackingRef(remote)
	before := packBytes(r.dir)
	err := a.retryAuth(func(auth transport.AuthMethod) error {
		return r.repo.FetchContext(ctx, &git.FetchOptions{
			RemoteName: remote,
			RemoteURL:  a.url,
			RefSpecs: []config.RefSpec{
				config.RefSpec("+" + string(MainRef) + ":" + string(track)),
				// A pattern, so that a remote without tombstones is no error
				// (go-git refuses an exact refspec that matches nothing); it
				// matches refs/mem/tombstones alone.
				config.RefSpec("+" + string(TombstoneRef) + "*:" + string(TombstoneTrackingRef(remote)) + "*"),
			},
			Auth:  auth,
			Tags:  git.NoTags,
			Force: true,
		})
	})
	r.st.refresh()
	var nm git.NoMatchingRefSpecError
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
	case errors.Is(err, transport.ErrEmptyRemoteRepository), errors.As(err, &nm):
		return plumbing.ZeroHash, 0, nil // a first sync to an empty remote
	default:
		return plumbing.ZeroHash, 0, classify(remote, a.url, err)
	}
	tip, err := readRef(r.dir, track)
	return tip, max(packBytes(r.dir)-before, 0), err
}

// syncLock is one sync at a time, holding the objects level shared from
// the fetch (whose objects only a tracking ref references, and only once the
// fetch is done) to the push.
func (r *Repo) syncLock(timeout time.Duration) (*FileLock, error) {
	obj, err := r.ObjectsShared(timeout)
	if err != nil {
		return nil, err
	}
	l, err := LockFile(filepath.Join(r.MemDir(), "sync.lock"), timeout)
	if err != nil {
		obj.Unlock()
		return nil, err
	}
	return l.With(obj), nil
}

// packBytes is the size of the repo's packs (to report what a fetch received).
func packBytes(dir string) int64 {
	ents, _ := os.ReadDir(filepath.Join(dir, "objects", "pack"))
	var n int64
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pack") {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

// forSync is a view of the repo whose storage keeps pack files open: a
// sync reads thousands of objects, and the default storage opens and
// closes the pack file for each one (most of a push's time, measured).
// done closes it and makes r see the packs the sync wrote.
func (r *Repo) forSync() (s *Repo, done func(), err error) {
	st := newObjectStore(filesystem.NewStorageWithOptions(newPackFS(r.dir), cache.NewObjectLRU(64<<20), filesystem.Options{MaxOpenDescriptors: 64}), r.dir)
	st.memo = newReadMemo()
	repo, err := git.Open(st, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("open memory at %s: %w", r.dir, err)
	}
	c := *r
	c.st, c.repo = st, repo
	return &c, func() { _ = st.Close(); r.st.refresh() }, nil
}

// Sync fetches the remote's main, merges it into main and pushes main back.
func (r *Repo) Sync(ctx context.Context, remote string, opt SyncOptions) (SyncResult, error) {
	s, done, err := r.forSync()
	if err != nil {
		return SyncResult{Remote: remote}, err
	}
	if moved := opt.MainMoved; moved != nil {
		// r's readers (the caller's indexing) see the fetched packs at once.
		opt.MainMoved = func(h plumbing.Hash) { r.st.refresh(); moved(h) }
	}
	res, err := s.sync(ctx, remote, opt)
	done()
	if res.purgeOwed {
		// What the tombstones name left main, and the fetch may have
		// brought it along: purge (outside the sync's locks), or leave
		// mem/forget.pending for the next command to finish.
		if _, perr := r.FinishPending(opt.LockTimeout); perr != nil && err == nil {
			err = perr
		}
	}
	return res, err
}

func (r *Repo) sync(ctx context.Context, remote string, opt SyncOptions) (SyncResult, error) {
	opt.defaults()
	res := SyncResult{Remote: remote}
	url, err := r.RemoteURL(remote)
	if err != nil {
		return res, err
	}
	res.URL = RedactURL(url)
	a, err := newRemoteAuth(url, opt.Auth)
	if err != nil {
		return res, err
	}
	// One sync of a memory at a time: the tracking refs have one writer
	// (objectStore.CheckAndSetReference), and a second sync would only
	// repeat the first one's work.
	l, err := r.syncLock(opt.LockTimeout)
	if err != nil {
		return res, err
	}
	defer l.Unlock()
	if res.Before, err = r.Head(); err != nil {
		return res, err
	}
	track := TrackingRef(remote)
	// A tracking ref a killed write left empty only records what a remote
	// held: dropped once, before the rounds, it is read as a first sync.
	if _, err := r.DropDamagedTrackingRefs(); err != nil {
		return res, err
	}
	fetched := map[plumbing.Hash]bool{}
	// The ancestry cache (~20 MB read and hashed at 1,000,000 exchanges)
	// is loaded while the fetch waits on the remote: the fetch does not
	// need it, and before it was ~0.09 s in series ahead of the fetch.
	loading := r.startLoadAncestry()
	var cacheTip plumbing.Hash
	var cache *commitSet
	var lastTip plumbing.Hash // main as merged, and its ancestry: the next cache
	var lastAnc commitSet
	var early *earlyWalk // the push's walk of ours, beside the merge
	defer func() { early.wait() }()
	var moves [][2]plumbing.Hash // main's moves whose new records are not counted yet
	var side *besidePush         // that count, the pushed records' and the ancestry cache, beside the push
	defer func() { side.wait() }()
	var savedTip plumbing.Hash // the ancestry cache written beside a push
	for round := 1; ; round++ {
		res.Rounds = round
		if err := ctx.Err(); err != nil {
			return res, err
		}
		known, err := readRef(r.dir, track)
		if err != nil {
			return res, err
		}
		var warm *warmUp
		if round == 1 && !opt.noWarm {
			// Our new trees are read while the remote prepares its pack.
			warm = r.startWarm(res.Before, known, loading)
			defer warm.wait()
		}
		remoteTip, got, err := r.fetch(ctx, remote, a)
		warm.end()
		if round == 1 {
			cacheTip, cache = loading.wait()
		}
		res.BytesReceived += got
		if err != nil {
			return res, err
		}
		restore := func() { r.restoreTracking(track, known) }
		// Tombstones first: the union of both sides' forgets decides what
		// neither main may hold.
		head0, err := r.Head()
		if err != nil {
			restore()
			return res, err
		}
		tl, err := r.learnTombstones(remote, remoteTip, head0)
		if err != nil {
			restore()
			return res, err
		}
		res.TombstonesLearned += tl.learned
		theirs := tl.theirs // the remote's main without what the tombstones name
		if theirs != remoteTip {
			// The fetch brought forgotten content: whatever happens next
			// (a refusal too), it is purged once the sync is done.
			res.RemoteRewritten = true
			if _, err := r.markPending(); err != nil {
				restore()
				return res, err
			}
			res.purgeOwed = true
		}
		theirsAnc, err := r.ancestryFrom(theirs, cacheTip, cache)
		if err != nil {
			restore()
			return res, err
		}
		remoteAnc := theirsAnc
		if remoteTip != theirs {
			if remoteAnc, err = r.ancestry(remoteTip); err != nil {
				restore()
				return res, err
			}
		}
		if !known.IsZero() && !theirs.IsZero() && !theirsAnc.has(known) {
			if _, err := r.Commit(known); err == nil {
				ok, err := tl.explains(known, theirsAnc)
				if err != nil || !ok {
					restore()
				}
				if err != nil {
					return res, err
				}
				if !ok {
					return res, fmt.Errorf("%w: %s's main (%s) no longer contains %s, which it held at the last sync, and no tombstone explains it; "+
						"git mem will not merge it or force-push over it, nothing was changed. "+
						"To merge anyway (bringing back what the rewrite removed): `git --git-dir %s update-ref -d %s` then `git mem sync`. "+
						"To adopt the rewrite (what only this memory holds is dropped): `git --git-dir %s fetch %s +main:main`",
						ErrRewritten, remote, short(remoteTip), short(known), r.dir, track, r.dir, remote)
				}
			}
		}
		if tl.swap {
			// Drop what the tombstones name from main and the tracking refs
			// (this remote's becomes theirs) and take the union's tombstones,
			// in one moment; a purge is owed from here on.
			if _, err := r.markPending(); err != nil {
				return res, err
			}
			before, after, err := r.swapRewritten(tl.rw, tl.union, opt.LockTimeout)
			if err != nil {
				return res, err
			}
			if before != after {
				res.Forgotten += tl.rw.Dropped
			}
			res.purgeOwed = true
		}
		// Bring theirs into main; main may move under us (an append): redo.
		var head plumbing.Hash
		for {
			ours, err := r.Head()
			if err != nil {
				return res, err
			}
			oursAnc, err := r.ancestryFrom(ours, cacheTip, cache)
			if err != nil {
				return res, err
			}
			theirsOnly, _, err := r.only(theirs, oursAnc)
			if err != nil {
				return res, err
			}
			if err := r.checkMemory(remote, theirs, theirsOnly, opt); err != nil {
				restore()
				return res, err
			}
			n, err := r.countRecords(theirsOnly, fetched)
			if err != nil {
				return res, err
			}
			res.Fetched += n
			next := ours
			switch {
			case len(theirsOnly) == 0: // theirs is empty or already in main
			case ours.IsZero() || theirsAnc.has(ours):
				next = theirs
				res.FastForward = true
			default:
				msg := fmt.Sprintf("Merge memory from %s\n\nUnion of both trees: %d commits of %s joined main.\n", remote, len(theirsOnly), remote)
				if early == nil || early.ours != ours || early.remoteTip != remoteTip {
					early.wait()
					early = r.startWalk(ours, remoteTip, remoteAnc)
				}
				if next, err = r.mergeCommit(ours, theirs, msg); err != nil {
					return res, fmt.Errorf("merge %s: %w", remote, err)
				}
				res.MergeCommit = next
				res.FastForward = false
			}
			if next != ours {
				err = r.WithWriteLock(opt.LockTimeout, func(cas func(old, new plumbing.Hash) error) error { return cas(ours, next) })
				if errors.Is(err, errRefMoved) {
					continue
				}
				if err != nil {
					return res, err
				}
				if opt.MainMoved != nil && !tl.swap && !res.purgeOwed {
					// (Not when forgotten content left: the purge after
					// the sync comes before any indexing, as it did.)
					opt.MainMoved(next)
				}
				moves = append(moves, [2]plumbing.Hash{ours, next})
			}
			head, lastTip = next, next
			switch next {
			case ours:
				lastAnc = oursAnc
			case theirs:
				lastAnc = theirsAnc
			default: // the merge: both sides and itself
				lastAnc = unionSets(oursAnc, theirsAnc, next)
			}
			break
		}
		// Push main (it may have moved on since: it descends from head).
		if cur, err := r.Head(); err == nil && !cur.IsZero() {
			head = cur
		}
		res.Head = head
		var updates []refUpdate
		var objs []plumbing.Hash
		var commits []plumbing.Hash
		if !head.IsZero() && head != remoteTip && !remoteAnc.has(head) {
			// A fast-forward of the remote's main, or its replacement when
			// the tombstones explain every difference (theirs is the remote's
			// main without them, and head holds theirs).
			ok := false
			if early != nil && early.remoteTip == remoteTip {
				if objs, commits, ok, err = r.missingAfterMerge(early, head); err != nil {
					return res, err
				}
			}
			if !ok {
				if objs, commits, err = r.missingObjects(head, remoteTip, remoteAnc); err != nil {
					return res, err
				}
			}
			updates = append(updates, refUpdate{Name: MainRef, Old: remoteTip, New: head})
		}
		if tl.union != tl.remoteTomb && !tl.union.IsZero() {
			tanc, err := r.ancestry(tl.remoteTomb)
			if err != nil {
				return res, err
			}
			tobjs, _, err := r.missingObjects(tl.union, tl.remoteTomb, tanc)
			if err != nil {
				return res, err
			}
			objs = append(objs, tobjs...)
			// The tombstones first: a remote whose main was replaced always
			// holds the tombstones that explain it.
			updates = append([]refUpdate{{Name: TombstoneRef, Old: tl.remoteTomb, New: tl.union}}, updates...)
		}
		var saveTip plumbing.Hash
		if !lastTip.IsZero() && lastTip != cacheTip && lastTip != savedTip {
			saveTip = lastTip
		}
		side = r.startBeside(moves, commits, saveTip, lastAnc)
		moves = nil
		if len(updates) == 0 {
			merged, _, err := side.wait()
			if err != nil {
				return res, err
			}
			res.Merged += merged
			savedTip = saveTip
			res.RemoteHead = remoteTip
			break
		}
		if testHookBeforePush != nil {
			testHookBeforePush()
		}
		sent, err := r.pushRefs(ctx, a, updates, objs)
		merged, pushed, serr := side.wait()
		if serr != nil {
			return res, serr
		}
		res.Merged += merged
		savedTip = saveTip
		res.BytesSent += sent
		if errors.Is(err, errPushRejected) && round < opt.Retries {
			// Another machine pushed in between: fetch, merge and push again.
			time.Sleep(time.Duration(10+rand.Intn(40*round)) * time.Millisecond)
			continue
		}
		if errors.Is(err, errPushRejected) {
			return res, fmt.Errorf("push to %s: the remote kept moving (%d rounds); your main holds everything, run `git mem sync` again", remote, round)
		}
		if err != nil {
			return res, classify(remote, url, fmt.Errorf("push: %w", err))
		}
		if !tl.union.IsZero() {
			_ = r.setRef(TombstoneTrackingRef(remote), tl.union)
		}
		res.Pushed += pushed
		res.RemoteHead = remoteTip
		for _, u := range updates {
			if u.Name == MainRef {
				res.RemoteHead = head
				// Record what the remote now holds, like git push does.
				_ = r.st.SetReference(plumbing.NewHashReference(track, head))
			}
		}
		break
	}
	if !lastTip.IsZero() && lastTip != cacheTip && lastTip != savedTip {
		r.saveAncestry(lastTip, lastAnc)
	}
	res.UpToDate = res.Fetched == 0 && res.Merged == 0 && res.Pushed == 0 && res.Before == res.Head
	if res.Merged > 0 || res.Fetched > 0 {
		r.maybeRepack()
	}
	return res, nil
}

// besidePush is what a sync works out for its report and its cache but
// not for its push, run on a goroutine while the push waits on the remote
// (its receive-pack took ~1.7 s of CPU at 1,000,000 exchanges): the
// records each move of main brought in (countNewPaths), the records the
// push sends (countRecords) and the ancestry cache (saveAncestry: ~20 MB
// written and hashed at 1,000,000). In series after the merge they were
// 0.3–0.9 s of the merge side's wall at 1,000,000 (docs/BENCHMARKS.md,
// session 20). They only read objects the sync holds, under its locks.
type besidePush struct {
	done           chan struct{}
	merged, pushed int
	err            error
}

// startBeside counts the new records of moves (each main's old and new
// value) and the records of pushed, and saves the ancestry cache for
// saveTip (its ancestry anc) unless saveTip is zero.
func (r *Repo) startBeside(moves [][2]plumbing.Hash, pushed []plumbing.Hash, saveTip plumbing.Hash, anc commitSet) *besidePush {
	b := &besidePush{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		if !saveTip.IsZero() {
			// The ancestry of saveTip is so whether or not the push
			// goes through: the cache only spares the next sync a walk.
			r.saveAncestry(saveTip, anc)
		}
		for _, m := range moves {
			n, err := r.countNewPaths(m[0], m[1])
			if err != nil {
				b.err = err
				return
			}
			b.merged += n
		}
		b.pushed, b.err = r.countRecords(pushed, nil)
	}()
	return b
}

// wait returns what startBeside found, once it is done (nil: nothing).
func (b *besidePush) wait() (merged, pushed int, err error) {
	if b == nil {
		return 0, 0, nil
	}
	<-b.done
	return b.merged, b.pushed, b.err
}

// testHookBeforePush lets a test push from elsewhere between our fetch
// and our push (a deterministic push race).
var testHookBeforePush func()

func short(h plumbing.Hash) string { return h.String()[:7] }

// restoreTracking puts the tracking ref back (after a refused fetch), so
// that the next sync refuses again instead of taking it as known.
func (r *Repo) restoreTracking(track plumbing.ReferenceName, old plumbing.Hash) {
	if old.IsZero() {
		_ = r.st.RemoveReference(track)
		return
	}
	_ = r.st.SetReference(plumbing.NewHashReference(track, old))
}

// countRecords counts the non-merge commits of hs, each once across calls
// when seen is given.
func (r *Repo) countRecords(hs []plumbing.Hash, seen map[plumbing.Hash]bool) (int, error) {
	n := 0
	for _, h := range hs {
		if seen != nil {
			if seen[h] {
				continue
			}
			seen[h] = true
		}
		ps, err := r.parents(h)
		if err != nil {
			return 0, err
		}
		if len(ps) < 2 {
			n++
		}
	}
	return n, nil
}

// checkMemory refuses a remote whose main is not a memory: a non-merge
// commit without the record trailer, or a tree with anything but the
// record folder at its top.
func (r *Repo) checkMemory(remote string, tip plumbing.Hash, commits []plumbing.Hash, opt SyncOptions) error {
	if tip.IsZero() {
		return nil
	}
	c, err := r.Commit(tip)
	if err != nil {
		return err
	}
	t, err := object.GetTree(r.st, c.TreeHash)
	if err != nil {
		return fmt.Errorf("read tree of %s: %w", tip, err)
	}
	for _, e := range t.Entries {
		if e.Name != opt.RecordDir || e.Mode != filemode.Dir {
			return fmt.Errorf("%w: the tree of %s's main holds %q (a memory holds only %s/); nothing was merged — check the URL with `git mem remote`",
				ErrNotMemory, remote, e.Name, opt.RecordDir)
		}
	}
	prefix := opt.RecordTrailer + ": "
	for _, h := range commits {
		c, err := r.Commit(h)
		if err != nil {
			return err
		}
		if len(c.ParentHashes) > 1 {
			continue
		}
		if !hasTrailer(c.Message, prefix) && !r.isMeta(c, opt.MetaTrailer+": ") {
			subject, _, _ := strings.Cut(c.Message, "\n")
			return fmt.Errorf("%w: commit %s (%q) of %s's main has no %s trailer; nothing was merged — check the URL with `git mem remote`",
				ErrNotMemory, short(h), subject, remote, opt.RecordTrailer)
		}
	}
	return nil
}

// isMeta reports whether c is a commit that is not a record: the meta
// trailer, and the tree of its parent (the empty tree for a root).
func (r *Repo) isMeta(c *object.Commit, prefix string) bool {
	if !hasTrailer(c.Message, prefix) {
		return false
	}
	if len(c.ParentHashes) == 0 {
		t, err := object.GetTree(r.st, c.TreeHash)
		return err == nil && len(t.Entries) == 0
	}
	p, err := r.Commit(c.ParentHashes[0])
	return err == nil && p.TreeHash == c.TreeHash
}

// hasTrailer looks for a "Key: value" line in the message's last paragraph.
func hasTrailer(msg, prefix string) bool {
	msg = strings.TrimRight(msg, "\n")
	if i := strings.LastIndex(msg, "\n\n"); i >= 0 {
		msg = msg[i+2:]
	}
	for _, line := range strings.Split(msg, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok && strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}
