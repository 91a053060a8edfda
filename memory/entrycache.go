package memory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/internal/mapfile"
	"github.com/gitmem/git-mem/search"
)

// entryCacheVersion changes whenever the cached fields or their meaning
// change; a cache of another version is rebuilt.
const entryCacheVersion = 4 // 4: the set digest after the count

// entryCacheFile is <gitdir>/mem/cache/entries.bin: every card of main once,
// newest first, and the commit main pointed at when it was written. Walking
// 15k commits through go-git takes seconds; log, show, stats and the
// SessionStart hook (300 ms) read this instead.
type entryCacheFile struct {
	Version int
	Head    string
	Entries []Entry
}

// EntryCachePath is where the card cache lives (disposable).
func (m *Memory) EntryCachePath() string {
	return filepath.Join(m.Repo.MemDir(), "cache", "entries.bin")
}

// Entries returns every stored exchange once (a merge may bring the same
// exchange id twice; the first seen from main wins), newest first by the
// exchange's own time, ties by commit order. It reads the card cache; when
// main has moved only the new commits are walked; a missing, corrupt or
// other-version cache, or a rewritten history, means a full walk.
func (m *Memory) Entries() ([]*Entry, error) {
	head, err := m.Repo.Head()
	if err != nil {
		return nil, fmt.Errorf("read main: %w", err)
	}
	if head.IsZero() {
		return []*Entry{}, nil
	}
	path := m.EntryCachePath()
	old, ok := loadEntryCache(path)
	if ok && old.Head == head.String() {
		return pointers(old.Entries), nil
	}
	var oldHead plumbing.Hash
	if ok && plumbing.IsHash(old.Head) {
		oldHead = plumbing.NewHash(old.Head)
	} else {
		old = entryCacheFile{}
	}
	fresh, reached, err := walkNew(m, head, oldHead)
	if err != nil {
		return nil, err
	}
	all := fresh
	if reached {
		if fresh, err = m.dropDead(head, fresh, old.Entries); err != nil {
			return nil, err
		}
		all = merge(fresh, old.Entries)
	}
	// A cache that cannot be saved only costs the next run a walk.
	_ = saveEntryCache(path, entryCacheFile{Version: entryCacheVersion, Head: head.String(), Entries: all})
	return pointers(all), nil
}

// walkNew reads the cards of the commits from head down to (not including)
// stop. reached reports whether stop was met, i.e. the old cache still
// describes the rest of the history; otherwise (history rewritten, or no
// cache) the whole history was walked. Merge commits carry no exchange.
func walkNew(m *Memory, head, stop plumbing.Hash) (out []Entry, reached bool, err error) {
	seen := map[string]bool{}
	where := map[string]int{}
	visit := func(c *object.Commit) error {
		if len(c.ParentHashes) > 1 {
			return nil
		}
		e := *entryOf(c)
		if e.Exchange == "" {
			return nil
		}
		if seen[e.Exchange] {
			// Stored on two machines: the card whose blob main's tree
			// holds is the living one (as in the search index).
			if living, err := m.isLiving(head, c.Hash, e.Exchange); err != nil {
				return err
			} else if living {
				out[where[e.Exchange]] = e
			}
			return nil
		}
		seen[e.Exchange] = true
		where[e.Exchange] = len(out)
		out = append(out, e)
		return nil
	}
	// git lists the commits in Walk's order and reads them a batch at a
	// time: through go-git (a pack reopened and inflated per commit) the
	// first `stats` of a 1,000,000-exchange memory ran for minutes. The
	// commits of a merged branch that stop already has are left out; the
	// cache holds their cards.
	hs, reached, err := m.Repo.CommitHashesSince(head, stop)
	if err == nil && !reached && !stop.IsZero() {
		// stop left main's history (a forget rewrote it): the caller
		// then takes these cards for the whole log, so every one of them,
		// also the commits stop shares.
		hs, _, err = m.Repo.CommitHashesSince(head, plumbing.ZeroHash)
	}
	switch {
	case err == nil:
		err = m.Repo.EachCommitBatch(hs, entryBatch, func(cs []*object.Commit) error {
			for _, c := range cs {
				if err := visit(c); err != nil {
					return err
				}
			}
			return nil
		})
	case errors.Is(err, gitstore.ErrNoGit):
		reached = false
		err = m.Repo.Walk(head, func(h plumbing.Hash) bool {
			if !stop.IsZero() && h == stop {
				reached = true
				return true
			}
			return false
		}, visit)
	}
	if err != nil {
		return nil, false, fmt.Errorf("read memory log: %w", err)
	}
	sortEntries(out)
	return out, reached, nil
}

// entryBatch is how many commits walkNew reads per git cat-file.
const entryBatch = 1000

// dropDead removes from fresh the cards of exchanges the cache already has
// whose blob is not the one main's tree holds (a sync brought a losing
// copy of an exchange stored on both machines).
func (m *Memory) dropDead(head plumbing.Hash, fresh, old []Entry) ([]Entry, error) {
	if len(fresh) == 0 || len(old) == 0 {
		return fresh, nil
	}
	known := make(map[string]bool, len(old))
	for i := range old {
		known[old[i].Exchange] = true
	}
	kept := fresh[:0]
	for _, e := range fresh {
		if known[e.Exchange] {
			living, err := m.isLiving(head, plumbing.NewHash(e.Commit), e.Exchange)
			if err != nil {
				return nil, err
			}
			if !living {
				continue
			}
		}
		kept = append(kept, e)
	}
	return kept, nil
}

// merge puts the new cards before the cached ones (the first seen from main
// wins, as in memory.Entries) and keeps the newest-first order.
func merge(fresh, old []Entry) []Entry {
	if len(fresh) == 0 {
		return old
	}
	seen := make(map[string]bool, len(fresh))
	for _, e := range fresh {
		seen[e.Exchange] = true
	}
	all := make([]Entry, 0, len(fresh)+len(old))
	all = append(all, fresh...)
	for _, e := range old {
		if !seen[e.Exchange] {
			all = append(all, e)
		}
	}
	sortEntries(all)
	return all
}

// sortEntries orders newest first by the exchange's time; the sort is stable,
// so ties keep walk order (the newer commit first).
func sortEntries(es []Entry) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Time.After(es[j].Time) })
}

func pointers(es []Entry) []*Entry {
	out := make([]*Entry, len(es))
	for i := range es {
		if es[i].Rooms == nil {
			es[i].Rooms = []string{}
		}
		if es[i].Files == nil {
			es[i].Files = []string{}
		}
		out[i] = &es[i]
	}
	return out
}

// loadEntryCache reads the cache; any problem (absent, corrupt, other version)
// means "rebuild", never an error: it is a cache.
func loadEntryCache(path string) (entryCacheFile, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return entryCacheFile{}, false
	}
	cf, err := decodeEntryCache(b)
	if err != nil {
		return entryCacheFile{}, false
	}
	return cf, true
}

func saveEntryCache(path string, cf entryCacheFile) error {
	b := encodeEntryCache(cf)
	return WriteFileAtomic(path, func(f *os.File) error {
		_, err := f.Write(b)
		return err
	})
}

// The card cache is a flat binary file rather than gob: the SessionStart
// hook decodes 15k cards on every session start, and gob took ~80 ms of
// the 300 ms it has; this takes a fraction of that.
//
//	magic "gmrc" | uvarint version | string head | uvarint n | u64 digest | n × card
//	card = strings commit exchange session project agent core context distiller,
//	       varint unix-nanos, varint zone-offset-seconds, uvarint redacted,
//	       uvarint len(rooms), rooms…, uvarint len(files), files…
//	string = uvarint length, bytes
const entryCacheMagic = "gmrc"

var errCacheCorrupt = errors.New("corrupt card cache")

func encodeEntryCache(cf entryCacheFile) []byte {
	b := make([]byte, 0, 64+len(cf.Entries)*256)
	b = append(b, entryCacheMagic...)
	b = binary.AppendUvarint(b, uint64(cf.Version))
	b = appendString(b, cf.Head)
	b = binary.AppendUvarint(b, uint64(len(cf.Entries)))
	b = binary.LittleEndian.AppendUint64(b, entriesDigest(cf.Entries))
	for i := range cf.Entries {
		e := &cf.Entries[i]
		for _, s := range []string{e.Commit, e.Exchange, e.Session, e.Project, e.Agent, e.Core, e.Context, e.Distiller} {
			b = appendString(b, s)
		}
		_, off := e.Time.Zone()
		b = binary.AppendVarint(b, e.Time.UnixNano())
		b = binary.AppendVarint(b, int64(off))
		b = binary.AppendUvarint(b, uint64(max(e.Redacted, 0)))
		b = appendStrings(b, e.Rooms)
		b = appendStrings(b, e.Files)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// decoder reads the format above; the first error sticks and every later
// read returns zero values, so decodeEntryCache checks once per card.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCacheCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCacheCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errCacheCorrupt
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) strs() []string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errCacheCorrupt
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

// zones shares one *time.Location per offset, so 15k cards do not make
// 15k locations.
type zones map[int64]*time.Location

func (z zones) at(off int64) *time.Location {
	if off == 0 {
		return time.UTC
	}
	if l, ok := z[off]; ok {
		return l
	}
	l := time.FixedZone("", int(off))
	z[off] = l
	return l
}

// entriesDigest is the set digest of the cards, the same as the search
// index keeps of its documents (search.DocDigest), so that status compares
// the two without listing either.
func entriesDigest(es []Entry) uint64 {
	var d uint64
	for i := range es {
		d ^= search.DocDigest(es[i].Exchange, es[i].Commit)
	}
	return d
}

// entryCacheSummary reads only the cache's header: the head it describes,
// how many cards and their digest.
func entryCacheSummary(path string) (head string, n int, digest uint64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, 0, false
	}
	defer f.Close()
	buf := make([]byte, 256)
	k, _ := io.ReadFull(f, buf)
	buf = buf[:k]
	if len(buf) < len(entryCacheMagic) || string(buf[:len(entryCacheMagic)]) != entryCacheMagic {
		return "", 0, 0, false
	}
	d := &decoder{b: buf[len(entryCacheMagic):]}
	if int(d.uvarint()) != entryCacheVersion {
		return "", 0, 0, false
	}
	head = d.str()
	cnt := d.uvarint()
	if d.err != nil || len(d.b) < 8 {
		return "", 0, 0, false
	}
	return head, int(cnt), binary.LittleEndian.Uint64(d.b), true
}

func decodeEntryCache(b []byte) (entryCacheFile, error) {
	cf, d, n, digest, err := decodeEntryCacheHeader(b)
	if err != nil {
		return entryCacheFile{}, err
	}
	cf.Entries = make([]Entry, n)
	z := zones{}
	for i := range cf.Entries {
		if err := d.entry(&cf.Entries[i], z); err != nil {
			return entryCacheFile{}, err
		}
	}
	if len(d.b) != 0 {
		return entryCacheFile{}, fmt.Errorf("%w: %d trailing bytes", errCacheCorrupt, len(d.b))
	}
	if entriesDigest(cf.Entries) != digest {
		return entryCacheFile{}, fmt.Errorf("%w: digest", errCacheCorrupt)
	}
	return cf, nil
}

// decodeEntryCacheHeader reads up to the cards' digest, leaving d at the
// first card.
func decodeEntryCacheHeader(b []byte) (cf entryCacheFile, d *decoder, n int, digest uint64, err error) {
	if len(b) < len(entryCacheMagic) || string(b[:len(entryCacheMagic)]) != entryCacheMagic {
		return entryCacheFile{}, nil, 0, 0, errCacheCorrupt
	}
	d = &decoder{b: b[len(entryCacheMagic):]}
	cf = entryCacheFile{Version: int(d.uvarint()), Head: d.str()}
	if d.err != nil || cf.Version != entryCacheVersion {
		return entryCacheFile{}, nil, 0, 0, fmt.Errorf("%w: version %d", errCacheCorrupt, cf.Version)
	}
	cnt := d.uvarint()
	if d.err != nil || cnt > uint64(len(d.b)) || len(d.b) < 8 {
		return entryCacheFile{}, nil, 0, 0, errCacheCorrupt
	}
	digest = binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return cf, d, int(cnt), digest, nil
}

// entry decodes the next card into e.
func (d *decoder) entry(e *Entry, z zones) error {
	e.Commit, e.Exchange, e.Session, e.Project = d.str(), d.str(), d.str(), d.str()
	e.Agent, e.Core, e.Context, e.Distiller = d.str(), d.str(), d.str(), d.str()
	nanos, off := d.varint(), d.varint()
	e.Time = time.Unix(0, nanos).In(z.at(off))
	e.Redacted = int(d.uvarint())
	e.Rooms, e.Files = d.strs(), d.strs()
	if d.err != nil || len(e.Commit) < 7 {
		return errCacheCorrupt
	}
	e.Short = e.Commit[:7]
	return nil
}

// firstEntries returns the first n cards that match f, in Entries' order,
// reading and decoding only as far as it must: `git mem log -n 20` decoded
// all 15,000 cards for 20 (half of its 72 ms CPU; docs/BENCHMARKS.md,
// "Scale"), and at 100,000 read a 38 MB file. ok is false when the cache is
// not current for head or cannot be read; the caller then goes through
// Entries, which rebuilds it.
func (m *Memory) firstEntries(f Filter, n int) (out []*Entry, ok bool) {
	head, err := m.Repo.Head()
	if err != nil || head.IsZero() {
		return nil, false
	}
	fh, err := os.Open(m.EntryCachePath())
	if err != nil {
		return nil, false
	}
	defer fh.Close()
	// A prefix of the file, larger each time a card is cut off at its end.
	var fresh []*Entry
	var freshFor string
	for size := entryPrefix; ; size *= 8 {
		buf := make([]byte, size)
		got, err := fh.ReadAt(buf, 0)
		whole := err == io.EOF
		if err != nil && !whole {
			return nil, false
		}
		cf, _, _, _, err := decodeEntryCacheHeader(buf[:got])
		if err != nil {
			if whole {
				return nil, false
			}
			continue // a prefix shorter than its card count: read more
		}
		if cf.Head != head.String() && freshFor != cf.Head {
			if fresh, ok = m.cardsSince(head, cf.Head); !ok {
				return nil, false
			}
			freshFor = cf.Head
		}
		if out, ok := firstInCache(buf[:got], cf.Head, fresh, f, n); ok || whole {
			return out, ok
		}
	}
}

// cardsSince gives the cards of the commits main gained since the card
// cache's head, newest first, so that the first `log -n 20` or SessionStart
// context after an add need not load and rewrite the whole cache (383 MB at
// 1,000,000 exchanges: 4.3 s). ok is false when that would not be what
// Entries gives: the cache's head left main, or a new card's exchange was
// already stored (a copy from another machine: Entries decides which card
// lives), or git is not there to tell.
func (m *Memory) cardsSince(head plumbing.Hash, cacheHead string) (fresh []*Entry, ok bool) {
	if !plumbing.IsHash(cacheHead) {
		return nil, false
	}
	old := plumbing.NewHash(cacheHead)
	es, reached, err := walkNew(m, head, old)
	if err != nil || !reached {
		return nil, false
	}
	reqs := make([]gitstore.PathAt, len(es))
	for i := range es {
		reqs[i] = gitstore.PathAt{Commit: old, Path: exchange.BlobPath(es[i].Exchange)}
	}
	had, err := m.Repo.HasPaths(reqs)
	if err != nil {
		return nil, false
	}
	for _, h := range had {
		if h {
			return nil, false
		}
	}
	return pointers(es), true
}

// entryPrefix is how much of the card cache firstEntries reads first (about
// 1,000 cards of the synthetic benchmark's size).
var entryPrefix = 256 << 10

// firstInCache decodes cards from b, which may be a prefix of the file,
// until n match f; ok is false on any decoding error (a card cut off by
// the prefix, or corruption) or a cache of another head.
//
// fresh, newest first, are cards main has and the cache (of head) does not:
// they are taken in the order Entries' stable sort gives them (before a
// cached card of the same time).
func firstInCache(b []byte, head string, fresh []*Entry, f Filter, n int) (out []*Entry, ok bool) {
	cf, d, total, _, err := decodeEntryCacheHeader(b)
	if err != nil || cf.Head != head {
		return nil, false
	}
	out = []*Entry{}
	emit := func(e *Entry) {
		if len(out) < n && f.Match(e) {
			out = append(out, e)
		}
	}
	z := zones{}
	k := 0
	for i := 0; i < total && len(out) < n; i++ {
		e := &Entry{}
		if d.entry(e, z) != nil {
			return nil, false
		}
		for ; k < len(fresh) && !e.Time.After(fresh[k].Time); k++ {
			emit(fresh[k])
		}
		emit(e)
	}
	for ; k < len(fresh); k++ {
		emit(fresh[k])
	}
	return out, true
}

// followRewrite brings the card cache through a forget instead of a walk
// of the whole history (12.8 of 21.9 s CPU of a forget at 100,000): the
// forgotten cards go, the others move to their rewritten commits. Only a
// cache that was at main's head before the rewrite follows; any other is
// walked as usual.
func (m *Memory) followRewrite(before, after plumbing.Hash, moved map[plumbing.Hash]plumbing.Hash, forgotten []string) {
	path := m.EntryCachePath()
	old, ok := loadEntryCache(path)
	if !ok || old.Head != before.String() || after.IsZero() {
		return
	}
	gone := make(map[string]bool, len(forgotten))
	for _, id := range forgotten {
		gone[id] = true
	}
	out := make([]Entry, 0, len(old.Entries))
	for _, e := range old.Entries {
		if gone[e.Exchange] {
			continue
		}
		if plumbing.IsHash(e.Commit) {
			if nc, ok := moved[plumbing.NewHash(e.Commit)]; ok {
				e.Commit = nc.String()
			}
		}
		out = append(out, e)
	}
	_ = saveEntryCache(path, entryCacheFile{Version: entryCacheVersion, Head: after.String(), Entries: out})
}

// dropTombstonedCards takes the cards of exchanges a tombstone names out of
// the card cache, after a sync that learned tombstones dropped them from
// main: the cache held their text (core, context, rooms, files) until the
// next log, show or stats walked main again, and a machine that only syncs
// never does. The cache keeps the head it was written at, which the
// rewritten main no longer reaches, so the next reader walks main as
// before; only the forgotten cards go sooner. A cache that cannot be read
// or whose tombstones cannot be read is left as it was.
func (m *Memory) dropTombstonedCards() {
	path := m.EntryCachePath()
	old, ok := loadEntryCache(path)
	if !ok || len(old.Entries) == 0 {
		return
	}
	paths := make([]string, len(old.Entries))
	for i := range old.Entries {
		paths[i] = exchange.BlobPath(old.Entries[i].Exchange)
	}
	dead, err := m.Repo.Tombstoned(paths)
	if err != nil {
		return
	}
	kept := make([]Entry, 0, len(old.Entries))
	for i, e := range old.Entries {
		if !dead[i] {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(old.Entries) {
		return
	}
	old.Entries = kept
	_ = saveEntryCache(path, old)
}

// findCached resolves ref as findEntry does over Entries, reading the card
// cache without decoding every card: `git mem show` at 1,000,000 exchanges
// decoded all of them (8.6 s, 1.6 GB) for one. It scans each card's commit
// and exchange id in place, checks the set digest as decodeEntryCache does,
// and decodes only the cards that match; the new commits of a cache main
// has moved past come from cardsSince. ok is false when the cache cannot
// answer (absent, corrupt, not on main's history, an exchange stored twice):
// the caller then goes through Entries.
func (m *Memory) findCached(ref string) (en *Entry, ok bool, err error) {
	head, herr := m.Repo.Head()
	if herr != nil || head.IsZero() {
		return nil, false, nil
	}
	b, unmap, merr := mapfile.ReadOnly(m.EntryCachePath())
	if merr != nil {
		return nil, false, nil
	}
	defer unmap()
	cf, d, total, digest, herr := decodeEntryCacheHeader(b)
	if herr != nil {
		return nil, false, nil
	}
	var fresh []*Entry
	if cf.Head != head.String() {
		if fresh, ok = m.cardsSince(head, cf.Head); !ok {
			return nil, false, nil
		}
	}
	lower := strings.ToLower(ref)
	byCommit := isHex(lower) && len(lower) >= minPrefix
	var exact, prefixed []Entry
	for _, e := range fresh {
		if e.Exchange == ref {
			exact = append(exact, *e)
		} else if byCommit && strings.HasPrefix(e.Commit, lower) {
			prefixed = append(prefixed, *e)
		}
	}
	var sum uint64
	z := zones{}
	for i := 0; i < total; i++ {
		start := d.b
		commit, id := d.raw(), d.raw()
		for range 6 { // session project agent core context distiller
			d.raw()
		}
		d.varint()
		d.varint()
		d.uvarint()
		d.skipStrs() // rooms
		d.skipStrs() // files
		if d.err != nil {
			return nil, false, nil
		}
		sum ^= search.DocDigestBytes(id, commit)
		isID := string(id) == ref
		if !isID && !(byCommit && len(commit) >= len(lower) && string(commit[:len(lower)]) == lower) {
			continue
		}
		var e Entry
		if (&decoder{b: start}).entry(&e, z) != nil {
			return nil, false, nil
		}
		if isID {
			exact = append(exact, e)
		} else {
			prefixed = append(prefixed, e)
		}
	}
	if len(d.b) != 0 || sum != digest {
		return nil, false, nil
	}
	// findEntry over the matching cards in Entries' order (a stable sort by
	// time of the new cards before the cached ones, as merge gives) says
	// what it says over all of them.
	es := append(exact, prefixed...)
	if len(fresh) > 0 {
		sortEntries(es)
	}
	en, err = findEntry(pointers(es), ref)
	return en, true, err
}

// raw returns the next string's bytes in place.
func (d *decoder) raw() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errCacheCorrupt
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

// skipStrs steps over a list of strings.
func (d *decoder) skipStrs() {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errCacheCorrupt
		return
	}
	for range n {
		d.raw()
	}
}
