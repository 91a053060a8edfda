// Package memory is the one pipeline of git mem: read → redact → id →
// distill → commit → index, and the read side (log, show, stats, rooms) over
// the memory repo. The CLI is a thin layer over it.
package memory

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/distill"
	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/memory/reader"
	"github.com/gitmem/git-mem/redact"
	"github.com/gitmem/git-mem/search"
)

// Memory is an open memory repo with its settings.
type Memory struct {
	// Reader is the read path: Repo, Config, search.
	reader.Reader
	Distiller   distill.Distiller
	LockTimeout time.Duration
	// Progress, when set, hears how far an index rebuild or catch-up is
	// (commits done of total); the CLI draws it on a terminal.
	Progress func(done, total int)
	// OneShot says the process ends after this call (the CLI): a search
	// then ranks with the garbage collector held off (see queryGC).
	OneShot bool
	// earlyContext: the one-shot search under way reads the session
	// context while the index opens (search.Options.EarlyContext).
	earlyContext bool
	// gcHeld and gcPercent: queryGC holds the collector off (and the
	// target it had), which writerGC undoes while an index writer runs.
	gcHeld    bool
	gcPercent int
	// handoff, while an add runs, holds the verbatim blobs it committed for
	// the indexer that follows (see handoff).
	handoff atomic.Pointer[handoff]
}

// Open opens the memory at dir and loads its config.
func Open(dir string) (*Memory, error) {
	r, err := gitstore.Open(dir)
	if err != nil {
		return nil, err
	}
	return fromRepo(r)
}

// Init creates (or reuses) the memory at dir.
func Init(dir string) (m *Memory, created bool, err error) {
	r, created, err := gitstore.Init(dir)
	if err != nil {
		return nil, false, err
	}
	m, err = fromRepo(r)
	return m, created, err
}

func fromRepo(r *gitstore.Repo) (*Memory, error) {
	r.MetaPaths = metaPaths // a forget drops the pins and links of what it forgets
	r.RecordKey = mergeKey  // a sync's union keeps a reply over its prompt stored alone
	rd, err := reader.FromRepo(r)
	if err != nil {
		return nil, err
	}
	d, err := newDistiller(rd.Config, r.MemDir())
	if err != nil {
		return nil, err
	}
	return &Memory{Reader: *rd, Distiller: d, LockTimeout: gitstore.DefaultLockTimeout}, nil
}

// AddOptions override fields of every added exchange.
type AddOptions struct {
	Project string
	Agent   string
	// NoIndex leaves indexing to the next search (hooks, the worker).
	NoIndex bool
	// excludable: a transcript whose project or agent the config excludes
	// is skipped (hooks' worker, import; not a file given to add).
	excludable bool
	// liveHold: a transcript written to in the last LiveSession keeps its
	// last exchange open, counted in HeldBack (add, as import).
	liveHold bool
}

// AddReport says what an add did.
type AddReport struct {
	Added    int `json:"added"`
	Present  int `json:"present"`
	Redacted int `json:"redacted"`
	// Forgotten counts exchanges not stored because `git mem forget`
	// removed them before.
	Forgotten int           `json:"forgotten"`
	Commits   []AddedCommit `json:"commits"`
	Skipped   []string      `json:"skipped"` // one line per bad record
	// HeldBack counts open last exchanges of transcripts written to in the
	// last LiveSession, not stored: their session may still be running.
	HeldBack int `json:"held_back"`
	// Reused counts the added exchanges stored under a derived id because
	// their own id held another exchange (a rewritten history): included
	// in Added.
	Reused   int    `json:"reused,omitempty"`
	Indexed  bool   `json:"indexed"`
	IndexErr string `json:"index_error,omitempty"`
	excluded bool   // AddFile skipped an excluded transcript
	// claimed are the items found present only against the claim of an
	// item before them in the input (classify): storeItems settles them
	// again once that item is appended.
	claimed []*prepared
}

// AddedCommit names one new commit.
type AddedCommit struct {
	Commit   string `json:"commit"`
	Exchange string `json:"exchange"`
}

// prepared is an exchange on its way into the repo.
type prepared struct {
	ex       *exchange.Exchange
	key      string
	path     string
	blob     []byte
	redacted int
	card     exchange.Card
	// prompt is the first user turn before redaction, for classify's
	// comparison with a stored exchange.
	prompt string
	// stage: the id it is stored under, its own or a derived one (classify);
	// ownKey and ownBlob are its own id's, once it is derived.
	stage   stage
	ownKey  string
	ownBlob []byte
	ownExID string
	// claimed: classify found it present against the claim of an item
	// before it (not against main).
	claimed bool
	// alone is, at the completed id, the blob of the prompt stored alone
	// the id names: the append stores the item only while its own id's
	// path holds that blob (gitstore.Entry.Needs).
	alone plumbing.Hash
}

// Add stores the exchanges, one commit each, skipping those already in
// the memory. Bad records must have been filtered by the caller (they go
// into the report as Skipped); Add itself fails only as a whole (lock,
// I/O), never with a partial commit.
func (m *Memory) Add(ctx context.Context, exs []*exchange.Exchange, opt AddOptions) (AddReport, error) {
	return m.addItems(ctx, prepareAdd(exs, opt), opt)
}

// prepareAdd sets the options' project and agent, redacts the exchanges
// and renders their blobs: the CPU work on every byte of an add, which
// reads nothing of the memory (addJSONL does it for the next batch while
// the last one is stored).
func prepareAdd(exs []*exchange.Exchange, opt AddOptions) []*prepared {
	defer trace.StartRegion(context.Background(), "prepareAdd").End()
	items := make([]*prepared, 0, len(exs))
	for _, ex := range exs {
		if opt.Project != "" {
			ex.Project = opt.Project
		}
		if opt.Agent != "" {
			ex.Agent = opt.Agent
		}
		p := &prepared{ex: ex}
		items = append(items, p)
	}
	// Redaction and canonical JSON are CPU work on every byte: spread it.
	parallel(len(items), func(i int) {
		p := items[i]
		p.prompt = rawFirstUser(p.ex)
		p.redacted = redact.Exchange(p.ex)
		p.blob = p.ex.Canonical()
		if p.ex.ID != "" {
			p.key = p.ex.ID
		} else {
			p.key = exchange.ContentID(p.blob)
		}
		p.path = exchange.BlobPath(p.key)
	})
	return items
}

// addItems is Add of the exchanges prepareAdd made ready.
func (m *Memory) addItems(ctx context.Context, items []*prepared, opt AddOptions) (AddReport, error) {
	todo, looked, rep, err := m.lookupItems(ctx, items, claims{})
	if err != nil {
		return rep, err
	}
	if testHookBeforeStore != nil {
		testHookBeforeStore()
	}
	return m.storeItems(ctx, todo, looked, rep, opt)
}

// lookupItems finds which items are new (not stored, not forgotten, not
// in seen, which it adds them to) and distills those: what Add does before
// it writes anything. addJSONL runs it for a batch while the batch before
// it is stored, with the claims of that batch in seen: what that batch
// stores is then compared with here, as when looked up after it; and
// storeItems classifies again an item whose id another add took meanwhile
// (the append sees it under the lock). The trees it read are returned for
// storeItems' Append (gitstore.Looked).
func (m *Memory) lookupItems(ctx context.Context, items []*prepared, seen claims) ([]*prepared, *gitstore.Looked, AddReport, error) {
	defer trace.StartRegion(ctx, "lookupItems").End()
	var rep AddReport
	// An interrupted forget is finished before anything is stored (it may
	// be about to store one of the exchanges it forgot).
	if _, err := m.Repo.FinishPending(m.LockTimeout); err != nil {
		return nil, nil, rep, err
	}
	st, looked, err := m.classify(items, seen)
	if err != nil {
		return nil, nil, rep, err
	}
	var todo []*prepared
	for i, p := range items {
		switch st[i] {
		case stForgotten:
			rep.Forgotten++
			continue
		case stPresent:
			rep.Present++
			if p.claimed {
				rep.claimed = append(rep.claimed, p)
			}
			continue
		}
		todo = append(todo, p)
	}
	errs := make([]error, len(todo))
	parallel(len(todo), func(i int) {
		p := todo[i]
		card, err := m.Distiller.Distill(ctx, p.ex)
		if err != nil {
			errs[i] = fmt.Errorf("distill exchange %s: %w", p.key, err)
			return
		}
		p.card = card
	})
	if err := errors.Join(errs...); err != nil {
		return nil, nil, rep, err
	}
	return todo, looked, rep, nil
}

// storeItems commits the items lookupItems found new, one commit each,
// and hands them to the indexer; looked and rep are lookupItems' trees and
// report.
//
// An item whose path another add took after the look-up (the append finds
// another blob there under the write lock: gitstore's Taken) goes back
// through classify and, when it is still new (under the completed or the
// derived id), is appended again. The loop ends: each time round, each
// such item is settled (present, forgotten) or moves one stage on (own id
// → completed id → derived id), and at the derived id a taken path is
// present (the id names its content); so while main only grows under the
// lock, three rounds settle every item. A path that vanished meanwhile
// without a tombstone (main rewound by hand) is retried too; past
// maxStoreRounds the add fails rather than count the item present.
func (m *Memory) storeItems(ctx context.Context, todo []*prepared, looked *gitstore.Looked, rep AddReport, opt AddOptions) (AddReport, error) {
	r := trace.StartRegion(ctx, "entries")
	entries := make([]gitstore.Entry, len(todo))
	now := time.Now()
	for i, p := range todo {
		entries[i] = commitEntry(p, now)
	}
	r.End()
	r = trace.StartRegion(ctx, "Append")
	commits, err := m.appendItems(ctx, todo, entries, looked, &rep, now)
	if err != nil {
		r.End()
		return rep, err
	}
	// Items settled present against a claim (an item before them in the
	// input) are settled again against main, which now holds what the
	// claims stored or what another writer stored instead.
	if len(rep.claimed) > 0 {
		extra, looked, err := m.recheckClaimed(ctx, &rep)
		if err != nil {
			r.End()
			return rep, err
		}
		if len(extra) > 0 {
			es := make([]gitstore.Entry, len(extra))
			for i, p := range extra {
				es[i] = commitEntry(p, now)
			}
			cs, err := m.appendItems(ctx, extra, es, looked, &rep, now)
			if err != nil {
				r.End()
				return rep, err
			}
			todo = append(todo[:len(todo):len(todo)], extra...)
			entries = append(entries, es...)
			commits = append(commits, cs...)
		}
	}
	r.End()
	for i, h := range commits {
		if !h.IsZero() {
			rep.Commits = append(rep.Commits, AddedCommit{Commit: h.String(), Exchange: todo[i].key})
			rep.Redacted += todo[i].redacted
			if todo[i].stage != ownID {
				rep.Reused++
			}
		}
	}
	if err := m.linkCompleted(todo, commits); err != nil {
		return rep, err
	}
	if !opt.NoIndex && rep.Added > 0 {
		defer m.startHandoff()()
	}
	if h := m.handoff.Load(); h != nil {
		defer trace.StartRegion(ctx, "handoff").End()
		talks := make([]*talk, len(todo))
		parallel(len(todo), func(i int) {
			if !commits[i].IsZero() {
				if t, ok := talkOf(todo[i].ex, todo[i].blob); ok {
					talks[i] = &t
				}
			}
		})
		for i, c := range commits {
			if !c.IsZero() {
				h.keep(c, todo[i].blob, talks[i])
			}
		}
		if prepareAheadOn && h.startAhead() {
			m.prepareAhead(h, todo, entries, commits, talks)
		}
	}
	if !opt.NoIndex && rep.Added > 0 {
		defer trace.StartRegion(ctx, "UpdateIndex").End()
		if _, err := m.UpdateIndex(ctx); err != nil {
			rep.IndexErr = err.Error()
		} else {
			rep.Indexed = true
		}
	}
	return rep, nil
}

// appendItems appends the entries of items (one each, in order), and
// classifies again and appends under its new id each item whose path
// another writer took meanwhile (see storeItems); entries are updated for
// those. It returns each item's commit (zero when not stored).
func (m *Memory) appendItems(ctx context.Context, todo []*prepared, entries []gitstore.Entry, looked *gitstore.Looked, rep *AddReport, now time.Time) ([]plumbing.Hash, error) {
	commits := make([]plumbing.Hash, len(todo))
	pending, batch := []int(nil), entries
	for round := 0; ; round++ {
		res, err := m.Repo.AppendLooked(batch, m.LockTimeout, looked)
		if err != nil {
			return commits, fmt.Errorf("append to memory %s: %w", m.Repo.Dir(), err)
		}
		rep.Present += res.Present
		rep.Forgotten += res.Forgotten
		rep.Added += res.Added
		for j, h := range res.Commits {
			if pending != nil {
				j = pending[j]
			}
			commits[j] = h
		}
		if len(res.Taken) == 0 {
			break
		}
		if round+1 == maxStoreRounds {
			return commits, fmt.Errorf("append to memory %s: %d exchanges' ids taken again and again by other writers", m.Repo.Dir(), len(res.Taken))
		}
		storeRetries.Add(int64(len(res.Taken)))
		retry := make([]int, len(res.Taken))
		items := make([]*prepared, len(res.Taken))
		for k, j := range res.Taken {
			if pending != nil {
				j = pending[j]
			}
			retry[k], items[k] = j, todo[j]
			// A completed id names the prompt alone its own id held at the
			// look-up (or an item before it claimed): whether its own id
			// holds that now is classify's to say again.
			if todo[j].stage == completedID {
				todo[j].restart()
			}
		}
		var again []int
		var st []state
		st, looked, err = m.classify(items, claims{})
		if err != nil {
			return commits, err
		}
		for k, i := range retry {
			switch st[k] {
			case stPresent:
				rep.Present++
			case stForgotten:
				rep.Forgotten++
			default:
				again = append(again, i)
			}
		}
		if len(again) == 0 {
			break
		}
		// Under a new id: its card and message again (the distiller sees
		// the id the exchange is stored under, as in lookupItems).
		batch = make([]gitstore.Entry, len(again))
		for k, i := range again {
			p := todo[i]
			card, err := m.Distiller.Distill(ctx, p.ex)
			if err != nil {
				return commits, fmt.Errorf("distill exchange %s: %w", p.key, err)
			}
			p.card = card
			entries[i] = commitEntry(p, now)
			batch[k] = entries[i]
		}
		pending = again
	}
	return commits, nil
}

// recheckClaimed classifies again, from their own ids, against main alone,
// the items lookupItems found present only against the claim of an item
// before them (rep.claimed, emptied): that item may have been stored under
// another id (its path taken by another writer). It counts them again and
// returns those now new, distilled, with the trees it read.
func (m *Memory) recheckClaimed(ctx context.Context, rep *AddReport) ([]*prepared, *gitstore.Looked, error) {
	items := rep.claimed
	rep.claimed = nil
	for _, p := range items {
		p.restart()
	}
	st, looked, err := m.classify(items, claims{})
	if err != nil {
		return nil, nil, err
	}
	var extra []*prepared
	for i, p := range items {
		switch st[i] {
		case stPresent:
			continue
		case stForgotten:
			rep.Forgotten++
		default:
			card, err := m.Distiller.Distill(ctx, p.ex)
			if err != nil {
				return nil, nil, fmt.Errorf("distill exchange %s: %w", p.key, err)
			}
			p.card = card
			extra = append(extra, p)
		}
		rep.Present--
	}
	return extra, looked, nil
}

// maxStoreRounds bounds storeItems' appends of one batch (see there).
const maxStoreRounds = 8

// testHookBeforeStore runs between an Add's look-up and its append (tests
// widen the window a concurrent add stores in); storeRetries counts the
// items storeItems classified again.
var (
	testHookBeforeStore func()
	storeRetries        atomic.Int64
)

// commitEntry is the commit of item p.
func commitEntry(p *prepared, now time.Time) gitstore.Entry {
	var needs string
	if p.stage == completedID {
		needs = exchange.BlobPath(p.ownKey)
	}
	return gitstore.Entry{
		Needs: needs, NeedsBlob: p.alone,
		Path: p.path,
		Blob: p.blob,
		Message: exchange.FormatMessage(p.card, exchange.Trailers{
			Exchange: p.key, Session: p.ex.Session, Project: p.ex.Project,
			Agent: p.ex.Agent, Redacted: p.redacted,
		}),
		When: p.ex.When(now),
	}
}

// handoff holds the verbatim blobs an add has just committed, by commit,
// until the add indexes them: the indexer takes a blob from here instead of
// reading back from the packs what was written a moment ago (that read was
// 9 % of adding the real coding exchanges, `go test ./memory -bench
// AddCoding`). A commit's blob is a fact, so any indexer of the Memory may
// use it. Where talkOf could take what the indexer reads of a blob from
// the exchange in memory, that is kept instead of the blob. Bounded: past
// handoffMax bytes the rest is read from git.
type handoff struct {
	mu    sync.Mutex
	blobs map[plumbing.Hash]handed
	size  int
	// ahead is the first batch's documents analysed while the add goes
	// on (prepareAhead); aheadStarted says it was started.
	ahead        *ahead
	aheadStarted bool
}

// handed is a blob, or what the indexer takes of it.
type handed struct {
	blob []byte
	talk *talk
}

const handoffMax = 128 << 20

func (h *handoff) keep(c plumbing.Hash, blob []byte, t *talk) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, n := handed{blob: blob}, len(blob)
	if t != nil {
		v, n = handed{talk: t}, len(t.verbatim)+len(t.output)+len(t.head)+len(t.tail)
	}
	if h.size+n <= handoffMax {
		h.blobs[c] = v
		h.size += n
	}
}

func (h *handoff) get(c plumbing.Hash) (handed, bool) {
	if h == nil {
		return handed{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.blobs[c]
	return v, ok
}

// startHandoff collects the blobs of the adds that follow until the
// returned func is called; when one is collecting already (AddFiles around
// its Adds), it is left to its owner.
func (m *Memory) startHandoff() (stop func()) {
	h := &handoff{blobs: map[plumbing.Hash]handed{}}
	if !m.handoff.CompareAndSwap(nil, h) {
		return func() {}
	}
	return func() { m.handoff.CompareAndSwap(h, nil) }
}

// parallel runs fn(0..n-1) on all cores.
func parallel(n int, fn func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < 2 || workers < 2 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// IndexDir is where the disposable search indexes live.
func (m *Memory) IndexDir() string { return filepath.Join(m.Repo.MemDir(), "index") }

// ahead is search.Prepare of an add's first documents, made while the add
// stores its next batches: the index update that follows the add starts
// with exactly those documents, and analysing them there left a core idle
// between the last pack and the first Bleve batch (docs/BENCHMARKS.md,
// session 21). The documents are made from what the commits will hold
// (their messages, author dates and the handed-off blobs); the indexer
// uses the result only where the documents it reads from the commits are
// the same in every field but Seq and Commit, which search.Prepare does
// not read (aheadFor).
type ahead struct {
	docs []search.Doc
	done chan struct{}
	prep *search.Prepared
}

// prepareAheadOn turns prepareAhead on (tests compare with it off);
// aheadUsed counts the index batches that took what it analysed.
var (
	prepareAheadOn = true
	aheadUsed      atomic.Int64
)

// startAhead reports whether the caller is the first batch of this
// handoff, which prepares ahead.
func (h *handoff) startAhead() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.aheadStarted {
		return false
	}
	h.aheadStarted = true
	return true
}

// prepareAhead starts search.Prepare of the documents of the first items
// added: as many as the index update's first batch takes (a catch-up's
// catchUpBatch, or a rebuild's rebuildBatch when there is no index yet).
func (m *Memory) prepareAhead(h *handoff, todo []*prepared, entries []gitstore.Entry, commits []plumbing.Hash, talks []*talk) {
	n := rebuildBatch
	if m.currentGen() != "" {
		n = catchUpBatch
	}
	var docs []search.Doc
	for i, c := range commits {
		if len(docs) == n {
			break
		}
		if c.IsZero() || talks[i] == nil || entries[i].When.IsZero() {
			continue // present already, or no talk at hand: left to the indexer
		}
		msg := exchange.ParseMessage(entries[i].Message)
		tk := talks[i]
		docs = append(docs, search.Doc{
			ID: msg.Trailers.Exchange, Time: entries[i].When,
			Core: msg.Card.Core, Context: msg.Card.Context,
			Rooms: exchange.RoomStrings(msg.Card.Rooms), Files: nonNil(msg.Card.Files),
			Project: msg.Trailers.Project, Agent: msg.Trailers.Agent, Session: msg.Trailers.Session,
			Verbatim: tk.verbatim, Output: tk.output, Head: tk.head, Tail: tk.tail,
		})
	}
	if len(docs) == 0 {
		return
	}
	a := &ahead{docs: docs, done: make(chan struct{})}
	h.mu.Lock()
	h.ahead = a
	h.mu.Unlock()
	go func() {
		defer close(a.done)
		a.prep = search.Prepare(slices.Clone(docs))
	}()
}

// aheadFor returns the documents analysed ahead with docs in their place,
// when docs, less those the add did not make, are those documents in
// order (every field but Seq and Commit equal, the author date to the
// second and its zone offset, as a commit keeps it); else nil. Either
// way what was analysed ahead is let go: it serves one index batch.
func (m *Memory) aheadFor(docs []search.Doc) *search.Prepared {
	h := m.handoff.Load()
	if h == nil {
		return nil
	}
	h.mu.Lock()
	a := h.ahead
	h.ahead = nil
	h.mu.Unlock()
	if a == nil || len(docs) > len(a.docs) {
		return nil
	}
	keep := make([]bool, len(a.docs))
	j := 0
	for i := range a.docs {
		if j < len(docs) && sameDoc(&a.docs[i], &docs[j]) {
			keep[i] = true
			j++
		}
	}
	if j < len(docs) {
		trace.Log(context.Background(), "prepareAhead", "not used: other documents")
		return nil
	}
	trace.Log(context.Background(), "prepareAhead", fmt.Sprintf("used for %d of %d documents", j, len(a.docs)))
	aheadUsed.Add(1)
	<-a.done
	p := a.prep
	p.Keep(keep)
	copy(p.Docs(), docs)
	return p
}

// sameDoc: a and b are the same document but for Seq and Commit; a's
// time is an add's, b's as the commit keeps it (whole seconds, the zone
// offset).
func sameDoc(a, b *search.Doc) bool {
	_, ao := a.Time.Zone()
	_, bo := b.Time.Zone()
	return a.ID == b.ID && a.Time.Unix() == b.Time.Unix() && ao == bo &&
		a.Core == b.Core && a.Context == b.Context &&
		slices.Equal(a.Rooms, b.Rooms) && slices.Equal(a.Files, b.Files) &&
		a.Project == b.Project && a.Agent == b.Agent && a.Session == b.Session &&
		a.Verbatim == b.Verbatim && a.Output == b.Output && a.Head == b.Head && a.Tail == b.Tail
}
