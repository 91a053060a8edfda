package memory

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/packtest"
)

// brokenByOldForget makes the state a forget before main e544dbc left: a
// pack main needs whose header counts one object more than its .idx (git
// refuses it), the forget pending, the forgotten exchange's blob still on
// disk. The marker is in that blob only.
func brokenByOldForget(t *testing.T, marker string) *Memory {
	t.Helper()
	m := newMemory(t)
	ctx := context.Background()
	var exs []*exchange.Exchange
	for i := 0; i < 40; i++ {
		exs = append(exs, ex(fmt.Sprintf("keep-%d", i), "s1", fmt.Sprintf("2026-01-%02dT10:00:00Z", 1+i%28),
			fmt.Sprintf("ordinary heron work %d", i), "done"))
	}
	mustAdd(t, m, exs...)
	mustAdd(t, m, ex("gone", "s2", "2026-02-01T10:00:00Z", "the "+marker+" value leaked here", "noted "+marker))
	mustAdd(t, m, ex("after", "s2", "2026-02-02T10:00:00Z", "later heron work", "done"))
	if err := m.Repo.Repack(); err != nil {
		t.Fatal(err)
	}
	// The packs holding the blob, kept aside.
	packDir := filepath.Join(m.Repo.Dir(), "objects", "pack")
	saved := map[string][]byte{}
	ents, _ := os.ReadDir(packDir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(packDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		saved[e.Name()] = b
	}
	plan, err := m.ForgetPlan(ctx, ForgetSelect{Query: marker, K: 1})
	if err != nil || len(plan) != 1 || plan[0].Exchange != "gone" {
		t.Fatalf("plan: %v %v", plan, err)
	}
	if _, err := m.Forget(ctx, plan, "leaked"); err != nil {
		t.Fatal(err)
	}
	main, err := packtest.Newest(m.Repo.Dir()) // the purge's pack: main's objects
	if err != nil {
		t.Fatal(err)
	}
	if _, err := packtest.Duplicate(main); err != nil {
		t.Fatal(err)
	}
	for name, b := range saved { // the forgotten blob back, as the failed purge left it
		if err := os.WriteFile(filepath.Join(packDir, name), b, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(m.Repo.Dir(), "mem", "forget.pending"), []byte("2026-12-07T20:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(m.Repo.Dir()) // as the next command opens it
	if err != nil {
		t.Fatal(err)
	}
	return m2
}

// A memory an old forget broke: check reports the pack (repairable);
// check --repair rewrites it first, then finishes the forget: fsck
// --strict clean, every exchange of main readable, the forgotten blob
// gone, a second check clean.
func TestCheckMendsAPackAnOldForgetBroke(t *testing.T) {
	const marker = "wombat-tasmania-4417"
	m := brokenByOldForget(t, marker)
	ctx := context.Background()
	blob := forgottenBlob(t, m)
	if !hasObject(m, blob) {
		t.Fatal("the forgotten blob is not on disk to begin with")
	}
	rep, err := m.Check(ctx, false)
	if err == nil {
		t.Fatalf("check found nothing: %+v", rep)
	}
	var found, pending bool
	for _, p := range rep.Problems {
		switch {
		case p.Area == "repo" && strings.Contains(p.What, "its header counts") && strings.Contains(p.What, ".pack"):
			found = p.Repairable
		case p.Area == "forget":
			pending = p.Repairable
		}
	}
	if !found || !pending {
		t.Fatalf("want the bad pack and the pending forget, repairable: %+v", rep.Problems)
	}
	head, _ := m.Repo.Head()
	rep, err = m.Check(ctx, true)
	if err != nil {
		t.Fatalf("check --repair: %v: %+v", err, rep)
	}
	if len(rep.Repaired) < 2 || !strings.HasPrefix(rep.Repaired[0], "rewrote pack") || !strings.Contains(strings.Join(rep.Repaired, "\n"), "finished the interrupted forget") {
		t.Fatalf("repaired %q", rep.Repaired)
	}
	if m.Repo.Pending() || len(m.Repo.BadPacks()) != 0 {
		t.Fatalf("pending %v, bad packs %+v", m.Repo.Pending(), m.Repo.BadPacks())
	}
	fsckStrict(t, m.Repo.Dir())
	if hasObject(m, blob) || bytes.Contains(allObjects(t, m.Repo.Dir()), []byte(marker)) {
		t.Fatal("the forgotten blob is still on disk")
	}
	if h, _ := m.Repo.Head(); h != head {
		t.Fatalf("main moved %s → %s", head, h)
	}
	es := mustLog(t, m)
	if len(es) != 41 {
		t.Fatalf("%d exchanges, want 41", len(es))
	}
	for _, e := range es {
		if e.Exchange == "gone" {
			t.Fatal("the forgotten exchange is back")
		}
		if _, _, err := m.Verbatim(e.Exchange); err != nil {
			t.Fatalf("exchange %s: %v", e.Exchange, err)
		}
	}
	if rep := mustCheck(t, m); rep.Commits != 41 {
		t.Fatalf("check after: %+v", rep)
	}
}

// A healthy memory: check reports nothing, --repair changes no pack.
func TestCheckRepairLeavesHealthyPacks(t *testing.T) {
	m := newMemory(t)
	var exs []*exchange.Exchange
	for i := 0; i < 40; i++ {
		exs = append(exs, ex(fmt.Sprintf("h-%d", i), "s1", "2026-01-02T10:00:00Z", fmt.Sprintf("heron %d", i), "done"))
	}
	mustAdd(t, m, exs...)
	mustAdd(t, m, ex("h-last", "s1", "2026-01-03T10:00:00Z", "heron last", "done"))
	list := func() string {
		ps, _ := filepath.Glob(filepath.Join(m.Repo.Dir(), "objects", "pack", "*"))
		return strings.Join(ps, "\n")
	}
	before := list()
	mustCheck(t, m)
	rep, err := m.Check(context.Background(), true)
	if err != nil || len(rep.Problems) != 0 || len(rep.Repaired) != 0 {
		t.Fatalf("check --repair of a healthy memory: %v %+v", err, rep)
	}
	if after := list(); after != before {
		t.Fatalf("packs changed:\n%s\n--\n%s", before, after)
	}
}

// Adds running while check --repair mends the pack and finishes the
// forget all land; nothing of main is lost.
func TestCheckRepairBesideAdds(t *testing.T) {
	const marker = "numbat-kimberley-9021"
	m := brokenByOldForget(t, marker)
	ctx := context.Background()
	w, err := Open(m.Repo.Dir())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 10; i++ {
			for try := 0; ; try++ {
				_, err := w.Add(ctx, []*exchange.Exchange{ex(fmt.Sprintf("during-%d", i), "s3", "2026-03-01T10:00:00Z",
					fmt.Sprintf("added during the repair %d", i), "ok")}, AddOptions{})
				if err == nil {
					break
				}
				// Before the pack is mended, an add cannot finish the
				// forget and stores nothing (as before); the user's retry.
				if !strings.Contains(err.Error(), "git mem check --repair") || try > 2000 {
					done <- err
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
		done <- nil
	}()
	rep, err := m.Check(ctx, true)
	if aerr := <-done; aerr != nil {
		t.Fatalf("add during repair: %v", aerr)
	}
	if err != nil {
		t.Fatalf("check --repair: %v: %+v", err, rep)
	}
	if _, err := m.Repo.FinishPending(0); err != nil { // an add may have finished it meanwhile, or not yet
		t.Fatal(err)
	}
	if m.Repo.Pending() || len(m.Repo.BadPacks()) != 0 {
		t.Fatalf("pending %v, bad packs %+v", m.Repo.Pending(), m.Repo.BadPacks())
	}
	fsckStrict(t, m.Repo.Dir())
	m2, err := Open(m.Repo.Dir())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, e := range mustLog(t, m2) {
		ids[e.Exchange]++
		if _, _, err := m2.Verbatim(e.Exchange); err != nil {
			t.Fatalf("exchange %s: %v", e.Exchange, err)
		}
	}
	if len(ids) != 51 || ids["gone"] != 0 {
		t.Fatalf("%d exchanges (want 51), gone %d", len(ids), ids["gone"])
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("%s %d times", id, n)
		}
	}
	if bytes.Contains(allObjects(t, m.Repo.Dir()), []byte(marker)) {
		t.Fatal("the forgotten blob is still on disk")
	}
}

// forgottenBlob is the blob id the tombstone of "gone" names.
func forgottenBlob(t *testing.T, m *Memory) string {
	t.Helper()
	ts, err := m.Repo.Tombstones()
	if err != nil || len(ts) != 1 {
		t.Fatalf("tombstones %v %v", ts, err)
	}
	for _, tomb := range ts {
		return tomb.Blob
	}
	return ""
}

// hasObject asks git whether the object is on disk (loose or in a pack git
// reads).
func hasObject(m *Memory, id string) bool {
	return exec.Command("git", "--git-dir", m.Repo.Dir(), "cat-file", "-e", id).Run() == nil
}
