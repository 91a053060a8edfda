package memory

import (
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/tokens"
)

// Stats summarises the memory. Compression is the paper's: the sum of BPE
// tokens of the verbatim exchanges as rendered for a model over the sum of
// tokens of the cards' core + context.
type Stats struct {
	Exchanges       int            `json:"exchanges"`
	Sessions        int            `json:"sessions"`
	Projects        int            `json:"projects"`
	Rooms           int            `json:"rooms"`
	VerbatimTokens  int64          `json:"verbatim_tokens"`
	DistilledTokens int64          `json:"distilled_tokens"`
	Compression     float64        `json:"compression"`
	Redactions      int            `json:"redactions"`
	Distillers      map[string]int `json:"distillers"`
	Agents          map[string]int `json:"agents"`
	First           *time.Time     `json:"first,omitempty"`
	Last            *time.Time     `json:"last,omitempty"`
}

func (m *Memory) cachePath(name string) string {
	return filepath.Join(m.Repo.MemDir(), "cache", name)
}

// statsFile is the kept state of Stats (statsState).
const statsFile = "stats.bin"

// Files of earlier versions: their token counts seed the first state, so a
// memory of a million exchanges is not read again blob by blob (minutes),
// and they are removed once it is written.
const (
	legacyVerbatimTokens = "verbatim-tokens.gob" // map[exchange id]tokens
	legacyCardTokens     = "card-tokens.gob"     // map[commit]tokens
	legacyStatsJSON      = "stats.json"
)

// statsCacheVersion changes whenever what Stats counts, or how, changes: a
// state kept by another version is computed again.
const statsCacheVersion = 3 // 3: room tallies and project counts

// statsState is the last result of Stats, the head of main it describes, and
// what moving it to a newer head needs: a row per counted exchange and the
// sets of sessions, projects and rooms, all as 64-bit FNV hashes, sorted.
// When main only gained commits (an add, a fast-forward, a merge) Stats
// reads the new commits alone; summing every card again was O(history) per
// call (a first `stats` after main moved at 1,000,000 exchanges ran for
// over 300 s). Two ids hashing alike would at worst count one session or
// room too few (about 1 in 10^7 at a million); an exchange id met again
// sends Stats to the full count.
type statsState struct {
	Version int
	Head    string
	Stats   Stats
	Tallies []roomTally // by project, then room
	Counted bool        // every row's tokens are counted but Pending's
	// Pending lists the commits of rows added uncounted to a counted state;
	// Stats is valid when Counted and none is pending.
	Pending []string
	// PerProject counts each project's exchanges: a SessionStart hook in a
	// project with none (or few) need not read every card to find so.
	PerProject map[string]int
	Rows       []statRow // by ID
	Sessions   []uint64
	Projects   []uint64
	Rooms      []uint64
}

// stateHeader is the JSON part of the state file.
type stateHeader struct {
	Version int
	Head    string
	Stats   Stats
	Tallies []roomTally
	Counted bool
	// PerProject counts the exchanges of each project ("" for none).
	PerProject map[string]int
	Pending    []string
}

// roomTally counts a room's exchanges in one project and its last use, so
// that `git mem rooms` and the project's rooms a SessionStart hook shows
// need not read every card (6 s and 2.2 GB at 1,000,000 exchanges).
type roomTally struct {
	Project string    `json:"p"`
	Room    string    `json:"r"`
	Count   int       `json:"n"`
	Last    time.Time `json:"t"`
}

// tallyRooms adds es' rooms to ts (sorted by project, room) and gives the
// result, sorted.
func tallyRooms(ts []roomTally, es []*Entry) []roomTally {
	type key struct{ p, r string }
	idx := make(map[key]int, len(ts))
	out := slices.Clone(ts)
	for i, t := range out {
		idx[key{t.Project, t.Room}] = i
	}
	for _, e := range es {
		for _, r := range e.Rooms {
			k := key{e.Project, r}
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, roomTally{Project: e.Project, Room: r})
			}
			out[i].Count++
			if e.Time.After(out[i].Last) {
				out[i].Last = e.Time
			}
		}
	}
	slices.SortFunc(out, func(a, b roomTally) int {
		if c := strings.Compare(a.Project, b.Project); c != 0 {
			return c
		}
		return strings.Compare(a.Room, b.Room)
	})
	return out
}

// statRow is one counted exchange: Card is the hash of the card's text its
// Tokens were counted from (a forget rewrites commits, not cards).
type statRow struct {
	ID, Card         uint64
	Verbatim, Tokens uint32
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func cardHash(e *Entry) uint64 { return hash64(e.Core + "\x00" + e.Context) }

var statsTable = crc32.MakeTable(crc32.Castagnoli)

// encode lays the state out as a JSON header and fixed-width arrays, with a
// checksum: a million rows decode in milliseconds (gob: about a second).
func (s *statsState) encode() ([]byte, error) {
	head, err := json.Marshal(stateHeader{s.Version, s.Head, s.Stats, s.Tallies, s.Counted, s.PerProject, s.Pending})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64+len(head)+24*len(s.Rows)+8*(len(s.Sessions)+len(s.Projects)+len(s.Rooms)))
	b = binary.AppendUvarint(b, uint64(len(head)))
	b = append(b, head...)
	b = binary.AppendUvarint(b, uint64(len(s.Rows)))
	for _, r := range s.Rows {
		b = binary.LittleEndian.AppendUint64(b, r.ID)
		b = binary.LittleEndian.AppendUint64(b, r.Card)
		b = binary.LittleEndian.AppendUint32(b, r.Verbatim)
		b = binary.LittleEndian.AppendUint32(b, r.Tokens)
	}
	for _, set := range [][]uint64{s.Sessions, s.Projects, s.Rooms} {
		b = binary.AppendUvarint(b, uint64(len(set)))
		for _, h := range set {
			b = binary.LittleEndian.AppendUint64(b, h)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, statsTable)), nil
}

var errStatsCorrupt = errors.New("corrupt stats state")

func decodeStatsState(b []byte) (*statsState, error) {
	if len(b) < 4 || crc32.Checksum(b[:len(b)-4], statsTable) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, errStatsCorrupt
	}
	b = b[:len(b)-4]
	count := func(width int) (int, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k)/uint64(width) {
			return 0, false
		}
		b = b[k:]
		return int(n), true
	}
	n, ok := count(1)
	if !ok {
		return nil, errStatsCorrupt
	}
	s := &statsState{}
	var head stateHeader
	if err := json.Unmarshal(b[:n], &head); err != nil {
		return nil, errStatsCorrupt
	}
	b = b[n:]
	s.Version, s.Head, s.Stats, s.Tallies, s.Counted, s.PerProject, s.Pending = head.Version, head.Head, head.Stats, head.Tallies, head.Counted, head.PerProject, head.Pending
	if n, ok = count(24); !ok {
		return nil, errStatsCorrupt
	}
	s.Rows = make([]statRow, n)
	for i := range s.Rows {
		s.Rows[i] = statRow{
			ID: binary.LittleEndian.Uint64(b), Card: binary.LittleEndian.Uint64(b[8:]),
			Verbatim: binary.LittleEndian.Uint32(b[16:]), Tokens: binary.LittleEndian.Uint32(b[20:]),
		}
		b = b[24:]
	}
	for _, set := range []*[]uint64{&s.Sessions, &s.Projects, &s.Rooms} {
		if n, ok = count(8); !ok {
			return nil, errStatsCorrupt
		}
		*set = make([]uint64, n)
		for i := range *set {
			(*set)[i] = binary.LittleEndian.Uint64(b)
			b = b[8:]
		}
	}
	if len(b) != 0 {
		return nil, errStatsCorrupt
	}
	return s, nil
}

// loadStatsState reads the kept state; any problem means "count again".
func (m *Memory) loadStatsState() *statsState {
	b, err := os.ReadFile(m.cachePath(statsFile))
	if err != nil {
		return nil
	}
	s, err := decodeStatsState(b)
	if err != nil || s.Version != statsCacheVersion || !plumbing.IsHash(s.Head) {
		return nil
	}
	return s
}

// saveStatsState keeps s when main still points where s says: a state
// written after main moved on would be taken for the newer head's.
func (m *Memory) saveStatsState(s *statsState) {
	if now, err := m.Repo.Head(); err != nil || now.String() != s.Head {
		return
	}
	// A state without token counts never replaces one with them for the
	// same head (a `rooms` racing a `stats`): the next `stats` would count
	// every blob again.
	if !s.Counted {
		if on := m.loadStatsState(); on != nil && on.Head == s.Head && on.Counted {
			return
		}
	}
	b, err := s.encode()
	if err != nil {
		return
	}
	if WriteFileAtomic(m.cachePath(statsFile), func(f *os.File) error { _, err := f.Write(b); return err }) == nil {
		for _, old := range []string{legacyVerbatimTokens, legacyCardTokens, legacyStatsJSON} {
			_ = os.Remove(m.cachePath(old))
		}
	}
}

// Stats computes the memory's statistics: read when main has not moved
// since they were last kept, brought up to date from the new commits when
// main only gained some, counted over every card otherwise.
func (m *Memory) Stats() (*Stats, error) {
	s, err := m.state(true)
	if err != nil {
		return nil, err
	}
	return &s.Stats, nil
}

// state gives the stats state for main's head, brought up to date; with
// count, its token counts too (reading every blob the first time), which
// the room tallies do not need.
func (m *Memory) state(count bool) (*statsState, error) {
	head, err := m.Repo.Head()
	if err != nil {
		return nil, fmt.Errorf("read main: %w", err)
	}
	if head.IsZero() {
		return &statsState{Version: statsCacheVersion, Stats: *newStats()}, nil
	}
	old := m.loadStatsState()
	if old != nil && old.Head != head.String() {
		s, again, err := m.statsSince(old, head, count)
		if err != nil {
			return nil, err
		}
		if s != nil {
			m.saveStatsState(s)
			old = s
		} else {
			// History rewritten or an exchange stored again: a full
			// count, reusing old's rows but those named again.
			return m.fullState(head, old, again, count)
		}
	}
	if old != nil && old.Head == head.String() {
		if !count || old.valid() {
			return old, nil
		}
		if old.Counted {
			return m.countPending(old, head)
		}
	}
	return m.fullState(head, old, nil, count)
}

// statsFollow brings a kept stats state (mem/cache/stats.bin) to main
// after a forget or a sync that dropped exchanges because of tombstones:
// the state held the room names of the forgotten exchanges (in its room
// tallies; a room names a file or a concept of the exchange) until the next
// stats, rooms or context counted again. The count reuses the state's rows
// (no blob is read; the forgotten exchanges' rows go) and reads the cards
// from the card cache, which has already followed. No state, none written.
func (m *Memory) statsFollow() {
	if m.loadStatsState() == nil {
		return
	}
	_, _ = m.state(false)
}

// fullState is computeStats, kept when complete.
func (m *Memory) fullState(head plumbing.Hash, old *statsState, recount map[uint64]bool, count bool) (*statsState, error) {
	s, complete, err := m.computeStats(head, old, recount, count)
	if err != nil {
		return nil, err
	}
	if complete {
		m.saveStatsState(s)
	}
	return s, nil
}

// valid reports whether s's Stats hold every token count.
func (s *statsState) valid() bool { return s.Counted && len(s.Pending) == 0 }

// countPending counts the tokens of the exchanges s lists as pending (added
// while only rooms or the context were asked for, which never count: a
// SessionStart hook after a sync of a thousand exchanges would have
// tokenised them all) and keeps the result.
func (m *Memory) countPending(s *statsState, head plumbing.Hash) (*statsState, error) {
	hs := make([]plumbing.Hash, len(s.Pending))
	for i, p := range s.Pending {
		hs[i] = plumbing.NewHash(p)
	}
	var es []*Entry
	err := m.Repo.EachCommitBatch(hs, entryBatch, func(cs []*object.Commit) error {
		for _, c := range cs {
			es = append(es, entryOf(c))
		}
		return nil
	})
	if errors.Is(err, gitstore.ErrNoGit) {
		return m.fullState(head, s, nil, true)
	}
	if err != nil {
		return nil, fmt.Errorf("read memory log: %w", err)
	}
	rows, ok, err := m.countTokens(head, es, nil, true)
	if err != nil {
		return nil, err
	}
	if !ok {
		return m.fullState(head, s, nil, true)
	}
	c := *s
	c.Rows, c.Pending = slices.Clone(s.Rows), nil
	for _, r := range rows {
		i, found := slices.BinarySearchFunc(c.Rows, r.ID, func(x statRow, id uint64) int { return cmpU64(x.ID, id) })
		if !found || c.Rows[i].Verbatim != uncounted {
			return m.fullState(head, s, nil, true) // not what Pending said: count from the cards
		}
		c.Rows[i] = r
		c.Stats.VerbatimTokens += int64(r.Verbatim)
		c.Stats.DistilledTokens += int64(r.Tokens)
	}
	finish(&c.Stats, c.Stats.Sessions, c.Stats.Projects, c.Stats.Rooms)
	m.saveStatsState(&c)
	return &c, nil
}

func newStats() *Stats {
	return &Stats{Distillers: map[string]int{}, Agents: map[string]int{}}
}

// statsSince moves old to head by counting only the commits head has and
// old's head has not. It gives nil when that cannot give the exact result
// (history rewritten, an exchange stored again by another machine, a blob
// unread, no git command); again then names the exchanges stored again,
// whose kept counts may describe a copy that lost.
func (m *Memory) statsSince(old *statsState, head plumbing.Hash, count bool) (s *statsState, again map[uint64]bool, err error) {
	hs, reached, err := m.Repo.CommitHashesSince(head, plumbing.NewHash(old.Head))
	if errors.Is(err, gitstore.ErrNoGit) || err == nil && !reached {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read memory log: %w", err)
	}
	var fresh []Entry
	seen := map[uint64]bool{}
	err = m.Repo.EachCommitBatch(hs, entryBatch, func(cs []*object.Commit) error {
		for _, c := range cs {
			if len(c.ParentHashes) > 1 {
				continue
			}
			e := *entryOf(c)
			if e.Exchange == "" {
				continue
			}
			id := hash64(e.Exchange)
			if _, known := slices.BinarySearchFunc(old.Rows, id, func(r statRow, id uint64) int { return cmpU64(r.ID, id) }); known || seen[id] {
				if again == nil {
					again = map[uint64]bool{}
				}
				again[id] = true
				continue
			}
			seen[id] = true
			fresh = append(fresh, e)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read memory log: %w", err)
	}
	if again != nil {
		return nil, again, nil
	}
	// Counted only when asked (stats) and worth it (every older row is);
	// otherwise, in a counted state, the new ones wait in Pending.
	countNow := count && old.valid()
	rows, ok, err := m.countTokens(head, pointers(fresh), nil, countNow)
	if err != nil || !ok {
		return nil, nil, err
	}
	s = &statsState{Version: statsCacheVersion, Head: head.String(), Stats: old.Stats, Counted: old.Counted,
		Pending: slices.Clone(old.Pending)}
	if old.Counted && !countNow {
		for i := range fresh {
			s.Pending = append(s.Pending, fresh[i].Commit)
		}
	}
	s.Stats.Distillers, s.Stats.Agents = copyCounts(old.Stats.Distillers), copyCounts(old.Stats.Agents)
	s.Rows, s.Tallies, s.PerProject = old.Rows, old.Tallies, copyCounts(old.PerProject)
	s.Sessions, s.Projects, s.Rooms = old.Sessions, old.Projects, old.Rooms
	s.add(pointers(fresh), rows)
	return s, nil, nil
}

// add counts es (with their rows) into s: the one place both an update and
// a full count go through.
func (s *statsState) add(es []*Entry, rows []statRow) {
	var sessions, projects, rooms []uint64
	if s.PerProject == nil {
		s.PerProject = map[string]int{}
	}
	for i, e := range es {
		tally(&s.Stats, e, rows[i])
		s.PerProject[e.Project]++
		if e.Session != "" {
			sessions = append(sessions, hash64(e.Session))
		}
		if e.Project != "" {
			projects = append(projects, hash64(e.Project))
		}
		for _, r := range e.Rooms {
			rooms = append(rooms, hash64(r))
		}
	}
	s.Rows = mergeRows(s.Rows, rows)
	s.Tallies = tallyRooms(s.Tallies, es)
	s.Sessions, s.Projects, s.Rooms = union(s.Sessions, sessions), union(s.Projects, projects), union(s.Rooms, rooms)
	finish(&s.Stats, len(s.Sessions), len(s.Projects), len(s.Rooms))
}

// computeStats counts every card of main; counts kept in old (or, before
// the first state, in the legacy token files) are reused unless recount
// names the exchange. complete is false when a verbatim blob could not be
// read (its tokens are then left out, and the result not kept).
func (m *Memory) computeStats(head plumbing.Hash, old *statsState, recount map[uint64]bool, count bool) (s *statsState, complete bool, err error) {
	statsFullCounts.Add(1)
	entries, err := m.Entries()
	if err != nil {
		return nil, false, err
	}
	known := func(e *Entry) (statRow, bool) { return statRow{}, false }
	switch {
	case old != nil:
		known = func(e *Entry) (statRow, bool) {
			id := hash64(e.Exchange)
			i, ok := slices.BinarySearchFunc(old.Rows, id, func(r statRow, id uint64) int { return cmpU64(r.ID, id) })
			if !ok || recount[id] {
				return statRow{}, false
			}
			r := old.Rows[i]
			if r.Card != 0 && r.Card != cardHash(e) {
				r.Card, r.Tokens = 0, 0 // the card changed: count it again
			}
			return r, true
		}
	default:
		verbatim, cards := m.loadLegacyTokens(legacyVerbatimTokens), m.loadLegacyTokens(legacyCardTokens)
		if len(verbatim) > 0 {
			known = func(e *Entry) (statRow, bool) {
				v, ok := verbatim[e.Exchange]
				if !ok {
					return statRow{}, false
				}
				r := statRow{ID: hash64(e.Exchange), Verbatim: uint32(v)}
				if c, ok := cards[e.Commit]; ok {
					r.Card, r.Tokens = cardHash(e), uint32(c)
				}
				return r, true
			}
		}
	}
	rows, complete, err := m.countTokens(head, entries, known, count)
	if err != nil {
		return nil, false, err
	}
	s = &statsState{Version: statsCacheVersion, Head: head.String(), Stats: *newStats(), Counted: counted(rows)}
	s.add(entries, rows)
	return s, complete, nil
}

// statsFullCounts counts computeStats' runs, so tests can tell which way
// Stats went.
var statsFullCounts atomic.Int64

// statsBatch is how many blobs countTokens reads per git cat-file: a
// million held at once would be a gigabyte.
const statsBatch = 1000

// uncounted is a row's Verbatim before its blob was read; a row's Card is 0
// until its card's tokens are counted.
const uncounted = math.MaxUint32

// counted reports whether every row has both counts.
func counted(rows []statRow) bool {
	for _, r := range rows {
		if r.Verbatim == uncounted || r.Card == 0 {
			return false
		}
	}
	return true
}

// countTokens gives each entry's row: with count, the BPE tokens of its
// verbatim exchange as rendered (read from head's tree, a batch at a time
// through git cat-file: through go-git the first stats of 100,000
// exchanges spent 38 of its 63 s reopening packs) and of its card. known,
// when not nil, gives rows already made, counted or not. complete is false
// when a blob could not be read.
func (m *Memory) countTokens(head plumbing.Hash, entries []*Entry, known func(*Entry) (statRow, bool), count bool) (rows []statRow, complete bool, err error) {
	rows = make([]statRow, len(entries))
	var need []int
	for i, e := range entries {
		r, ok := statRow{}, false
		if known != nil {
			r, ok = known(e)
		}
		if !ok {
			r = statRow{ID: hash64(e.Exchange), Verbatim: uncounted}
		}
		if count && r.Verbatim == uncounted {
			need = append(need, i)
		}
		rows[i] = r
	}
	complete = true
	if !count {
		return rows, true, nil
	}
	for start := 0; start < len(need); start += statsBatch {
		part := need[start:min(start+statsBatch, len(need))]
		reqs := make([]gitstore.PathAt, len(part))
		for j, i := range part {
			reqs[j] = gitstore.PathAt{Commit: head, Path: exchange.BlobPath(entries[i].Exchange)}
		}
		data, ok, err := m.Repo.ReadPaths(reqs)
		if err != nil {
			return nil, false, fmt.Errorf("read exchanges for stats: %w", err)
		}
		parallel(len(part), func(j int) {
			if !ok[j] {
				return
			}
			if ex, err := exchange.Parse(data[j]); err == nil {
				rows[part[j]].Verbatim = uint32(min(tokens.Count(ex.Render()), uncounted-1))
			} else {
				ok[j] = false
			}
		})
		for j := range part {
			complete = complete && ok[j]
		}
	}
	parallel(len(entries), func(i int) {
		if rows[i].Card == 0 {
			rows[i].Card, rows[i].Tokens = cardHash(entries[i]), uint32(tokens.Count(entries[i].Core+" "+entries[i].Context))
		}
	})
	return rows, complete, nil
}

// loadLegacyTokens reads a token file of an earlier version (nil if none).
func (m *Memory) loadLegacyTokens(name string) map[string]int {
	f, err := os.Open(m.cachePath(name))
	if err != nil {
		return nil
	}
	defer f.Close()
	var c map[string]int
	if gob.NewDecoder(f).Decode(&c) != nil {
		return nil
	}
	return c
}

func tally(st *Stats, e *Entry, r statRow) {
	st.Exchanges++
	st.Redactions += e.Redacted
	st.Distillers[e.Distiller]++
	if e.Agent != "" {
		st.Agents[e.Agent]++
	}
	if r.Verbatim != uncounted {
		st.VerbatimTokens += int64(r.Verbatim)
	}
	if r.Card != 0 {
		st.DistilledTokens += int64(r.Tokens)
	}
	t := e.Time
	if st.First == nil || t.Before(*st.First) {
		st.First = &t
	}
	if st.Last == nil || t.After(*st.Last) {
		st.Last = &t
	}
}

func finish(st *Stats, sessions, projects, rooms int) {
	st.Sessions, st.Projects, st.Rooms = sessions, projects, rooms
	st.Compression = 0
	if st.DistilledTokens > 0 {
		st.Compression = float64(st.VerbatimTokens) / float64(st.DistilledTokens)
	}
}

func copyCounts(c map[string]int) map[string]int {
	out := make(map[string]int, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mergeRows gives old's rows and the new ones in one list by ID.
func mergeRows(old, add []statRow) []statRow {
	add = slices.Clone(add)
	slices.SortFunc(add, func(a, b statRow) int { return cmpU64(a.ID, b.ID) })
	out := make([]statRow, 0, len(old)+len(add))
	i, j := 0, 0
	for i < len(old) || j < len(add) {
		if j == len(add) || i < len(old) && old[i].ID <= add[j].ID {
			out = append(out, old[i])
			i++
		} else {
			out = append(out, add[j])
			j++
		}
	}
	return out
}

// union gives the sorted, distinct hashes of a sorted set and more.
func union(set, more []uint64) []uint64 {
	if len(more) == 0 {
		return set
	}
	out := append(slices.Clone(set), more...)
	slices.Sort(out)
	return slices.Compact(out)
}

// RoomCount is one room of the memory palace.
type RoomCount struct {
	Room     string    `json:"room"`
	Count    int       `json:"count"`
	LastUsed time.Time `json:"last_used"`
}

// Rooms lists every room with its number of exchanges and last use, the
// busiest first.
func (m *Memory) Rooms(f Filter) ([]RoomCount, error) {
	if onlyProject(f) {
		s, err := m.state(false)
		if err != nil {
			return nil, err
		}
		return roomsOfTallies(s.Tallies, f), nil
	}
	entries, err := m.Entries()
	if err != nil {
		return nil, err
	}
	return roomsIn(entries, f), nil
}

// ProjectExchanges counts the exchanges a filter by project alone (or no
// filter) lets through, from the kept state (O(new commits)); ok is false
// for any other filter.
func (m *Memory) ProjectExchanges(f Filter) (n int, ok bool, err error) {
	if !onlyProject(f) {
		return 0, false, nil
	}
	s, err := m.state(false)
	if err != nil || s.PerProject == nil {
		return 0, false, err
	}
	for p, c := range s.PerProject {
		if f.Match(&Entry{Project: p}) {
			n += c
		}
	}
	return n, true, nil
}

// onlyProject reports whether f filters by project alone (or not at all),
// which the kept room tallies answer.
func onlyProject(f Filter) bool {
	f.Project = ""
	return f.IsZero()
}

// roomsOfTallies is roomsIn from the tallies of the projects f lets
// through, in countKeys' order.
func roomsOfTallies(ts []roomTally, f Filter) []RoomCount {
	idx := map[string]int{}
	out := []RoomCount{}
	for _, t := range ts {
		if !f.Match(&Entry{Project: t.Project}) {
			continue
		}
		i, ok := idx[t.Room]
		if !ok {
			i = len(out)
			idx[t.Room] = i
			out = append(out, RoomCount{Room: t.Room})
		}
		out[i].Count += t.Count
		if t.Last.After(out[i].LastUsed) {
			out[i].LastUsed = t.Last
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Room < out[j].Room
	})
	return out
}

// roomsIn is Rooms over entries already read (the long-lived View keeps them).
func roomsIn(entries []*Entry, f Filter) []RoomCount {
	counts := countKeys(entries, f, func(e *Entry) []string { return e.Rooms })
	out := make([]RoomCount, len(counts))
	for i, c := range counts {
		out[i] = RoomCount{Room: c.key, Count: c.count, LastUsed: c.last}
	}
	return out
}
