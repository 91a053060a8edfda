package memory

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/internal/mapfile"
	"github.com/gitmem/git-mem/search"
)

// View is the memory as a long-lived reader (`git mem ui`) sees it. The
// cards and a read-only search index stay open between calls, so a request
// does not decode 100k cards or open Bleve again; every call checks main's
// head (one ref read) and reads again when it moved (a hook, add or sync in
// another process). It never keeps a writer lock: when the index is behind,
// the call goes through Memory.Search, which catches it up and lets go. The
// read-only index it keeps holds a shared lock that a writer (a hook's
// worker catching up) waits for, so it is released after Idle without use.
type View struct {
	m *Memory
	// Idle is how long the search index stays open without a search.
	Idle time.Duration
	// Loc is the time zone of the timeline's days and weeks.
	Loc *time.Location
	// PostingCache is the bytes of decoded postings the kept index holds
	// for later searches (search.Index.KeepPostings; 0: none).
	PostingCache int64

	mu sync.Mutex
	// tombs is the tombstone ref's commit when the caches were filled
	// (followForget).
	tombs     plumbing.Hash
	head      string
	entries   []*Entry
	bySession map[string][]*Entry // oldest first, built on first use
	memo      map[string]any      // answers of the aggregates below at head

	ixMu   sync.Mutex
	ix     *search.Index
	ixHead string
	ixSeal string // SearchKept: the seal's stamp when ix was opened
	opened atomic.Int64
	timer  *time.Timer
}

// WarmPostingCache is the decoded postings a long-lived searcher (the warm
// search process) keeps: View.PostingCache for it.
const WarmPostingCache = search.DefaultPostingCacheBytes

// DefaultViewIdle keeps the index open through a session of typing and
// clicking, and gives it back within seconds of the person looking away.
const DefaultViewIdle = 5 * time.Second

// NewView starts a view; Close releases what it holds.
func NewView(m *Memory) *View {
	v := &View{m: m, Idle: DefaultViewIdle, Loc: time.Local}
	v.tombs, _ = m.Repo.TombstoneTip()
	return v
}

// followForget drops everything the view holds when the tombstone ref
// moved since it was filled (a forget, from the page or elsewhere, or a
// sync that learned tombstones), and hands the freed heap back (FreeHeap):
// the page lives as long as the person keeps it open, and its cards,
// verbatim blobs and search scratch held the forgotten text.
func (v *View) followForget() {
	tip, err := v.m.Repo.TombstoneTip()
	if err != nil {
		return
	}
	v.mu.Lock()
	moved := tip != v.tombs
	v.mu.Unlock()
	if !moved {
		return
	}
	v.ixMu.Lock()
	_ = v.closeIndex()
	v.ixMu.Unlock()
	v.mu.Lock()
	v.tombs = tip
	v.head, v.entries, v.bySession, v.memo = "", nil, nil, nil
	v.mu.Unlock()
	FreeHeap(v.m)
}

// FreeHeap empties m's object cache and the kept search scratch, then
// collects and returns the freed heap to the system. A long-lived process
// (the page, the MCP server) calls it after a forget: with the
// GODEBUG=clobberfree=1 the front sets for them, every object the
// collection frees is overwritten, so what it held of a forgotten exchange
// is gone from the process, not only unreachable (docs/CONTRACT.md, Forget).
func FreeHeap(m *Memory) {
	m.Repo.DropCaches()
	search.DropScratch()
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
}

// Memory is the memory the view reads.
func (v *View) Memory() *Memory { return v.m }

// DropSearchScratch unmaps the scratch a long-lived process keeps for its
// next search (the warm search process, when it lets go of an index).
func DropSearchScratch() { search.DropScratch() }

// WarmFileBudget is the file-backed resident memory (mapped index files,
// packs, the binary) a long-lived searcher (the warm search process)
// lets itself keep after a search: View.TrimResident's budget for it.
const WarmFileBudget = 160 << 20

// TrimResident gives back this process's pages of the files the kept
// index and the repo map (search.Index.DropResident; the session cache's
// stay) when the file-backed part of its resident memory is over budget
// bytes, and reports whether it did. The mappings stay and the page cache
// keeps the pages: the next search faults in, from memory, the few it
// reads. Call it between searches: a search running beside it pays
// faults, never wrong bytes. Where the process's memory cannot be read
// (no /proc), it gives back nothing.
func (v *View) TrimResident(budget int64) bool {
	if r := mapfile.FileResident(); r < 0 || r <= budget {
		return false
	}
	v.ixMu.Lock()
	defer v.ixMu.Unlock()
	v.ix.DropResident()
	return true
}

// Close releases the search index.
func (v *View) Close() error {
	v.ixMu.Lock()
	defer v.ixMu.Unlock()
	return v.closeIndex()
}

func (v *View) closeIndex() error {
	if v.timer != nil {
		v.timer.Stop()
		v.timer = nil
	}
	if v.ix == nil {
		return nil
	}
	err := v.ix.Close()
	v.ix, v.ixHead, v.ixSeal = nil, "", ""
	return err
}

// Snapshot returns main's head and every card (newest first, as Entries),
// read again only when the head moved.
func (v *View) Snapshot() (string, []*Entry, error) {
	v.followForget()
	h, err := v.m.Repo.Head()
	if err != nil {
		return "", nil, fmt.Errorf("read main: %w", err)
	}
	head := ""
	if !h.IsZero() {
		head = h.String()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.entries != nil && v.head == head {
		return head, v.entries, nil
	}
	all, err := v.m.Entries()
	if err != nil {
		return "", nil, err
	}
	v.head, v.entries, v.bySession, v.memo = head, all, nil, nil
	return head, all, nil
}

// maxMemo bounds the kept aggregates (relative times such as 2.weeks.ago
// make a new key on every call).
const maxMemo = 256

// cached returns the answer of compute over the cards for this kind, filter
// and n, computed once per head: the timeline and the palace walk every
// card (tens of ms at 100k), and the page asks for them again on each
// visit. Answers are shared: callers must not change them.
func cached[T any](v *View, kind string, f Filter, n int, compute func(head string, all []*Entry) T) (T, error) {
	head, all, err := v.Snapshot()
	if err != nil {
		var zero T
		return zero, err
	}
	key := fmt.Sprintf("%s|%d|%q|%q|%q|%q|%q|%d|%d", kind, n, f.Rooms, f.Files, f.Project, f.Agent, f.Session,
		f.Since.UnixNano(), f.Until.UnixNano())
	return remember(v, head, key, func() (T, error) { return compute(head, all), nil })
}

// remember returns the kept answer for key at head, or computes and keeps
// it (errors are not kept).
func remember[T any](v *View, head, key string, compute func() (T, error)) (T, error) {
	v.mu.Lock()
	if x, ok := v.memo[key]; ok && v.head == head {
		v.mu.Unlock()
		return x.(T), nil
	}
	v.mu.Unlock()
	x, err := compute()
	if err != nil {
		return x, err
	}
	v.mu.Lock()
	if v.head == head {
		if v.memo == nil || len(v.memo) >= maxMemo {
			v.memo = map[string]any{}
		}
		v.memo[key] = x
	}
	v.mu.Unlock()
	return x, nil
}

// Search is Memory.Search on the index the view keeps open.
func (v *View) Search(ctx context.Context, q SearchQuery) ([]Result, string, error) {
	if err := CheckQuery(q); err != nil {
		return nil, "", err
	}
	v.followForget()
	if q.Mode == "" {
		q.Mode = v.m.Config.Search.Mode
	}
	if q.K == 0 {
		q.K = v.m.Config.Search.K
	}
	h, err := v.m.Repo.Head()
	if err != nil {
		return nil, "", fmt.Errorf("read main: %w", err)
	}
	if h.IsZero() {
		return []Result{}, "", nil
	}
	head := h.String()
	v.ixMu.Lock()
	defer v.ixMu.Unlock()
	// Per request, the shared index lock (the one every reader takes):
	// the kept index is used only while it is the current generation and
	// at main's head, so maintenance is never starved and nothing that left
	// main is served.
	l, err := v.m.lockIndex(true)
	if err != nil {
		return nil, "", err
	}
	gen := v.m.currentGen()
	if v.ix != nil && (v.ixHead != head || v.ix.Dir() != gen || v.m.isStale(gen)) {
		_ = v.closeIndex()
	}
	if v.ix == nil && gen != "" && !v.m.isStale(gen) {
		v.openIndex(gen, head)
	}
	if v.ix == nil {
		l.Unlock()
		// Behind main, missing or damaged: the one-shot path catches up or
		// rebuilds, then the view keeps a reader of the result.
		res, note, err := v.m.Search(ctx, q)
		if err == nil {
			if l, lerr := v.m.lockIndex(true); lerr == nil {
				if gen := v.m.currentGen(); gen != "" {
					v.openIndex(gen, head)
				}
				l.Unlock()
			}
		}
		return res, note, err
	}
	defer l.Unlock()
	v.touch()
	res, err := v.m.searchIn(v.ix, q)
	return res, "", err
}

// ErrNotKept says that the index a long-lived reader keeps cannot answer
// as a one-shot search would without catching up or rebuilding first (the
// index is behind main, missing, damaged or marked stale): the caller runs
// the one-shot search instead (Memory.Search), which does that.
var ErrNotKept = errors.New("the kept search index is not current")

// SearchKept is Memory.Search on the index the view keeps open, for a
// reader that must give the one-shot search's answer or none (the warm
// search process of `git mem search`): it never catches up or rebuilds,
// and returns ErrNotKept, having searched nothing, when that would be
// needed. The kept index is used only while it is the current generation,
// at main's head and unchanged since it was opened (its seal file: every
// writer that changes a generation in place rewrites it); otherwise the
// current generation is opened again. Between searches it holds no lock
// (search.Index.ReleaseStoreLock): writers go on as with no reader. Any error from the search itself is
// returned as it is; the caller may run the one-shot search on it.
func (v *View) SearchKept(ctx context.Context, q SearchQuery) ([]Result, error) {
	if err := CheckQuery(q); err != nil {
		return nil, err
	}
	if q.Mode == "" {
		q.Mode = v.m.Config.Search.Mode
	}
	if q.K == 0 {
		q.K = v.m.Config.Search.K
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.ixMu.Lock()
	defer v.ixMu.Unlock()
	l, err := v.m.lockIndex(true)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	h, err := v.m.Repo.Head()
	if err != nil {
		return nil, fmt.Errorf("read main: %w", err)
	}
	if h.IsZero() {
		return nil, ErrNotKept
	}
	head := h.String()
	gen := v.m.currentGen()
	seal := search.SealStamp(gen)
	if v.ix != nil && (v.ixHead != head || v.ix.Dir() != gen || v.ixSeal != seal || seal == "" || v.m.isStale(gen) ||
		v.ix.TakeStoreLock() != nil) {
		_ = v.closeIndex()
	}
	if v.ix == nil && gen != "" && seal != "" && !v.m.isStale(gen) {
		v.openIndex(gen, head)
		if v.ix != nil {
			v.ixSeal = seal
			if search.SealStamp(gen) != seal {
				_ = v.closeIndex() // a writer came between the stamp and the open
			}
		}
	}
	if v.ix == nil {
		return nil, ErrNotKept
	}
	v.touch()
	res, err := v.m.searchIn(v.ix, q)
	// Between searches, writers must not find Bleve's store locked.
	if v.ix.ReleaseStoreLock() != nil {
		_ = v.closeIndex()
	}
	return res, err
}

// Kept reports whether the view holds a search index and which generation
// folder it is ("" for none).
func (v *View) Kept() string {
	v.ixMu.Lock()
	defer v.ixMu.Unlock()
	if v.ix == nil {
		return ""
	}
	return v.ix.Dir()
}

// ReleaseIfChanged closes the kept index when it is no longer the current
// generation or its files changed since it was opened (a reindex switched
// to another and removes this one; a catch-up or a forget rewrote it), and
// reports whether it did: files a forget removed are not held open until
// the next search.
func (v *View) ReleaseIfChanged() bool {
	v.ixMu.Lock()
	defer v.ixMu.Unlock()
	if v.ix == nil {
		return false
	}
	gen := v.m.currentGen()
	if v.ix.Dir() == gen && (v.ixSeal == "" || search.SealStamp(gen) == v.ixSeal) && !v.m.isStale(gen) {
		return false
	}
	_ = v.closeIndex()
	return true
}

// Opened counts the times the view opened a search index.
func (v *View) Opened() int64 { return v.opened.Load() }

// openIndex opens gen when it is at head; ixMu and the shared lock are held.
func (v *View) openIndex(gen, head string) {
	opt, err := v.m.searchOptions()
	if err != nil {
		return
	}
	ix, err := search.OpenReadOnly(gen, opt)
	if err != nil {
		return // the next call takes the one-shot path and says why
	}
	if ix.LastCommit() != head {
		ix.Close()
		return
	}
	ix.KeepPostings(v.PostingCache)
	v.ix, v.ixHead = ix, head
	v.opened.Add(1)
	v.touch()
}

// touch (re)arms the idle release; ixMu is held.
func (v *View) touch() {
	if v.Idle <= 0 {
		return
	}
	if v.timer != nil {
		v.timer.Reset(v.Idle)
		return
	}
	v.timer = time.AfterFunc(v.Idle, func() {
		v.ixMu.Lock()
		defer v.ixMu.Unlock()
		_ = v.closeIndex()
	})
}

// IndexOpen reports whether the view holds the search index now.
func (v *View) IndexOpen() bool {
	v.ixMu.Lock()
	defer v.ixMu.Unlock()
	return v.ix != nil
}

// Log is Memory.Log over the kept cards, with the number that matched.
func (v *View) Log(f Filter, n int) (list []*Entry, total int, err error) {
	_, all, err := v.Snapshot()
	if err != nil {
		return nil, 0, err
	}
	list = []*Entry{}
	for _, e := range all {
		if f.Match(e) {
			total++
			if n <= 0 || len(list) < n {
				list = append(list, e)
			}
		}
	}
	return list, total, nil
}

// Show is Memory.Show over the kept cards.
func (v *View) Show(ref string) (*Entry, []byte, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, nil, fmt.Errorf("%w: give a commit or an exchange id", ErrNoSuchExchange)
	}
	_, all, err := v.Snapshot()
	if err != nil {
		return nil, nil, err
	}
	return v.m.showIn(all, ref)
}

// Session lists the exchanges of a session, oldest first.
func (v *View) Session(session string) ([]*Entry, error) {
	if session == "" {
		return []*Entry{}, nil
	}
	head, all, err := v.Snapshot()
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	by := v.bySession
	if by == nil || v.head != head {
		by = map[string][]*Entry{}
		for i := len(all) - 1; i >= 0; i-- { // all is newest first
			if s := all[i].Session; s != "" {
				by[s] = append(by[s], all[i])
			}
		}
		if v.head == head {
			v.bySession = by
		}
	}
	if s := by[session]; s != nil {
		return s, nil
	}
	return []*Entry{}, nil
}

// Bucket is one bar of the timeline: the exchanges of a day or a week.
type Bucket struct {
	Start    time.Time      `json:"start"`
	End      time.Time      `json:"end"` // the bucket's last instant (an --until)
	Count    int            `json:"count"`
	Projects map[string]int `json:"projects"`
	Agents   map[string]int `json:"agents"`
}

// Timeline counts the matching exchanges per day (or per week, from
// Monday), oldest first; days without any are left out.
func (v *View) Timeline(f Filter, week bool) ([]Bucket, error) {
	kind := "day"
	if week {
		kind = "week"
	}
	return cached(v, kind, f, 0, func(_ string, all []*Entry) []Bucket { return v.timeline(all, f, week) })
}

func (v *View) timeline(all []*Entry, f Filter, week bool) []Bucket {
	loc := v.Loc
	if loc == nil {
		loc = time.Local
	}
	idx := map[time.Time]*Bucket{}
	for _, e := range all {
		if !f.Match(e) {
			continue
		}
		t := e.Time.In(loc)
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		if week {
			day = day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		}
		b := idx[day]
		if b == nil {
			end := day.AddDate(0, 0, 1)
			if week {
				end = day.AddDate(0, 0, 7)
			}
			b = &Bucket{Start: day, End: end.Add(-time.Nanosecond), Projects: map[string]int{}, Agents: map[string]int{}}
			idx[day] = b
		}
		b.Count++
		b.Projects[e.Project]++
		b.Agents[e.Agent]++
	}
	out := make([]Bucket, 0, len(idx))
	for _, b := range idx {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// RoomLink is two rooms that share exchanges.
type RoomLink struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Count int    `json:"count"`
}

// FileCount is a file and how many exchanges touched it.
type FileCount struct {
	File     string    `json:"file"`
	Count    int       `json:"count"`
	LastUsed time.Time `json:"last_used"`
}

// Palace is the memory palace: the rooms, sized by use, and the links
// between the rooms that share exchanges.
type Palace struct {
	Rooms      []RoomCount `json:"rooms"`
	Links      []RoomLink  `json:"links"`
	TotalRooms int         `json:"total_rooms"`
}

// Palace returns at most maxRooms of the busiest rooms (0 = all) and the
// links among them, the strongest first.
func (v *View) Palace(f Filter, maxRooms int) (*Palace, error) {
	return cached(v, "palace", f, maxRooms, func(_ string, all []*Entry) *Palace { return palace(all, f, maxRooms) })
}

func palace(all []*Entry, f Filter, maxRooms int) *Palace {
	rooms := roomsIn(all, f)
	p := &Palace{Rooms: rooms, Links: []RoomLink{}, TotalRooms: len(rooms)}
	if maxRooms > 0 && len(rooms) > maxRooms {
		p.Rooms = rooms[:maxRooms]
	}
	keep := make(map[string]bool, len(p.Rooms))
	for _, r := range p.Rooms {
		keep[r.Room] = true
	}
	links := map[[2]string]int{}
	for _, e := range all {
		if len(e.Rooms) < 2 || !f.Match(e) {
			continue
		}
		for i, a := range e.Rooms {
			for _, b := range e.Rooms[i+1:] {
				if a == b || !keep[a] || !keep[b] {
					continue
				}
				if b < a {
					a, b = b, a
				}
				links[[2]string{a, b}]++
			}
		}
	}
	for k, n := range links {
		p.Links = append(p.Links, RoomLink{A: k[0], B: k[1], Count: n})
	}
	sort.Slice(p.Links, func(i, j int) bool {
		x, y := p.Links[i], p.Links[j]
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		if x.A != y.A {
			return x.A < y.A
		}
		return x.B < y.B
	})
	return p
}

// Files lists the files the matching exchanges touched, the most touched
// first, at most n (0 = all), with the number of distinct files.
func (v *View) Files(f Filter, n int) ([]FileCount, int, error) {
	type answer struct {
		files []FileCount
		total int
	}
	a, err := cached(v, "files", f, n, func(_ string, all []*Entry) answer {
		files, total := filesIn(all, f, n)
		return answer{files, total}
	})
	return a.files, a.total, err
}

func filesIn(all []*Entry, f Filter, n int) ([]FileCount, int) {
	counts := countKeys(all, f, func(e *Entry) []string { return e.Files })
	total := len(counts)
	if n > 0 && len(counts) > n {
		counts = counts[:n]
	}
	out := make([]FileCount, len(counts))
	for i, c := range counts {
		out[i] = FileCount{File: c.key, Count: c.count, LastUsed: c.last}
	}
	return out, total
}

type keyCount struct {
	key   string
	count int
	last  time.Time
}

// countKeys counts the matching exchanges per key (a room, a file) with the
// key's last use, the most used first, ties by key.
func countKeys(all []*Entry, f Filter, keys func(*Entry) []string) []keyCount {
	idx := map[string]*keyCount{}
	for _, e := range all {
		ks := keys(e)
		if len(ks) == 0 || !f.Match(e) {
			continue
		}
		for _, k := range ks {
			c := idx[k]
			if c == nil {
				c = &keyCount{key: k}
				idx[k] = c
			}
			c.count++
			if e.Time.After(c.last) {
				c.last = e.Time
			}
		}
	}
	out := make([]keyCount, 0, len(idx))
	for _, c := range idx {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].count != out[j].count {
			return out[i].count > out[j].count
		}
		return out[i].key < out[j].key
	})
	return out
}

// Facets are the values the filters can take, with their counts.
type Facets struct {
	Projects map[string]int `json:"projects"`
	Agents   map[string]int `json:"agents"`
	Total    int            `json:"total"`
	Head     string         `json:"head"`
}

// Facets counts the exchanges per project and agent.
func (v *View) Facets() (*Facets, error) {
	return cached(v, "facets", Filter{}, 0, func(head string, all []*Entry) *Facets { return facets(all, head) })
}

func facets(all []*Entry, head string) *Facets {
	fc := &Facets{Projects: map[string]int{}, Agents: map[string]int{}, Total: len(all), Head: head}
	for _, e := range all {
		if e.Project != "" {
			fc.Projects[e.Project]++
		}
		if e.Agent != "" {
			fc.Agents[e.Agent]++
		}
	}
	return fc
}

// Stats is Memory.Stats, computed once per head: it counts the tokens of
// every card on each call (28 s at 100k on the loaded test box, the
// verbatim counts already cached), and the page shows it on each visit.
func (v *View) Stats() (*Stats, error) {
	head, _, err := v.Snapshot()
	if err != nil {
		return nil, err
	}
	return remember(v, head, "stats", v.m.Stats)
}
