package memory

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// allObjects is every object the repo holds, loose or packed, reachable or
// not, decompressed.
func allObjects(t *testing.T, dir string) []byte {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "cat-file", "--batch-all-objects", "--batch", "--unordered").Output()
	if err != nil {
		t.Fatalf("cat-file: %v", err)
	}
	return out
}

// plainFiles is every file under the git dir that is not a git object
// (indexes, caches, queue, logs, refs), concatenated.
func plainFiles(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, string(filepath.Separator)+"objects"+string(filepath.Separator)) {
			return nil
		}
		b, _ := os.ReadFile(p)
		all = append(all, b...)
		return nil
	})
	return all
}

func TestForgetRemovesForGood(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	const marker = "quokka-zanzibar-7731"
	var exs []*exchange.Exchange
	for i := 0; i < 40; i++ {
		exs = append(exs, ex(fmt.Sprintf("keep-%d", i), "s1", fmt.Sprintf("2026-01-%02dT10:00:00Z", 1+i%28),
			fmt.Sprintf("ordinary heron work %d", i), "done"))
	}
	mustAdd(t, m, exs...) // one pack
	mustAdd(t, m, ex("gone", "s2", "2026-02-01T10:00:00Z", "the "+marker+" value leaked here", "noted "+marker))
	mustAdd(t, m, ex("after", "s2", "2026-02-02T10:00:00Z", "later heron work", "done"))
	if err := m.Repo.Repack(); err != nil { // the forgotten blob now sits in a pack
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, e := range mustLog(t, m) {
		before[e.Exchange] = exchange.BlobPath(e.Exchange)
	}
	if !bytes.Contains(allObjects(t, m.Repo.Dir()), []byte(marker)) {
		t.Fatal("the marker is not stored to begin with")
	}
	plan, err := m.ForgetPlan(ctx, ForgetSelect{Query: marker, K: 1})
	if err != nil || len(plan) != 1 || plan[0].Exchange != "gone" {
		t.Fatalf("plan: %v %v", plan, err)
	}
	rep, err := m.Forget(ctx, plan, "leaked a value")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Forgotten) != 1 || rep.Before == rep.After {
		t.Fatalf("report %+v", rep)
	}
	if rep.Index.Rebuilt {
		t.Errorf("the index was rebuilt (%s), not followed in place", rep.Index.Reason)
	}
	if bytes.Contains(allObjects(t, m.Repo.Dir()), []byte(marker)) {
		t.Fatal("an object still holds the forgotten text")
	}
	if bytes.Contains(plainFiles(t, m.Repo.Dir()), []byte(marker)) {
		t.Fatal("a file under the git dir still holds the forgotten text")
	}
	// Nor a word of it (the index keeps words, not text).
	for _, w := range []string{"quokka", "zanzibar", "akkouq", "rabiznaz"} {
		if bytes.Contains(plainFiles(t, m.Repo.Dir()), []byte(w)) {
			t.Fatalf("a file under the git dir still holds %q", w)
		}
	}
	if got := searchIDs(t, m, marker); len(got) != 0 {
		t.Fatalf("search still finds it: %v", got)
	}
	after := mustLog(t, m)
	if len(after) != len(before)-1 {
		t.Fatalf("%d exchanges after, %d before", len(after), len(before))
	}
	for _, e := range after {
		if _, ok := before[e.Exchange]; !ok || e.Exchange == "gone" {
			t.Fatalf("unexpected exchange %s", e.Exchange)
		}
		if _, _, err := m.Verbatim(e.Exchange); err != nil {
			t.Fatalf("exchange %s unreadable after forget: %v", e.Exchange, err)
		}
	}
	mustCheck(t, m)
	fsckStrict(t, m.Repo.Dir())
	// The card cache followed the rewrite as a full walk reads it.
	followed, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(m.EntryCachePath()); err != nil {
		t.Fatal(err)
	}
	walked, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(followed) != len(walked) {
		t.Fatalf("cache %d cards, walk %d", len(followed), len(walked))
	}
	for i := range walked {
		if followed[i].Exchange != walked[i].Exchange || followed[i].Commit != walked[i].Commit {
			t.Fatalf("card %d: cache %s@%s, walk %s@%s", i, followed[i].Exchange, followed[i].Commit, walked[i].Exchange, walked[i].Commit)
		}
	}
	// The index followed in place ranks as a rebuilt one does.
	inPlace := searchIDs(t, m, "heron work")
	if _, err := m.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	if rebuilt := searchIDs(t, m, "heron work"); strings.Join(rebuilt, ",") != strings.Join(inPlace, ",") {
		t.Errorf("in place %v, rebuilt %v", inPlace, rebuilt)
	}
	// Never stored again.
	r, err := m.Add(ctx, []*exchange.Exchange{ex("gone", "s2", "2026-02-01T10:00:00Z", "the "+marker+" value leaked here", "noted "+marker)}, AddOptions{})
	if err != nil || r.Added != 0 || r.Forgotten != 1 {
		t.Fatalf("re-add: %+v %v", r, err)
	}
	ts, err := m.Repo.Tombstones()
	if err != nil || len(ts) != 1 {
		t.Fatalf("tombstones %v %v", ts, err)
	}
	for _, tomb := range ts {
		if tomb.Exchange != "gone" || tomb.Reason != "leaked a value" || len(tomb.Blob) != 40 {
			t.Fatalf("tombstone %+v", tomb)
		}
	}
}

// Appends running during a forget all land, and the forgotten exchange
// stays gone.
func TestAppendsDuringForgetLandAll(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	var exs []*exchange.Exchange
	for i := 0; i < 200; i++ {
		exs = append(exs, ex(fmt.Sprintf("k%d", i), "s", "2026-01-01T10:00:00Z", fmt.Sprintf("heron %d", i), "ok"))
	}
	mustAdd(t, m, exs...)
	mustAdd(t, m, ex("gone", "s", "2026-01-02T10:00:00Z", "forget the walrus-8812 thing", "ok"))
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		w, err := Open(m.Repo.Dir())
		if err != nil {
			errs <- err
			return
		}
		for i := 0; i < 30; i++ {
			if _, err := w.Add(ctx, []*exchange.Exchange{ex(fmt.Sprintf("new%d", i), "t", "2026-01-03T10:00:00Z", fmt.Sprintf("added meanwhile %d", i), "ok")}, AddOptions{NoIndex: true}); err != nil {
				errs <- err
				return
			}
		}
	}()
	plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{"gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forget(ctx, plan, ""); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range mustLog(t, m) {
		got[e.Exchange] = true
	}
	if got["gone"] || len(got) != 230 {
		t.Fatalf("%d exchanges, gone=%v", len(got), got["gone"])
	}
	if bytes.Contains(allObjects(t, m.Repo.Dir()), []byte("walrus-8812")) {
		t.Fatal("forgotten text survived")
	}
	if _, err := m.UpdateIndex(ctx); err != nil { // the adds above left indexing for later
		t.Fatal(err)
	}
	mustCheck(t, m)
	fsckStrict(t, m.Repo.Dir())
}

func mustLog(t *testing.T, m *Memory) []*Entry {
	t.Helper()
	es, err := m.Log(Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// Until sync carries forgets, a sync after a forget merges nothing (which
// would bring the forgotten exchange back) and says why and what to do.
// A forget reaches the other machine through sync: B drops the same
// exchange from its own main (its new exchanges kept), the remote's main
// is replaced by one without it, and no reachable object anywhere holds it.
func TestSyncCarriesForgets(t *testing.T) {
	remote := syncRemote(t)
	a, b := memoryOn(t, remote), memoryOn(t, remote)
	ctx := context.Background()
	const secret = "ibis-4410-zebu"
	mustAdd(t, a, ex("a", "s", "2026-01-01T10:00:00Z", "keep heron", "ok"), ex("b", "s", "2026-01-02T10:00:00Z", "forget the "+secret+" value", "ok"))
	mustSyncMem(t, a)
	mustSyncMem(t, b)
	mustAdd(t, b, ex("c", "s2", "2026-01-03T10:00:00Z", "b's own walrus", "ok"))
	plan, err := a.ForgetPlan(ctx, ForgetSelect{Refs: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget(ctx, plan, "a secret"); err != nil {
		t.Fatal(err)
	}
	ra := mustSyncMem(t, a) // replaces the remote's main
	if !ra.RemoteRewritten {
		t.Fatalf("a's sync did not replace the remote's main: %+v", ra)
	}
	rb := mustSyncMem(t, b) // learns the tombstone, drops b, merges, pushes c
	if rb.TombstonesLearned != 1 || rb.Forgotten != 1 {
		t.Fatalf("b's sync: learned %d, forgot %d", rb.TombstonesLearned, rb.Forgotten)
	}
	mustSyncMem(t, a)
	for name, m := range map[string]*Memory{"a": a, "b": b} {
		if got := sortedIDs(t, m); got != "a,c" {
			t.Errorf("%s log: %s", name, got)
		}
		if bytes.Contains(allObjects(t, m.Repo.Dir()), []byte(secret)) || bytes.Contains(plainFiles(t, m.Repo.Dir()), []byte(secret)) {
			t.Errorf("%s still holds the forgotten text", name)
		}
		rs, _, err := m.Search(ctx, SearchQuery{Text: secret, K: 5})
		if err != nil || len(rs) != 0 {
			t.Errorf("%s search finds the forgotten exchange: %v %v", name, rs, err)
		}
		fsckStrict(t, m.Repo.Dir())
	}
	reach, err := exec.Command("sh", "-c", "git --git-dir "+remote+" rev-list --all --objects | cut -d' ' -f1 | git --git-dir "+remote+" cat-file --batch").Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(reach, []byte(secret)) {
		t.Error("an object the remote's refs reach holds the forgotten text")
	}
	// Adding it again on b stores nothing.
	rep, err := b.Add(ctx, []*exchange.Exchange{ex("b", "s", "2026-01-02T10:00:00Z", "forget the "+secret+" value", "ok")}, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedIDs(t, b); got != "a,c" {
		t.Errorf("re-add on b: %s (%+v)", got, rep)
	}
}

// The reason of a forget is redacted: it is stored in the tombstone, which
// sync pushes and no purge removes, and a person may name what leaked.
func TestForgetReasonRedacted(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	secret := "ghp_" + strings.Repeat("Q7w6E5r4T3", 4)[:36]
	mustAdd(t, m, ex("a", "s", "2026-01-01T10:00:00Z", "keep heron", "ok"), ex("b", "s", "2026-01-02T10:00:00Z", "the token went here", "ok"))
	plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forget(ctx, plan, "it held "+secret+" and password=hunter2hunter2"); err != nil {
		t.Fatal(err)
	}
	all := allObjects(t, m.Repo.Dir())
	if bytes.Contains(all, []byte(secret)) || bytes.Contains(all, []byte("hunter2hunter2")) || bytes.Contains(plainFiles(t, m.Repo.Dir()), []byte(secret)) {
		t.Fatal("the forget's reason is stored with its secrets")
	}
	ts, err := m.Repo.Tombstones()
	if err != nil || len(ts) != 1 {
		t.Fatalf("tombstones: %v %v", ts, err)
	}
	for _, tb := range ts {
		if !strings.Contains(tb.Reason, "it held [REDACTED:") {
			t.Fatalf("reason: %q", tb.Reason)
		}
	}
	fsckStrict(t, m.Repo.Dir())
}

// The kept stats state (mem/cache/stats.bin) follows a forget: its room
// tallies named the forgotten exchange's rooms (here the file it touched)
// until the next stats, rooms or context counted again.
func TestForgetLeavesNoRoomInTheStats(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	const name = "zanzibarquokka"
	gone := ex("gone", "s", "2026-01-02T10:00:00Z", "fix the module", "edited src/"+name+".go")
	mustAdd(t, m, ex("keep", "s", "2026-01-01T10:00:00Z", "keep heron", "ok"), gone)
	st, err := m.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(plainFiles(t, m.Repo.Dir()), []byte(name)) {
		t.Fatal("no file names the room: the test proves nothing")
	}
	plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{"gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forget(ctx, plan, ""); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plainFiles(t, m.Repo.Dir()), []byte(name)) {
		t.Error("after the forget a file under the git dir still names the forgotten exchange's room")
	}
	after, err := m.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if after.Exchanges != st.Exchanges-1 || after.Rooms >= st.Rooms {
		t.Errorf("stats after the forget: %+v (before %+v)", after, st)
	}
	fsckStrict(t, m.Repo.Dir())
}

// A sync that learns a tombstone leaves nothing of the forgotten exchange
// on disk when it returns: its card left the card cache too. The cache
// kept it (mem/cache/entries.bin, the card's text) until the next log,
// show or stats rewrote it, and a machine that only syncs never does.
func TestSyncThatLearnsAForgetLeavesNoCard(t *testing.T) {
	remote := syncRemote(t)
	a, b := memoryOn(t, remote), memoryOn(t, remote)
	ctx := context.Background()
	const secret = "ibis-4410-zebu"
	mustAdd(t, a, ex("a", "s", "2026-01-01T10:00:00Z", "keep heron", "ok"), ex("b", "s", "2026-01-02T10:00:00Z", "forget the "+secret+" value", "edited src/ibiszebu.go"))
	mustSyncMem(t, a)
	mustSyncMem(t, b)
	if got := sortedIDs(t, b); got != "a,b" { // b's card cache holds both
		t.Fatalf("b before: %s", got)
	}
	if _, err := b.Stats(); err != nil { // and its stats the room file:ibiszebu
		t.Fatal(err)
	}
	if !bytes.Contains(plainFiles(t, b.Repo.Dir()), []byte(secret)) {
		t.Fatal("b's card cache does not hold the card: the test proves nothing")
	}
	plan, err := a.ForgetPlan(ctx, ForgetSelect{Refs: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget(ctx, plan, ""); err != nil {
		t.Fatal(err)
	}
	mustSyncMem(t, a)
	if rb := mustSyncMem(t, b); rb.Forgotten != 1 {
		t.Fatalf("b's sync forgot %d", rb.Forgotten)
	}
	if files := plainFiles(t, b.Repo.Dir()); bytes.Contains(files, []byte(secret)) || bytes.Contains(files, []byte("ibiszebu")) {
		t.Error("after the sync that learned the tombstone, a file of b still holds the forgotten text or room")
	}
	if bytes.Contains(allObjects(t, b.Repo.Dir()), []byte(secret)) {
		t.Error("an object of b still holds the forgotten text")
	}
	if got := sortedIDs(t, b); got != "a" {
		t.Errorf("b after: %s", got)
	}
	fsckStrict(t, a.Repo.Dir())
	fsckStrict(t, b.Repo.Dir())
}

// A rewrite of the remote that no tombstone explains is still refused.
func TestSyncRefusesUnexplainedRewrite(t *testing.T) {
	remote := syncRemote(t)
	a := memoryOn(t, remote)
	mustAdd(t, a, ex("a", "s", "2026-01-01T10:00:00Z", "keep heron", "ok"), ex("b", "s", "2026-01-02T10:00:00Z", "second", "ok"))
	mustSyncMem(t, a)
	// Someone rewinds the remote's main by hand.
	syncGit(t, "--git-dir", remote, "update-ref", "refs/heads/main", "refs/heads/main~1")
	_, err := a.Sync(context.Background(), "")
	if err == nil || !strings.Contains(err.Error(), "no tombstone explains it") {
		t.Fatalf("sync over a rewound remote: %v", err)
	}
}

func sortedIDs(t *testing.T, m *Memory) string {
	t.Helper()
	ids := logIDs(t, m)
	sort.Strings(ids)
	return strings.Join(ids, ",")
}
