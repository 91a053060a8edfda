package memory

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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
	if bytes.Contains(allObjects(t, m.Repo.Dir()), []byte(marker)) {
		t.Fatal("an object still holds the forgotten text")
	}
	if bytes.Contains(plainFiles(t, m.Repo.Dir()), []byte(marker)) {
		t.Fatal("a file under the git dir still holds the forgotten text")
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
func TestSyncAfterForgetRefusesAndSaysWhy(t *testing.T) {
	remote := syncRemote(t)
	m := memoryOn(t, remote)
	ctx := context.Background()
	mustAdd(t, m, ex("a", "s", "2026-01-01T10:00:00Z", "keep heron", "ok"), ex("b", "s", "2026-01-02T10:00:00Z", "forget the ibis-4410 value", "ok"))
	mustSyncMem(t, m)
	plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forget(ctx, plan, ""); err != nil {
		t.Fatal(err)
	}
	_, err = m.Sync(ctx, "")
	if err == nil || !strings.Contains(err.Error(), "this memory forgot") || !strings.Contains(err.Error(), "force-with-lease") {
		t.Fatalf("sync after forget: %v", err)
	}
	if got := logIDs(t, m); strings.Join(got, ",") != "a" {
		t.Fatalf("after the refused sync: %v", got)
	}
	if bytes.Contains(allObjects(t, m.Repo.Dir()), []byte("ibis-4410")) {
		t.Fatal("the refused sync brought the forgotten text back")
	}
}
