package memory

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

func TestCacheCodec(t *testing.T) {
	cf := entryCacheFile{Version: entryCacheVersion, Head: strings.Repeat("ab", 20), Entries: []Entry{
		{Commit: strings.Repeat("c", 40), Short: "ccccccc", Time: time.Date(2026, 3, 2, 9, 0, 0, 5, time.FixedZone("", 3600)),
			Exchange: "s/1", Session: "s", Project: "api", Agent: "codex", Core: "core ✓", Context: "ctx",
			Rooms: []string{"file:a"}, Files: []string{}, Distiller: "heuristic/1", Redacted: 2},
		{Commit: strings.Repeat("d", 40), Short: "ddddddd", Time: time.Unix(0, 0).UTC(), Rooms: []string{}, Files: []string{"a.go", "b.go"}},
	}}
	b := encodeEntryCache(cf)
	got, err := decodeEntryCache(b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", cf) {
		t.Fatalf("round trip:\n%+v\nwant\n%+v", got, cf)
	}
	// Every truncation and a flipped magic are corrupt, never a panic.
	for i := 0; i < len(b); i++ {
		if _, err := decodeEntryCache(b[:i]); err == nil {
			t.Fatalf("truncated at %d: no error", i)
		}
	}
	if _, err := decodeEntryCache(append([]byte("xmrc"), b[4:]...)); err == nil {
		t.Fatal("bad magic: no error")
	}
}

func FuzzDecodeEntryCache(f *testing.F) {
	f.Add(encodeEntryCache(entryCacheFile{Version: entryCacheVersion, Head: "h", Entries: []Entry{{Commit: strings.Repeat("c", 40)}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeEntryCache(b)
	})
}

func TestEntryCache(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	var exs []*exchange.Exchange
	for i := 0; i < 6; i++ {
		exs = append(exs, ex(fmt.Sprintf("e%d", i), "s", fmt.Sprintf("2026-01-0%dT00:00:00Z", i+1), fmt.Sprintf("task %d", i), "done"))
	}
	if _, err := m.Add(ctx, exs, AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	// What a full walk gives, with no cache.
	full := func() []*Entry {
		os.Remove(m.EntryCachePath())
		es, err := m.Entries()
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	same := func(got, want []*Entry) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%d cards, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i].Commit != want[i].Commit || got[i].Core != want[i].Core || !got[i].Time.Equal(want[i].Time) ||
				strings.Join(got[i].Rooms, ",") != strings.Join(want[i].Rooms, ",") {
				t.Fatalf("card %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	}
	want := full()
	st, err := os.Stat(m.EntryCachePath())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := m.Entries() // warm: read, not rewritten
	same(got, want)
	if st2, _ := os.Stat(m.EntryCachePath()); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("a warm read rewrote the cache")
	}
	// Main moved: only the new commit is walked, the result is whole.
	if _, err := m.Add(ctx, []*exchange.Exchange{ex("late", "s", "2026-02-01T00:00:00Z", "late work", "done")}, AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	got, _ = m.Entries()
	want = full()
	same(got, want)
	if got[0].Exchange != "late" {
		t.Errorf("newest card %s, want late", got[0].Exchange)
	}
	// Corrupt: rebuilt, never an error.
	for _, junk := range [][]byte{[]byte("junk"), {}} {
		if err := os.WriteFile(m.EntryCachePath(), junk, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err = m.Entries()
		if err != nil {
			t.Fatal(err)
		}
		same(got, want)
	}
	// A cache whose head is not in main's history: a full walk.
	cf, _ := loadEntryCache(m.EntryCachePath())
	cf.Head = strings.Repeat("ab", 20)
	cf.Entries = cf.Entries[:3]
	if err := saveEntryCache(m.EntryCachePath(), cf); err != nil {
		t.Fatal(err)
	}
	got, _ = m.Entries()
	same(got, want)
	// A cache of a history that left main but shares its first commits
	// (what a forget leaves): every card, the shared ones too.
	base, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "rev-parse", "main~3").Output()
	if err != nil {
		t.Fatal(err)
	}
	ct := exec.Command("git", "--git-dir", m.Repo.Dir(), "commit-tree", "-p", strings.TrimSpace(string(base)),
		"-m", "a rewritten history", strings.TrimSpace(string(base))+"^{tree}")
	ct.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	side, err := ct.Output()
	if err != nil {
		t.Fatal(err)
	}
	cf.Head = strings.TrimSpace(string(side))
	cf.Entries = cf.Entries[:1]
	if err := saveEntryCache(m.EntryCachePath(), cf); err != nil {
		t.Fatal(err)
	}
	got, _ = m.Entries()
	same(got, want)
}

// TestFirstEntriesOverStaleCache: after main moves, the first cards come
// from the new commits merged into the cache's prefix, in Entries' order
// (ties included), without rewriting the cache; a new copy of an exchange
// the cache has sends the caller to Entries.
func TestFirstEntriesOverStaleCache(t *testing.T) {
	m := newMemory(t)
	var exs []*exchange.Exchange
	for i := 0; i < 30; i++ {
		e := ex(fmt.Sprintf("old-%d", i), fmt.Sprintf("s%d", i%3), fmt.Sprintf("2026-01-%02dT10:00:00Z", 1+i%20),
			fmt.Sprintf("tune the heron cache %d", i), "done")
		e.Project = []string{"p", "q"}[i%2]
		exs = append(exs, e)
	}
	mustAdd(t, m, exs...)
	if _, err := m.Entries(); err != nil { // the cache at this head
		t.Fatal(err)
	}
	cached, _ := os.ReadFile(m.EntryCachePath())
	exs = nil
	for i := 0; i < 8; i++ {
		// Times among the old ones, the same as some of them, and newer.
		e := ex(fmt.Sprintf("new-%d", i), "s1", fmt.Sprintf("2026-01-%02dT10:00:00Z", 5+3*i), fmt.Sprintf("tune the heron pool %d", i), "done")
		e.Project = []string{"p", "q"}[i%2]
		exs = append(exs, e)
	}
	mustAdd(t, m, exs...)
	type got struct {
		f Filter
		n int
		e []*Entry
	}
	var gots []got
	defer func(p int) { entryPrefix = p }(entryPrefix)
	for _, prefix := range []int{16, 256 << 10} { // a prefix shorter than the header or its count, and the whole
		entryPrefix = prefix
		for _, f := range []Filter{{}, {Project: "p"}, {Project: "q", Session: "s1"}, {Project: "none"}} {
			for _, n := range []int{1, 5, 20, 100} {
				out, ok := m.firstEntries(f, n)
				if !ok {
					t.Fatalf("prefix %d, %+v n=%d: not answered from the stale cache", prefix, f, n)
				}
				gots = append(gots, got{f, n, out})
			}
		}
	}
	if now, _ := os.ReadFile(m.EntryCachePath()); string(now) != string(cached) {
		t.Fatal("the cache was rewritten")
	}
	all, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gots {
		var want []string
		for _, e := range all {
			if g.f.Match(e) && len(want) < g.n {
				want = append(want, e.Commit)
			}
		}
		var have []string
		for _, e := range g.e {
			have = append(have, e.Commit)
		}
		if strings.Join(have, ",") != strings.Join(want, ",") {
			t.Errorf("%+v n=%d:\n%v\nwant\n%v", g.f, g.n, have, want)
		}
	}
}

// TestFirstEntriesStaleCacheSecondCopy: a sync that brings another
// machine's copy of an exchange the cache holds is not merged by
// firstEntries; Log gives what Entries gives.
func TestFirstEntriesStaleCacheSecondCopy(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	remote := syncRemote(t)
	a, b := memoryOn(t, remote), memoryOn(t, remote)
	mustAdd(t, a, ex("shared", "s9", "2026-01-03T00:00:00Z", "rotate the zebracorn key", "rotated zebracorn in vault"))
	mustAdd(t, b, ex("b1", "s2", "2026-01-02T00:00:00Z", "rename calcTax", "renamed calcTax to computeTax"),
		ex("shared", "s9", "2026-01-03T00:00:00Z", "rotate the zebracorn key", "rotated zebracorn in vault (again)"))
	mustSyncMem(t, b)
	if _, err := a.Entries(); err != nil {
		t.Fatal(err)
	}
	cached, _ := os.ReadFile(a.EntryCachePath())
	mustSyncMem(t, a) // brings b1 and b's copy of shared
	// The cache as it was before the sync: stale, and holding shared.
	if err := os.WriteFile(a.EntryCachePath(), cached, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.firstEntries(Filter{}, 10); ok {
		t.Fatal("firstEntries merged a second copy of an exchange the cache holds")
	}
	got, err := a.Log(Filter{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := a.Entries()
	var have, want []string
	for _, e := range got {
		have = append(have, e.Commit)
	}
	for _, e := range all {
		want = append(want, e.Commit)
	}
	if strings.Join(have, ",") != strings.Join(want, ",") || len(want) != 2 {
		t.Fatalf("log %v, want %v", have, want)
	}
}
