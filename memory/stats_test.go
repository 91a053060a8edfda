package memory

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/tokens"
)

// naiveStats counts what Stats reports from every card and blob afresh,
// sharing none of its code beyond Entries and Verbatim.
func naiveStats(t *testing.T, m *Memory) *Stats {
	t.Helper()
	es, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	st := newStats()
	sessions, projects, rooms := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range es {
		st.Exchanges++
		st.Redactions += e.Redacted
		st.Distillers[e.Distiller]++
		if e.Agent != "" {
			st.Agents[e.Agent]++
		}
		if e.Session != "" {
			sessions[e.Session] = true
		}
		if e.Project != "" {
			projects[e.Project] = true
		}
		for _, r := range e.Rooms {
			rooms[r] = true
		}
		x, _, err := m.Verbatim(e.Exchange)
		if err != nil {
			t.Fatal(err)
		}
		st.VerbatimTokens += int64(tokens.Count(x.Render()))
		st.DistilledTokens += int64(tokens.Count(e.Core + " " + e.Context))
		tm := e.Time
		if st.First == nil || tm.Before(*st.First) {
			st.First = &tm
		}
		if st.Last == nil || tm.After(*st.Last) {
			st.Last = &tm
		}
	}
	finish(st, len(sessions), len(projects), len(rooms))
	return st
}

func statsJSON(t *testing.T, st *Stats) string {
	t.Helper()
	if st.First != nil { // the kept state is JSON: compare instants
		f, l := st.First.UTC(), st.Last.UTC()
		c := *st
		c.First, c.Last = &f, &l
		st = &c
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStatsFollowsMain: after each way main moves, Stats equals a count
// from scratch, and only a rewritten history (or none kept) counts every
// card again; an add reads the new commits alone.
func TestStatsFollowsMain(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"--git-dir", m.Repo.Dir()}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	n := 0
	next := func(session string, k int) []*exchange.Exchange {
		var out []*exchange.Exchange
		for i := 0; i < k; i++ {
			n++
			e := ex(fmt.Sprintf("x%d", n), session, fmt.Sprintf("2026-01-%02dT10:00:00Z", 1+n%28),
				fmt.Sprintf("fix the flaky heron retry test %d in retry_%d_test.go", n, n%3), "raised the timeout")
			e.Project = []string{"p", "q"}[n%2]
			out = append(out, e)
		}
		return out
	}
	var rewind string
	dropState := func() { os.Remove(m.cachePath(statsFile)) }
	steps := []struct {
		name       string
		do         func()
		full       bool // Stats (or Rooms first) counts every card again
		roomsFirst bool // Rooms is asked before Stats
	}{
		{"first", func() { mustAdd(t, m, next("s1", 3)...) }, true, false},
		{"same head", func() {}, false, false},
		{"an add", func() { mustAdd(t, m, next("s2", 2)...) }, false, false},
		{"a forget", func() {
			plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{"x2"}})
			if err != nil || len(plan) != 1 {
				t.Fatalf("plan %v %v", plan, err)
			}
			before := statsFullCounts.Load()
			if _, err := m.Forget(ctx, plan, "test"); err != nil {
				t.Fatal(err)
			}
			// The forget counts every card again itself (statsFollow: the
			// kept state names no room of the forgotten exchange), so
			// Stats after it reads the kept state.
			if statsFullCounts.Load() == before {
				t.Fatal("a forget: the kept state was not counted again")
			}
		}, false, false},
		{"two adds", func() {
			rewind = git("rev-parse", "main")[:40]
			mustAdd(t, m, next("s1", 1)...)
			mustAdd(t, m, next("s3", 4)...)
		}, false, false},
		{"main rewound by git", func() { git("update-ref", "refs/heads/main", rewind) }, true, false},
		{"an add after", func() { mustAdd(t, m, next("s4", 2)...) }, false, false},
		{"state damaged", func() {
			p := m.cachePath(statsFile)
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x55
			os.WriteFile(p, b, 0o644)
		}, true, false},
		{"state of another version", func() {
			s := m.loadStatsState()
			s.Version++
			b, _ := s.encode()
			os.WriteFile(m.cachePath(statsFile), b, 0o644)
		}, true, false},
		{"an add, rooms first", func() { mustAdd(t, m, next("s5", 2)...) }, false, true},
		{"adds, rooms after each (the hook's way)", func() {
			for i := 0; i < 2; i++ {
				mustAdd(t, m, next("s7", 2)...)
				if _, err := m.Rooms(Filter{Project: "p"}); err != nil {
					t.Fatal(err)
				}
			}
			if s := m.loadStatsState(); s == nil || !s.Counted || len(s.Pending) != 4 {
				t.Fatalf("rooms kept %+v, want the 4 new exchanges pending, not counted", s)
			}
		}, false, false},
		{"no state, rooms first", dropState, true, true},
		{"no state, rooms, then an add", func() {
			dropState()
			if _, err := m.Rooms(Filter{}); err != nil {
				t.Fatal(err)
			}
			if s := m.loadStatsState(); s == nil || s.Counted {
				t.Fatalf("rooms kept %+v, want a state without token counts", s)
			}
			mustAdd(t, m, next("s6", 2)...)
		}, true, false},
	}
	for _, st := range steps {
		st.do()
		before := statsFullCounts.Load()
		if st.roomsFirst {
			checkRooms(t, m, st.name)
		}
		got, err := m.Stats()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if want := statsJSON(t, naiveStats(t, m)); statsJSON(t, got) != want {
			t.Fatalf("%s: stats\n%s\nwant\n%s", st.name, statsJSON(t, got), want)
		}
		if full := statsFullCounts.Load() > before; full != st.full {
			t.Errorf("%s: counted every card again = %v, want %v", st.name, full, st.full)
		}
		if s := m.loadStatsState(); s == nil || s.Head != git("rev-parse", "main")[:40] || !s.Counted {
			t.Errorf("%s: state not kept for main's head, or without its counts", st.name)
		}
		checkRooms(t, m, st.name)
	}
}

// checkRooms compares Rooms, unfiltered and by project, with the rooms of
// every card counted afresh.
func checkRooms(t *testing.T, m *Memory, step string) {
	t.Helper()
	es, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{}, {Project: "p"}, {Project: "q"}, {Project: "none"}} {
		got, err := m.Rooms(f)
		if err != nil {
			t.Fatal(err)
		}
		want := roomsIn(es, f)
		if jsonOf(t, got) != jsonOf(t, want) || len(want) == 0 && f.Project != "none" {
			t.Fatalf("%s: rooms %+v:\n%s\nwant\n%s", step, f, jsonOf(t, got), jsonOf(t, want))
		}
		n, ok, err := m.ProjectExchanges(f)
		want2 := 0
		for _, e := range es {
			if f.Match(e) {
				want2++
			}
		}
		if err != nil || !ok || n != want2 {
			t.Fatalf("%s: %d exchanges for %+v (%v %v), want %d", step, n, f, ok, err, want2)
		}
	}
}

// TestStatsExchangeStoredTwice: a sync that brings another machine's copy
// of an exchange both have sends Stats to the full count, and the copy
// that lost is not counted.
func TestStatsExchangeStoredTwice(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	remote := syncRemote(t)
	a, b := memoryOn(t, remote), memoryOn(t, remote)
	mustAdd(t, a, ex("a1", "s1", "2026-01-01T00:00:00Z", "fix the flaky retry test", "raised the timeout in retry_test.go"),
		ex("shared", "s9", "2026-01-03T00:00:00Z", "rotate the zebracorn key", "rotated zebracorn in vault"))
	mustAdd(t, b, ex("b1", "s2", "2026-01-02T00:00:00Z", "rename calcTax", "renamed calcTax to computeTax"),
		ex("shared", "s9", "2026-01-03T00:00:00Z", "rotate the zebracorn key", "rotated zebracorn in vault (again, with many more words to count)"))
	for _, m := range []*Memory{a, b} {
		if _, err := m.Stats(); err != nil {
			t.Fatal(err)
		}
	}
	mustSyncMem(t, a)
	mustSyncMem(t, b)
	mustSyncMem(t, a)
	for name, m := range map[string]*Memory{"a": a, "b": b} {
		got, err := m.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if want := statsJSON(t, naiveStats(t, m)); statsJSON(t, got) != want || got.Exchanges != 3 {
			t.Fatalf("%s: stats\n%s\nwant\n%s", name, statsJSON(t, got), want)
		}
	}
}

// TestStatsSeededByLegacyFiles: the token files of the previous version
// are used, not recounted (a million blobs), and removed once the state is
// kept.
func TestStatsSeededByLegacyFiles(t *testing.T) {
	m := newMemory(t)
	mustAdd(t, m, ex("a", "s1", "2026-01-02T00:00:00Z", "fix the flaky retry test in retry_test.go", "raised the timeout"),
		ex("b", "s1", "2026-01-01T00:00:00Z", "rename calcTax", "renamed calcTax to computeTax everywhere"))
	es, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	verbatim, cards := map[string]int{}, map[string]int{}
	for _, e := range es {
		verbatim[e.Exchange], cards[e.Commit] = 1000, 7 // not what counting gives
	}
	for name, c := range map[string]map[string]int{legacyVerbatimTokens: verbatim, legacyCardTokens: cards} {
		if err := writeGob(m.cachePath(name), c); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(m.cachePath(legacyStatsJSON), []byte(`{"version":1}`), 0o644)
	st, err := m.Stats()
	if err != nil || st.VerbatimTokens != 2000 || st.DistilledTokens != 14 {
		t.Fatalf("stats %+v %v: the legacy counts were not used", st, err)
	}
	for _, name := range []string{legacyVerbatimTokens, legacyCardTokens, legacyStatsJSON} {
		if _, err := os.Stat(m.cachePath(name)); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", name, err)
		}
	}
}

func TestStatsStateCodec(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &statsState{Version: statsCacheVersion, Head: plumbing.ZeroHash.String(),
		Stats: Stats{Exchanges: 2, Distillers: map[string]int{"h": 2}, Agents: map[string]int{}, First: &now, Last: &now},
		Rows:  []statRow{{1, 2, 3, 4}, {5, 6, 7, 8}}, Sessions: []uint64{9}, Projects: []uint64{}, Rooms: []uint64{10, 11}}
	b, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeStatsState(b)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprintf("%+v", got.Rows), fmt.Sprintf("%+v", s.Rows); a != b || len(got.Rooms) != 2 || got.Sessions[0] != 9 || got.Stats.Exchanges != 2 {
		t.Fatalf("decoded %+v", got)
	}
	for i := range b { // every truncation and every flipped byte is refused
		if _, err := decodeStatsState(b[:i]); err == nil {
			t.Fatalf("truncated at %d: decoded", i)
		}
		c := append([]byte(nil), b...)
		c[i] ^= 1
		if _, err := decodeStatsState(c); err == nil {
			t.Fatalf("byte %d flipped: decoded", i)
		}
	}
}

func TestUnionAndMergeRows(t *testing.T) {
	if got := union([]uint64{1, 3, 5}, []uint64{5, 2, 2, 9}); fmt.Sprint(got) != "[1 2 3 5 9]" {
		t.Errorf("union %v", got)
	}
	rows := mergeRows([]statRow{{ID: 1}, {ID: 4}}, []statRow{{ID: 9}, {ID: 2}})
	ids := make([]uint64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	if !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] < ids[j] }) || len(ids) != 4 {
		t.Errorf("merged %v", ids)
	}
}

func writeGob(path string, v any) error {
	return WriteFileAtomic(path, func(f *os.File) error { return gob.NewEncoder(f).Encode(v) })
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStatsCountedStateKept: a state without token counts (from rooms)
// does not replace a counted one of the same head.
func TestStatsCountedStateKept(t *testing.T) {
	m := newMemory(t)
	mustAdd(t, m, ex("a", "s1", "2026-01-02T00:00:00Z", "fix the flaky retry test in retry_test.go", "raised the timeout"))
	if _, err := m.Stats(); err != nil {
		t.Fatal(err)
	}
	head, _ := m.Repo.Head()
	uncounted := &statsState{Version: statsCacheVersion, Head: head.String(), Stats: *newStats()}
	m.saveStatsState(uncounted)
	if s := m.loadStatsState(); s == nil || !s.Counted {
		t.Fatalf("the counted state was replaced: %+v", s)
	}
}
