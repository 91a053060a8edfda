package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/trace"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/memory/reader"
	"github.com/gitmem/git-mem/search"
)

// The one indexer: it makes the search index equal to the set of exchanges
// in main, adding what came and rebuilding when something left (a rewind, a
// rewrite, a forget). Its locks live outside the index folder (git-bug's
// cache: lock → load → rebuild on mismatch, under the lock):
//
//   - mem/index.lock shared: a search or status reads the current
//     generation; exclusive: a catch-up changes it in place, or a rebuild
//     switches CURRENT to a new generation and deletes the old ones. Nobody
//     reads the manifest or opens Bleve before holding it.
//   - mem/index-build.lock exclusive: one rebuild at a time builds a whole
//     new generation in a folder nobody else reads, without the index
//     lock, so searches go on meanwhile; only the switch is exclusive.
//
// mem/index/CURRENT names the generation folder (mem/index/g-…) in use.
const (
	indexLockFile = reader.IndexLockFile
	indexGateFile = reader.IndexGateFile
	buildLockFile = "index-build.lock"
	currentFile   = reader.CurrentFile
)

// IndexReport says what an index update did.
type IndexReport struct {
	Indexed int    `json:"indexed"`
	Rebuilt bool   `json:"rebuilt"`
	Reason  string `json:"reason,omitempty"` // why it was rebuilt
	Docs    int    `json:"docs"`
}

// catchUpBatch is how many commits a catch-up indexes per hold of the
// exclusive lock: searches wait at most one batch. Each hold also pays a
// cost in the rows already indexed (every table loaded and written again,
// the earlier cards' link features worked out again), which at 100,000
// exchanges is most of a hold; so a hold of 1,000 is not much longer than
// one of 500, and an add of 1,000 in one hold took 2.1–2.4 s of CPU
// against 2.6–3.0 s in two (docs/BENCHMARKS.md, session 13). A var for
// tests.
var catchUpBatch = 1000

// rebuildBatch is how many commits a rebuild reads and indexes at a time
// (it holds no lock readers wait for; the batch bounds its memory). 2,000,
// not 500: a quarter of the Bleve segments to build and merge; a reindex
// of 1,000,000 took 520 s instead of 618 (699 instead of 788 s of CPU),
// peak RSS the same 3.41 GB (docs/BENCHMARKS.md, session 17).
var rebuildBatch = 2000

// smallRebuildBatches: a rebuild of at most this many rebuildBatches of
// commits indexes each with one Bleve batch (one segment) instead of one
// per search.BatchSize documents: a
// fresh memory's first add of a few thousand exchanges (the coding corpus,
// 3,099) was seven segments of 500 that scorch merged again and again
// during the add; now it is two, which its merge policy leaves as they are.
// Only that small: at 100,000, batches of 2,000 left a reindex with more
// segments than batches of 500 do (docs/BENCHMARKS.md, session 20), and
// two rebuild batches are never more segments than before.
const smallRebuildBatches = 2

// rebuildSpill is how many rows a rebuild adds between writing its tables
// and letting go of those rows' records, vectors and links
// (search.Index.Spill): a reindex of 1,000,000 held them all, 5.8 GB.
var rebuildSpill = 50_000

// rebuildAbove is how many pending commits make a catch-up a rebuild into a
// new generation instead (searches go on over the old one meanwhile).
const rebuildAbove = 10_000 // 10 catch-up batches

func (m *Memory) searchOptions() (search.Options, error) {
	emb, err := newEmbedder(m.Config)
	if err != nil {
		return search.Options{}, err
	}
	// A one-shot search reads the session context while the index opens
	// (search.Options.EarlyContext).
	return search.Options{Embedder: emb, EarlyContext: m.earlyContext}, nil
}

func (m *Memory) progress(done, total int) {
	if m.Progress != nil {
		m.Progress(done, total)
	}
}

// errRebuild asks for a rebuild, with the reason.
type errRebuild struct{ reason string }

func (e errRebuild) Error() string { return "index needs a rebuild: " + e.reason }

func rebuildReason(err error) string {
	reason := err.Error()
	for _, e := range []error{search.ErrCorrupt, search.ErrMismatch} {
		reason = strings.TrimSuffix(reason, ": "+e.Error())
	}
	return reason
}

// UpdateIndex makes the index equal to main: the commits not yet indexed
// are added (after add, sync, or a plain `git fetch origin main:main`); a
// missing, corrupt or mismatched index, or one holding exchanges that left
// main, is rebuilt from the commits.
//
// A writer (add, sync, the worker) never waits for another process's
// rebuild: that one catches up with main when it switches, so this returns
// at once, with Reason saying so.
func (m *Memory) UpdateIndex(ctx context.Context) (IndexReport, error) {
	return m.updateIndex(ctx, false)
}

func (m *Memory) updateIndex(ctx context.Context, wait bool) (IndexReport, error) {
	rep, err := m.catchUpInPlace(ctx)
	var rb errRebuild
	if !errors.As(err, &rb) {
		return rep, err
	}
	if !wait {
		bl, ok, lerr := gitstore.TryLockFile(filepath.Join(m.Repo.MemDir(), buildLockFile))
		if lerr == nil && !ok {
			return IndexReport{Reason: "being rebuilt by another git mem process, which indexes this too"}, nil
		}
		if bl != nil {
			bl.Unlock()
		}
	}
	return m.rebuild(ctx, rb.reason, "")
}

// Reindex builds a new index from the commits alone and switches to it;
// searches go on over the old one until the switch.
func (m *Memory) Reindex(ctx context.Context) (IndexReport, error) {
	rep, err := m.rebuild(ctx, "asked for", replaceAlways)
	rep.Reason = ""
	return rep, err
}

// catchUpInPlace adds main's new commits to the current generation, a batch
// per hold of the exclusive lock. It returns errRebuild when that cannot be
// done in place.
func (m *Memory) catchUpInPlace(ctx context.Context) (IndexReport, error) {
	var rep IndexReport
	opt, err := m.searchOptions()
	if err != nil {
		return rep, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		l, err := m.lockIndex(false)
		if err != nil {
			return rep, fmt.Errorf("update the search index: %w", err)
		}
		r := trace.StartRegion(ctx, "catchUpBatch")
		done, err := m.catchUpBatchLocked(ctx, opt, &rep)
		r.End()
		l.Unlock()
		if err != nil || done {
			return rep, err
		}
	}
}

// catchUpBatchLocked indexes up to catchUpBatch pending commits; the caller
// holds the exclusive index lock. done means the index has caught up.
func (m *Memory) catchUpBatchLocked(ctx context.Context, opt search.Options, rep *IndexReport) (done bool, err error) {
	gen := m.currentGen()
	if gen == "" {
		return false, errRebuild{"no index yet"}
	}
	ix, err := search.Open(gen, opt)
	if errors.Is(err, search.ErrCorrupt) || errors.Is(err, search.ErrMismatch) {
		return false, errRebuild{rebuildReason(err)}
	}
	if err != nil {
		return false, err
	}
	defer ix.Close()
	head, err := m.Repo.Head()
	if err != nil {
		return false, err
	}
	rep.Docs = ix.Count()
	if head.IsZero() {
		if ix.Count() > 0 {
			return false, errRebuild{"main is empty"}
		}
		return true, nil
	}
	if ix.LastCommit() == head.String() {
		return true, nil
	}
	r := trace.StartRegion(ctx, "pendingCommits")
	pending, reached, err := m.pendingCommits(head, ix.LastCommit())
	r.End()
	if err != nil {
		return false, err
	}
	if !reached {
		return false, errRebuild{"main no longer holds the last indexed commit (history rewound or rewritten)"}
	}
	if len(pending) > rebuildAbove {
		return false, errRebuild{fmt.Sprintf("%d new commits", len(pending))}
	}
	n := min(len(pending), catchUpBatch)
	if hasMerge(pending) {
		// A batch must end at a commit whose history holds everything
		// indexed. Inside a merged side branch none does: the next
		// catch-up would find the other side not indexed and add it again,
		// and never reach the merge (measured: a sync of 1,000 new on each
		// side never finished). So a merge is caught up in one batch.
		n = len(pending)
	}
	seq, err := m.indexCommits(ctx, ix, head, pending[:n], ix.LastSeq()+1)
	if err != nil {
		return false, err
	}
	rep.Indexed += n
	rep.Docs = ix.Count()
	m.progress(rep.Indexed, rep.Indexed+len(pending)-n)
	last := pending[n-1].Hash
	if n == len(pending) {
		last = head
	}
	if err := ix.SetLastCommit(last.String(), seq); err != nil {
		return false, err
	}
	return n == len(pending), nil
}

// forgetInPlace makes the current generation follow a forget without a
// rebuild: the forgotten exchanges' rows are emptied, the other documents
// follow their rewritten commits, and Bleve's segments are merged so that
// no file keeps a term of what was forgotten (search/forget.go). Under the
// exclusive index lock, like a catch-up batch. Any error leaves the rebuild
// to UpdateIndex (a failed batch is never saved: search.Index.broken).
func (m *Memory) forgetInPlace(ctx context.Context, ids []string, moved map[plumbing.Hash]plumbing.Hash) error {
	opt, err := m.searchOptions()
	if err != nil {
		return err
	}
	l, err := m.lockIndex(false)
	if err != nil {
		return err
	}
	defer l.Unlock()
	gen := m.currentGen()
	if gen == "" {
		return errRebuild{"no index yet"}
	}
	ix, err := search.Open(gen, opt)
	if err != nil {
		return err
	}
	last := ix.LastCommit()
	if h, ok := moved[plumbing.NewHash(last)]; ok {
		last = h.String()
	}
	if last == "" || last == plumbing.ZeroHash.String() {
		ix.Close()
		return errRebuild{"nothing left indexed"}
	}
	mv := make(map[string]string, len(moved))
	for o, n := range moved {
		mv[o.String()] = n.String()
	}
	if _, err := ix.ForgetDocs(ids, mv); err != nil {
		ix.Close()
		return err
	}
	if err := ix.SetLastCommit(last, ix.LastSeq()); err != nil {
		ix.Close()
		return err
	}
	if err := ix.Compact(ctx); err != nil {
		ix.Close()
		return err
	}
	return ix.Close()
}

// replaceAlways makes rebuild build whatever the current generation is.
const replaceAlways = "*"

// rebuild builds a new generation from main's commits in a fresh folder,
// then switches to it. replace says when: "" when the current generation
// cannot be caught up in place (checked again under the build lock: another
// process may have rebuilt while this one waited), a generation's folder
// when that one was found damaged and is still current, replaceAlways for
// `git mem reindex`.
// rebuildGCPercent is the GC target of a rebuild of rebuildLowGCFrom
// commits or more: the heap may grow to 1.5× what is live rather than 2×.
// At 100,000 exchanges: 833 → 651 MB max RSS for ~8 % more CPU
// (docs/BENCHMARKS.md, session 7). A smaller rebuild's rows hold little
// (the first add of 3,099 exchanges into a fresh memory: 364 → 404 MB
// peak with the default target, for 9.9 → 9.1 s of CPU; session 17), so it
// keeps Go's default.
const (
	rebuildGCPercent = 50
	rebuildLowGCFrom = rebuildAbove
)

// rebuildGCTarget is the GC target a rebuild of commits sets, if any:
// rebuildGCPercent from rebuildLowGCFrom commits on, unless the user set
// GOGC (userGOGC).
func rebuildGCTarget(commits int, userGOGC string) (int, bool) {
	if userGOGC != "" || commits < rebuildLowGCFrom {
		return 0, false
	}
	return rebuildGCPercent, true
}

func (m *Memory) rebuild(ctx context.Context, reason string, replace string) (IndexReport, error) {
	rep := IndexReport{Rebuilt: true, Reason: reason}
	opt, err := m.searchOptions()
	if err != nil {
		return rep, err
	}
	bl, err := gitstore.LockFile(filepath.Join(m.Repo.MemDir(), buildLockFile), 30*time.Minute)
	if err != nil {
		return rep, fmt.Errorf("rebuild the search index: %w", err)
	}
	defer bl.Unlock()
	switch {
	case replace == "":
		r, err := m.catchUpInPlace(ctx)
		if !errors.As(err, new(errRebuild)) {
			r.Rebuilt, r.Reason = false, ""
			return r, err
		}
	case replace != replaceAlways:
		if l, err := m.lockIndex(true); err == nil {
			cur := m.currentGen()
			l.Unlock()
			if cur != replace {
				return m.catchUpInPlace(ctx) // rebuilt meanwhile
			}
		}
	}
	if err := os.MkdirAll(m.IndexDir(), 0o755); err != nil {
		return rep, err
	}
	// A rebuild holds every row's tables in memory; with Go's default GC
	// target (twice the live heap) a reindex of 1,000,000 went past 4 GB.
	// indexAll lowers the target once it knows the rebuild is large; a
	// GOGC the user set wins.
	gcPercent := -2 // not changed
	defer func() {
		if gcPercent != -2 {
			debug.SetGCPercent(gcPercent)
		}
	}()
	lowGC := func(commits int) {
		if pct, ok := rebuildGCTarget(commits, os.Getenv("GOGC")); ok && gcPercent == -2 {
			gcPercent = debug.SetGCPercent(pct)
		}
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	gen := filepath.Join(m.IndexDir(), fmt.Sprintf("g-%d-%s", time.Now().UnixNano(), hex.EncodeToString(rnd[:])))
	r := trace.StartRegion(ctx, "search.Open")
	ix, err := search.Open(gen, opt)
	r.End()
	if err != nil {
		return rep, err
	}
	// Nobody reads this folder yet: build with no index lock.
	fail := func(err error) (IndexReport, error) {
		ix.Close()
		os.RemoveAll(gen)
		return rep, err
	}
	head, err := m.Repo.Head()
	if err != nil {
		return fail(err)
	}
	sized := func(commits int) {
		lowGC(commits)
		if commits <= smallRebuildBatches*rebuildBatch {
			ix.SetBleveBatch(rebuildBatch)
		}
	}
	if rep.Indexed, err = m.indexAll(ctx, ix, head, sized); err != nil {
		return fail(err)
	}
	// The switch: catch up with what came meanwhile, name the new folder in
	// CURRENT, delete the others. Readers hold the shared lock while they
	// use a generation, so none is using what is deleted.
	l, err := m.lockIndex(false)
	if err != nil {
		return fail(fmt.Errorf("switch to the rebuilt search index: %w", err))
	}
	defer l.Unlock()
	if now, err := m.Repo.Head(); err != nil {
		return fail(err)
	} else if now != head {
		pending, reached, err := m.pendingCommits(now, head.String())
		if err != nil {
			return fail(err)
		}
		if !reached {
			return fail(errors.New("main was rewritten during the rebuild: run the command again"))
		}
		seq, err := m.indexCommits(ctx, ix, now, pending, ix.LastSeq()+1)
		if err == nil {
			err = ix.SetLastCommit(now.String(), seq)
		}
		if err != nil {
			return fail(err)
		}
		rep.Indexed += len(pending)
	}
	rep.Docs = ix.Count()
	r = trace.StartRegion(ctx, "ix.Close")
	err = ix.Close()
	r.End()
	if err != nil {
		os.RemoveAll(gen)
		return rep, err
	}
	if err := WriteFileAtomic(filepath.Join(m.IndexDir(), currentFile), func(f *os.File) error {
		_, err := f.WriteString(filepath.Base(gen) + "\n")
		return err
	}); err != nil {
		os.RemoveAll(gen)
		return rep, fmt.Errorf("switch to the rebuilt search index: %w", err)
	}
	m.removeOtherGenerations(gen)
	return rep, nil
}

// removeOtherGenerations deletes every index folder and file but the
// generation in use (older generations, a rebuild killed half-way, the
// single-folder layout of schema 4). The caller holds the exclusive index
// lock and the build lock.
func (m *Memory) removeOtherGenerations(keep string) {
	ents, err := os.ReadDir(m.IndexDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Name() == currentFile || e.Name() == filepath.Base(keep) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(m.IndexDir(), e.Name()))
	}
}

// indexAll indexes every commit of main up to head into a new index, with
// progress for the person waiting. It tells sized how many commits that is
// before it reads them.
func (m *Memory) indexAll(ctx context.Context, ix *search.Index, head plumbing.Hash, sized func(commits int)) (int, error) {
	if head.IsZero() {
		return 0, ix.SetLastCommit("", -1)
	}
	// The commits are read a batch at a time: a million of them decoded up
	// front held 3.8 GB before the first was indexed. Without git, the
	// go-git walk reads them all first, as before.
	r := trace.StartRegion(ctx, "CommitHashesSince")
	hashes, _, err := m.Repo.CommitHashesSince(head, plumbing.ZeroHash)
	r.End()
	var pending []*object.Commit
	switch {
	case err == nil:
		slices.Reverse(hashes)
	case errors.Is(err, gitstore.ErrNoGit):
		if pending, _, err = m.pendingCommits(head, ""); err != nil {
			return 0, err
		}
	default:
		return 0, err
	}
	total := max(len(hashes), len(pending))
	sized(total)
	n, seq, spilled := 0, 0, 0
	// The batches are read (git cat-file, the blobs rendered) and analysed
	// (search.Prepare) on a goroutine of their own, one batch ahead of the
	// one going into Bleve: when the read came between two batches' Bleve
	// work, one core was idle while git resolved the next batch's paths
	// (docs/BENCHMARKS.md, session 23). Batches still go in one after the
	// other, in order, each kept or not by indexCommits' rule as it goes in;
	// at most two are held, as before (the one going in, the one read).
	stop := make(chan struct{})
	batches := readAhead(ctx, stop, func(each func([]*object.Commit) error) error {
		if hashes != nil {
			return m.Repo.EachCommitBatch(hashes, rebuildBatch, each)
		}
		for start := 0; start < len(pending); start += rebuildBatch {
			if err := each(pending[start:min(start+rebuildBatch, len(pending))]); err != nil {
				return err
			}
		}
		return nil
	}, func(ctx context.Context, batch []*object.Commit, seq int) batchRead {
		return m.readBatch(ctx, ix, batch, seq)
	})
	defer func() {
		close(stop)
		for range batches { // the reader has ended when this returns
		}
	}()
	for a := range batches {
		if a.err != nil {
			return n, a.err
		}
		r := trace.StartRegion(ctx, "indexPrepared")
		last, err := m.indexPrepared(ix, head, a.prep, a.events, a.seq, len(a.commits))
		r.End()
		if err != nil {
			return n, err
		}
		// Indexed: let the commits go (each keeps its raw object; at
		// 100,000 they held 150 MB of a reindex's heap to its end).
		clear(a.commits)
		seq = last + 1
		n += len(a.commits)
		m.progress(n, total)
		if rows := ix.Count(); rows-spilled >= rebuildSpill {
			if err := ix.Spill(); err != nil {
				return n, err
			}
			spilled = rows
		}
	}
	return n, ix.SetLastCommit(head.String(), seq-1)
}

// batchRead is one rebuild batch read and analysed (readAhead), or the
// error that ended the reading.
type batchRead struct {
	commits []*object.Commit
	seq     int // the Seq of its first commit
	events  []search.Event
	prep    *search.Prepared
	err     error
}

// readAhead runs each (a walk over the batches of commits, oldest first)
// on a goroutine that reads every batch with read and hands it on in order,
// a batch at a time: the next is read while the caller indexes the last.
// The channel ends after the last batch or after one carrying an error;
// closing stop ends the reading early (the caller then drains the channel
// to know the goroutine is done).
func readAhead(ctx context.Context, stop <-chan struct{}, each func(func([]*object.Commit) error) error,
	read func(ctx context.Context, batch []*object.Commit, seq int) batchRead) <-chan batchRead {
	out := make(chan batchRead) // unbuffered: one batch read ahead, no more
	errStopped := errors.New("stopped")
	go func() {
		defer close(out)
		next := 0 // the Seq of the next batch's first commit
		err := each(func(batch []*object.Commit) error {
			select {
			case <-stop: // the caller stopped (and may be draining out)
				return errStopped
			default:
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			b := read(ctx, batch, next)
			if b.err != nil {
				return b.err
			}
			next += len(batch)
			select {
			case out <- b:
				return nil
			case <-stop:
				return errStopped
			}
		})
		if err != nil && !errors.Is(err, errStopped) {
			select {
			case out <- batchRead{err: err}:
			case <-stop:
			}
		}
	}()
	return out
}

// readBatch reads the documents and events of a rebuild batch (docsOf) and
// analyses the documents (ix.Prepare, or what the add analysed ahead). It
// reads only ix's embedder: it runs beside ix's writer.
func (m *Memory) readBatch(ctx context.Context, ix *search.Index, batch []*object.Commit, seq int) batchRead {
	r := trace.StartRegion(ctx, "docsOf")
	docs, events, err := m.docsOf(batch, seq)
	r.End()
	if err != nil {
		return batchRead{err: err}
	}
	b := batchRead{commits: batch, seq: seq, events: events}
	if b.prep = m.aheadFor(docs); b.prep == nil {
		r := trace.StartRegion(ctx, "Prepare")
		b.prep = ix.Prepare(docs)
		r.End()
	}
	return b
}

// pendingCommits lists the commits from head back to (not including) last,
// oldest first. reached reports whether last is in head's history; when it
// is not, the index holds commits that left main.
func (m *Memory) pendingCommits(head plumbing.Hash, last string) (walked []*object.Commit, reached bool, err error) {
	lastHash := plumbing.ZeroHash
	if last != "" {
		lastHash = plumbing.NewHash(last)
	}
	if walked, reached, err = m.Repo.CommitsSince(head, lastHash); err == nil {
		slices.Reverse(walked)
		return walked, reached, nil
	} else if !errors.Is(err, gitstore.ErrNoGit) {
		return nil, false, err
	}
	// Without git: a go-git walk, a read per commit.
	walked = nil
	reached = lastHash.IsZero()
	merges := false
	err = m.Repo.Walk(head, func(h plumbing.Hash) bool {
		if h == lastHash {
			reached = true
			return true
		}
		return false
	}, func(c *object.Commit) error {
		if len(c.ParentHashes) > 1 {
			merges = true
		}
		walked = append(walked, c)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if merges && !lastHash.IsZero() && reached {
		// A merge brought in a side branch: drop what was already indexed
		// through the last indexed commit's ancestry.
		old := map[plumbing.Hash]bool{}
		err := m.Repo.Walk(lastHash, nil, func(c *object.Commit) error {
			old[c.Hash] = true
			return nil
		})
		if err != nil {
			return nil, false, err
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
	return walked, reached, nil
}

// cloneAll copies each string of ss out of the text it was cut from.
func cloneAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, x := range ss {
		out[i] = strings.Clone(x)
	}
	return out
}

func hasMerge(commits []*object.Commit) bool {
	for _, c := range commits {
		if len(c.ParentHashes) > 1 {
			return true
		}
	}
	return false
}

// indexCommits adds the exchanges of commits (oldest first) to ix. An
// exchange id stored on two machines with different blobs keeps the one in
// main's tree (sync's rule): a commit whose blob is not the one at head is
// not the living version and is skipped.
//
// It returns the Seq of the last commit, for SetLastCommit: Seq counts
// commits, so that a rebuild gives every exchange the same Seq.
func (m *Memory) indexCommits(ctx context.Context, ix *search.Index, head plumbing.Hash, commits []*object.Commit, seq int) (int, error) {
	if err := ctx.Err(); err != nil {
		return seq - 1, err
	}
	r := trace.StartRegion(ctx, "docsOf")
	docs, events, err := m.docsOf(commits, seq)
	r.End()
	if err != nil {
		return seq - 1, err
	}
	if p := m.aheadFor(docs); p != nil {
		return m.indexPrepared(ix, head, p, events, seq, len(commits))
	}
	keep, err := m.keepDocs(ix, head, docs)
	if err != nil {
		return seq - 1, err
	}
	kept := docs[:0]
	for i, d := range docs {
		if keep[i] {
			kept = append(kept, d)
		}
	}
	r = trace.StartRegion(ctx, "ix.Add")
	err = ix.Add(kept)
	r.End()
	if err != nil {
		return seq - 1, fmt.Errorf("index: %w", err)
	}
	if err := ix.AddEvents(events); err != nil { // pins and stated links (links.go)
		return seq - 1, fmt.Errorf("index: %w", err)
	}
	return seq + len(commits) - 1, nil
}

// indexPrepared is indexCommits for n commits whose documents were analysed
// ahead (indexAll).
func (m *Memory) indexPrepared(ix *search.Index, head plumbing.Hash, p *search.Prepared, events []search.Event, seq, n int) (int, error) {
	keep, err := m.keepDocs(ix, head, p.Docs())
	if err != nil {
		return seq - 1, err
	}
	p.Keep(keep)
	if err := ix.AddPrepared(p); err != nil {
		return seq - 1, fmt.Errorf("index: %w", err)
	}
	if err := ix.AddEvents(events); err != nil { // pins and stated links (links.go)
		return seq - 1, fmt.Errorf("index: %w", err)
	}
	return seq + n - 1, nil
}

// keepDocs tells which of docs go into ix: an id twice in docs, or known
// to ix already, only where its commit holds the living blob.
func (m *Memory) keepDocs(ix *search.Index, head plumbing.Hash, docs []search.Doc) ([]bool, error) {
	count := map[string]int{}
	for _, d := range docs {
		count[d.ID]++
	}
	keep := make([]bool, len(docs))
	for i, d := range docs {
		if count[d.ID] > 1 || ix.Known(d.ID) {
			living, err := m.isLiving(head, plumbing.NewHash(d.Commit), d.ID)
			if err != nil {
				return nil, err
			}
			if !living {
				continue
			}
		}
		keep[i] = true
	}
	return keep, nil
}

// isLiving reports whether commit's blob of exchange id is the one main's
// tree at head holds.
func (m *Memory) isLiving(head, commit plumbing.Hash, id string) (bool, error) {
	path := exchange.BlobPath(id)
	a, okA, err := m.Repo.BlobHashAt(head, path)
	if err != nil {
		return false, err
	}
	b, okB, err := m.Repo.BlobHashAt(commit, path)
	if err != nil {
		return false, err
	}
	return okA && okB && a == b, nil
}

// docsOf turns commits into index documents, and commits that are not
// exchanges into events (links.go); reading and rendering the verbatim
// blobs runs on all cores. The blobs Add has just written come from
// Memory.handoff, the others from git.
func (m *Memory) docsOf(commits []*object.Commit, seq int) ([]search.Doc, []search.Event, error) {
	docs := make([]search.Doc, len(commits))
	evs := make([]search.Event, len(commits))
	fresh := m.handoff.Load()
	// The blobs not handed off are read from git in one batch
	// (gitstore.ReadPaths), before the parallel rendering.
	entries := make([]*Entry, len(commits))
	blobs := make([][]byte, len(commits))
	talks := make([]*talk, len(commits))
	have := make([]bool, len(commits))
	var reqs []gitstore.PathAt
	var at []int
	for i, c := range commits {
		if len(c.ParentHashes) > 1 {
			continue
		}
		entries[i] = entryOf(c)
		if entries[i].Exchange == "" {
			continue
		}
		var v handed
		if v, have[i] = fresh.get(c.Hash); have[i] {
			blobs[i], talks[i] = v.blob, v.talk
		} else {
			reqs = append(reqs, gitstore.PathAt{Commit: c.Hash, Path: exchange.BlobPath(entries[i].Exchange)})
			at = append(at, i)
		}
	}
	if len(reqs) > 0 {
		data, ok, err := m.Repo.ReadPaths(reqs)
		if err != nil {
			return nil, nil, err
		}
		for j, i := range at {
			blobs[i], have[i] = data[j], ok[j]
		}
	}
	parallel(len(commits), func(i int) {
		c := commits[i]
		if len(c.ParentHashes) > 1 {
			return
		}
		e := entries[i]
		if e.Exchange == "" {
			evs[i], _ = metaEvent(c)
			return
		}
		var tk talk
		switch {
		case talks[i] != nil:
			tk = *talks[i]
		case have[i]:
			tk = talkOfBlob(blobs[i])
		}
		blobs[i], talks[i] = nil, nil
		verbatim, output, head, tail := tk.verbatim, tk.output, tk.head, tk.tail
		// The card's fields are cut from the commit message; the index
		// keeps them for its life, so they are copied out of it (else every
		// message stays in memory: 38 MB of a reindex at 100,000).
		docs[i] = search.Doc{
			Seq: seq + i, Commit: e.Commit, ID: strings.Clone(e.Exchange), Time: e.Time,
			Core: strings.Clone(e.Core), Context: strings.Clone(e.Context), Rooms: cloneAll(e.Rooms), Files: cloneAll(e.Files),
			Project: strings.Clone(e.Project), Agent: strings.Clone(e.Agent), Session: strings.Clone(e.Session),
			Verbatim: verbatim, Output: output, Head: head, Tail: tail,
		}
	})
	out := docs[:0]
	for _, d := range docs {
		if d.ID != "" {
			out = append(out, d)
		}
	}
	var events []search.Event
	for _, e := range evs {
		if e.Kind != "" {
			events = append(events, e)
		}
	}
	return out, events, nil
}

// readIndex opens the current generation for reading, caught up with main
// (catching it up, or rebuilding it, first when it is not), and holds the
// shared lock until release is called. note says what was done on the way.
func (m *Memory) readIndex(ctx context.Context) (ix *search.Index, release func(), note string, err error) {
	opt, err := m.searchOptions()
	if err != nil {
		return nil, nil, "", err
	}
	for attempt := 0; ; attempt++ {
		l, err := m.lockIndex(true)
		if err != nil {
			return nil, nil, note, fmt.Errorf("open the search index: %w", err)
		}
		head, err := m.Repo.Head()
		if err != nil {
			l.Unlock()
			return nil, nil, note, err
		}
		gen := m.currentGen()
		var openErr error
		if m.isStale(gen) {
			openErr = fmt.Errorf("status found it out of step with main: %w", search.ErrCorrupt)
		} else if gen != "" {
			ix, openErr = search.OpenReadOnly(gen, opt)
			if openErr == nil && (ix.LastCommit() == head.String() || head.IsZero() && ix.Count() == 0) {
				return ix, func() { ix.Close(); l.Unlock() }, note, nil
			}
			if openErr == nil && attempt > 0 && ix.LastCommit() != "" {
				// Caught up once, and writers moved main again since: an
				// index of an ancestor of main holds nothing that left it.
				if _, reached, err := m.pendingCommits(head, ix.LastCommit()); err == nil && reached {
					return ix, func() { ix.Close(); l.Unlock() }, note, nil
				}
			}
			if openErr == nil {
				ix.Close()
			}
		}
		l.Unlock()
		if attempt >= 3 {
			if openErr != nil {
				return nil, nil, note, openErr
			}
			return nil, nil, note, errors.New("the search index keeps falling behind main: try again in a moment")
		}
		var rep IndexReport
		gcOff := m.writerGC()
		if openErr != nil && !errors.Is(openErr, search.ErrMissing) && !errors.Is(openErr, os.ErrNotExist) {
			replace := ""
			if errors.Is(openErr, search.ErrCorrupt) {
				replace = gen
			}
			rep, err = m.rebuild(ctx, rebuildReason(openErr), replace)
		} else {
			rep, err = m.updateIndex(ctx, true)
		}
		gcOff()
		if err != nil {
			return nil, nil, note, fmt.Errorf("update the search index: %w", err)
		}
		if rep.Rebuilt && rep.Reason != "" && gen != "" {
			note = "the search index was rebuilt: " + rep.Reason
		}
	}
}

// withIndex runs fn over the caught-up index; an index found corrupt while
// fn reads it (a file damaged after it was opened) is rebuilt and fn run
// once more.
func (m *Memory) withIndex(ctx context.Context, fn func(ix *search.Index) error) (note string, err error) {
	for attempt := 0; ; attempt++ {
		ix, release, n, err := m.readIndex(ctx)
		if n != "" {
			note = n
		}
		if err != nil {
			return note, err
		}
		gen := ix.Dir()
		err = fn(ix)
		release()
		if err == nil || !errors.Is(err, search.ErrCorrupt) || attempt > 0 {
			return note, err
		}
		gcOff := m.writerGC()
		rep, rerr := m.rebuild(ctx, rebuildReason(err), gen)
		gcOff()
		if rerr != nil {
			return note, rerr
		}
		note = "the search index was rebuilt: " + rep.Reason
	}
}

// OpenIndex opens the index caught up with main for a reader that runs many
// queries (eval); it holds the shared lock until release.
func (m *Memory) OpenIndex(ctx context.Context) (*search.Index, func(), error) {
	ix, release, _, err := m.readIndex(ctx)
	return ix, release, err
}
