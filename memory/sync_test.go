package memory

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

func syncGit(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func syncRemote(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	syncGit(t, "init", "-q", "--bare", "-b", "main", dir)
	return dir
}

func memoryOn(t *testing.T, remote string) *Memory {
	t.Helper()
	m, _, err := Init(filepath.Join(t.TempDir(), "mem.git"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddRemote("origin", remote); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustAdd(t *testing.T, m *Memory, exs ...*exchange.Exchange) {
	t.Helper()
	if _, err := m.Add(context.Background(), exs, AddOptions{}); err != nil {
		t.Fatal(err)
	}
}

func mustSyncMem(t *testing.T, m *Memory) SyncReport {
	t.Helper()
	rep, err := m.Sync(context.Background(), "")
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if rep.IndexErr != "" {
		t.Fatalf("index after sync: %s", rep.IndexErr)
	}
	return rep
}

func logIDs(t *testing.T, m *Memory) []string {
	t.Helper()
	es, err := m.Log(Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Exchange)
	}
	sort.Strings(out)
	return out
}

func searchIDs(t *testing.T, m *Memory, q string) []string {
	t.Helper()
	rs, _, err := m.Search(context.Background(), SearchQuery{Text: q, K: 50, Mode: "verbatim-bm25"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.Exchange)
		out = append(out, r.Collapsed...)
	}
	sort.Strings(out)
	return out
}

func TestSyncSameExchangeOnBothMachinesShowsOnce(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	remote := syncRemote(t)
	a, b := memoryOn(t, remote), memoryOn(t, remote)
	mustAdd(t, a, ex("a1", "s1", "2026-01-01T00:00:00Z", "fix the flaky retry test", "raised the timeout in retry_test.go"),
		ex("shared", "s9", "2026-01-03T00:00:00Z", "rotate the zebracorn key", "rotated zebracorn in vault"))
	mustAdd(t, b, ex("b1", "s2", "2026-01-02T00:00:00Z", "rename calcTax", "renamed calcTax to computeTax"),
		// The same id, stored on the other machine with other bytes.
		ex("shared", "s9", "2026-01-03T00:00:00Z", "rotate the zebracorn key", "rotated zebracorn in vault (again)"))
	if rep := mustSyncMem(t, a); rep.Pushed != 2 {
		t.Fatalf("a: %+v", rep)
	}
	rep := mustSyncMem(t, b)
	if rep.Fetched != 2 || rep.Merged != 1 || rep.MergeCommit == "" || rep.Pushed != 2 {
		t.Fatalf("b: %+v", rep)
	}
	if rep := mustSyncMem(t, a); !rep.FastForward || rep.Merged != 1 || rep.Indexed == 0 {
		t.Fatalf("a again: %+v", rep)
	}
	want := "a1,b1,shared"
	for _, m := range []*Memory{a, b} {
		if got := strings.Join(logIDs(t, m), ","); got != want {
			t.Fatalf("log: %s, want %s", got, want)
		}
		st, err := m.Stats()
		if err != nil || st.Exchanges != 3 {
			t.Fatalf("stats: %+v %v", st, err)
		}
		if got := searchIDs(t, m, "zebracorn"); strings.Join(got, ",") != "shared" {
			t.Fatalf("search: %v", got)
		}
		if got := searchIDs(t, m, "calcTax"); len(got) != 1 || got[0] != "b1" {
			t.Fatalf("search calcTax: %v", got)
		}
	}
	// Both keep the same blob for the shared id.
	_, ba, _ := a.Verbatim("shared")
	_, bb, _ := b.Verbatim("shared")
	if string(ba) != string(bb) {
		t.Fatalf("the shared exchange differs:\n%s\n%s", ba, bb)
	}
}

// After main moves with plain git (a fetch into main, a bare clone), the
// indexes catch up from the new commits on first use, merges included.
func TestIndexCatchesUpAfterPlainGitMovesMain(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	remote := syncRemote(t)
	a, b := memoryOn(t, remote), memoryOn(t, remote)
	mustAdd(t, a, ex("a1", "s1", "2026-01-01T00:00:00Z", "tune the quokka cache", "set quokka ttl to 90s"))
	mustSyncMem(t, a)
	// c is a plain bare clone: a working memory, indexed on first use.
	cdir := filepath.Join(t.TempDir(), "clone.git")
	syncGit(t, "clone", "-q", "--bare", remote, cdir)
	c, err := Open(cdir)
	if err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, c, "quokka"); strings.Join(got, ",") != "a1" {
		t.Fatalf("clone search: %v", got)
	}
	// Diverged histories meet in a merge on the remote.
	mustAdd(t, a, ex("a2", "s1", "2026-01-02T00:00:00Z", "the walrus migration failed", "walrus column was null"))
	mustAdd(t, b, ex("b1", "s2", "2026-01-03T00:00:00Z", "add the narwhal endpoint", "narwhal handler in api.go"))
	mustSyncMem(t, a)
	if rep := mustSyncMem(t, b); rep.MergeCommit == "" {
		t.Fatalf("want a merge: %+v", rep)
	}
	// The user moves c's main with plain git.
	syncGit(t, "--git-dir", cdir, "fetch", "-q", "origin", "main:main")
	for q, want := range map[string]string{"walrus": "a2", "narwhal": "b1", "quokka": "a1"} {
		if got := searchIDs(t, c, q); strings.Join(got, ",") != want {
			t.Fatalf("search %s after git fetch: %v", q, got)
		}
	}
	rep, err := c.UpdateIndex(context.Background())
	if err != nil || rep.Docs != 3 || rep.Rebuilt {
		t.Fatalf("index: %+v %v", rep, err)
	}
	if got := strings.Join(logIDs(t, c), ","); got != "a1,a2,b1" {
		t.Fatalf("log: %s", got)
	}
}

func TestSyncWithoutRemoteNamesTheFix(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	m, _, err := Init(filepath.Join(t.TempDir(), "mem.git"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Sync(context.Background(), "")
	if err == nil || !strings.Contains(err.Error(), "git mem remote add origin") {
		t.Fatalf("want a hint, got %v", err)
	}
}

// TestSyncLeavesIndexAtMain: the index, caught up beside the push, ends
// at main after every kind of sync — a push only, a union merge that is
// pushed back, a fast-forward — and finds what the other machine wrote.
func TestSyncLeavesIndexAtMain(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	remote := syncRemote(t)
	a, b := memoryOn(t, remote), memoryOn(t, remote)
	mustAdd(t, a, ex("a1", "s1", "2026-01-01T00:00:00Z", "tune the quuxifier cache", "quuxifier cache at 64 MB"))
	mustAdd(t, b, ex("b1", "s2", "2026-01-02T00:00:00Z", "port the frobnitz parser", "frobnitz parser ported"))
	for _, step := range []struct {
		name   string
		m      *Memory
		check  func(SyncReport) bool
		search string
		want   string
	}{
		{"a pushes", a, func(r SyncReport) bool { return r.Pushed == 1 && r.Fetched == 0 }, "quuxifier", "a1"},
		{"b merges and pushes", b, func(r SyncReport) bool { return r.MergeCommit != "" && r.Pushed == 1 && r.Indexed > 0 }, "quuxifier", "a1"},
		{"a fast-forwards", a, func(r SyncReport) bool { return r.FastForward && r.Indexed > 0 }, "frobnitz", "b1"},
	} {
		rep := mustSyncMem(t, step.m)
		if !step.check(rep) {
			t.Fatalf("%s: %+v", step.name, rep)
		}
		st, err := step.m.Status()
		if err != nil {
			t.Fatal(err)
		}
		if !st.UpToDate || st.IndexedAt != st.Head || st.Head != rep.Head {
			t.Fatalf("%s: index at %s, main at %s (sync said %s), up to date %v", step.name, st.IndexedAt, st.Head, rep.Head, st.UpToDate)
		}
		if got := strings.Join(searchIDs(t, step.m, step.search), ","); got != step.want {
			t.Fatalf("%s: search %q: %s, want %s", step.name, step.search, got, step.want)
		}
	}
	for _, dir := range []string{a.Repo.Dir(), b.Repo.Dir(), remote} {
		fsckStrict(t, dir)
	}
}

// A sync that does not move main (a push alone, nothing to do) reads only
// the index's manifest when the index is at main (indexAtMain); when it is
// not (an add that left indexing to later, a damaged index), the sync
// still brings it to main, as before.
func TestSyncThatLeavesMainIndexesWhatIsBehind(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, c := range []struct {
		name        string
		noIndex     bool // the add leaves the index behind main
		damage      bool // the index's manifest is broken after the add
		wantIndexed int
	}{
		{"index at main, push alone", false, false, 0},
		{"index behind main, push alone", true, false, 1},
		{"index damaged, push alone", false, true, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			remote := syncRemote(t)
			a := memoryOn(t, remote)
			mustAdd(t, a, ex("a1", "s1", "2026-01-01T00:00:00Z", "tune the quuxifier cache", "quuxifier cache at 64 MB"))
			_, err := a.Add(context.Background(), []*exchange.Exchange{ex("a2", "s1", "2026-01-02T00:00:00Z", "port the frobnitz parser", "frobnitz parser ported")}, AddOptions{NoIndex: c.noIndex})
			if err != nil {
				t.Fatal(err)
			}
			if at := a.indexAtMain(); at == c.noIndex {
				t.Fatalf("index at main after the adds: %v", at)
			}
			if c.damage {
				gen := a.currentGen()
				if err := os.WriteFile(filepath.Join(gen, "manifest.json"), []byte("{"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep := mustSyncMem(t, a)
			if rep.Pushed != 2 || rep.Fetched != 0 || rep.Head == "" {
				t.Fatalf("sync: %+v", rep)
			}
			if c.wantIndexed == 0 && rep.Indexed != 0 {
				t.Fatalf("indexed %d with the index at main", rep.Indexed)
			}
			if c.wantIndexed > 0 && rep.Indexed == 0 {
				t.Fatalf("nothing indexed, want the index brought to main: %+v", rep)
			}
			st, err := a.Status()
			if err != nil {
				t.Fatal(err)
			}
			if !st.UpToDate || st.IndexedAt != st.Head || st.Head != rep.Head {
				t.Fatalf("index at %s, main at %s, up to date %v", st.IndexedAt, st.Head, st.UpToDate)
			}
			if !a.indexAtMain() {
				t.Fatal("indexAtMain false after the sync")
			}
			if got := strings.Join(searchIDs(t, a, "frobnitz"), ","); got != "a2" {
				t.Fatalf("search: %s", got)
			}
			// Nothing to do: up to date, nothing indexed.
			if rep := mustSyncMem(t, a); !rep.UpToDate || rep.Indexed != 0 {
				t.Fatalf("second sync: %+v", rep)
			}
		})
	}
}

// TestSyncKeepsTheReplyOverItsPromptAlone: one machine stored a prompt
// alone under an id (its SessionEnd hook ran before the reply), another the
// whole exchange under the same id. Whichever syncs first, both keep the
// whole exchange at the id: by the blob id alone the prompt won about half
// the time, and the reply left main and search on both.
func TestSyncKeepsTheReplyOverItsPromptAlone(t *testing.T) {
	for i, c := range []struct{ user, reply string }{
		{"why does the walrus deploy hang", "an advisory lock held by the nightly cron"},
		{"why is the heron build slow", "the linker runs twice because of a stale cache"},
		{"rotate the quokka logs", "use logrotate with a weekly schedule"},
		{"the kiwi tests flake on ci", "a shared temp dir; give each test its own"},
	} {
		for _, aFirst := range []bool{true, false} {
			remote := syncRemote(t)
			a, b := memoryOn(t, remote), memoryOn(t, remote)
			mustAdd(t, a, exTurns("x", c.user, ""))
			mustAdd(t, b, exTurns("x", c.user, c.reply))
			first, second := a, b
			if !aFirst {
				first, second = b, a
			}
			mustSyncMem(t, first)
			mustSyncMem(t, second)
			mustSyncMem(t, first)
			for name, m := range map[string]*Memory{"alone": a, "whole": b} {
				_, blob, err := m.Show("x")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(blob), c.reply) {
					t.Errorf("case %d (a first %v): the machine that had the %s exchange holds at x %s", i, aFirst, name, blob)
				}
				fsckStrict(t, m.Repo.Dir())
			}
		}
	}
	// Two other exchanges under one id: one wins, the same on both.
	remote := syncRemote(t)
	a, b := memoryOn(t, remote), memoryOn(t, remote)
	mustAdd(t, a, exTurns("y", "rename the heron service", "renamed"))
	mustAdd(t, b, exTurns("y", "drop the walrus table", "dropped"))
	mustSyncMem(t, a)
	mustSyncMem(t, b)
	mustSyncMem(t, a)
	_, ba, _ := a.Show("y")
	_, bb, _ := b.Show("y")
	if string(ba) != string(bb) {
		t.Errorf("the machines disagree at y:\n%s\n%s", ba, bb)
	}
}
