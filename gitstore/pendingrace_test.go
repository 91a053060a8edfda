package gitstore

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// secretEntry is an exchange whose blob and commit message (its card)
// hold marker.
func secretEntry(id, marker string) Entry {
	e := testEntry(id)
	e.Blob = []byte(`{"id":"` + id + `","text":"` + marker + `"}`)
	e.Message = "card: " + marker + "\n\nExchange: " + id + "\n"
	return e
}

// forgetOne forgets e completely (tombstone, rewrite, purge).
func forgetOne(t *testing.T, r *Repo, e Entry) {
	t.Helper()
	if _, err := r.Forget([]string{e.Path}, []Tombstone{tombstoneOf(t, r, e)}, time.Minute); err != nil {
		t.Fatalf("forget %s: %v", e.Path, err)
	}
}

func tombstoneOf(t *testing.T, r *Repo, e Entry) Tombstone {
	t.Helper()
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	blob, ok, err := r.BlobHashAt(head, e.Path)
	if err != nil || !ok {
		t.Fatalf("%s not in main: %v", e.Path, err)
	}
	id := strings.TrimSuffix(e.Path[strings.LastIndex(e.Path, "/")+1:], ".json")
	return Tombstone{Exchange: id, Blob: blob.String(), Time: time.Now()}
}

// forgetKilledBeforePurge is a forget killed after its refs moved and
// before its purge: mem/forget.pending says the purge is owed.
func forgetKilledBeforePurge(t *testing.T, r *Repo, e Entry) {
	t.Helper()
	ts := []Tombstone{tombstoneOf(t, r, e)}
	l, err := r.syncLock(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = r.forgetLocked([]string{e.Path}, ts, time.Minute)
	l.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if !r.Pending() {
		t.Fatal("no purge owed after the refs moved")
	}
}

// A purge owed by a sync that learned (or fetched) forgotten content while
// another command was purging is never dropped: the command that holds
// forget.lock — a forget, FinishPending as add and check --repair call it,
// or a sync's own FinishPending — purges again before it removes
// mem/forget.pending, or leaves it. The sync runs at a chosen moment of
// the purge (after step 1 noted the files, after step 2 packed what the
// refs reached, after the pending file was removed while forget.lock is
// still held), from a second Repo as a second process would, and an add
// follows it there: every other exchange stays, the add's too.
//
// Before the fix the sync's FinishPending found forget.lock held and
// returned, the purge deleted only what its step 1 noted (Y was reachable
// then, or not fetched yet), and the purger removed mem/forget.pending:
// Y's blob and card stayed in the object store for good (13 of the 15
// cases failed; the two forget/fetches cases before "cleared" passed only
// because the fetch brought X back and the forget's own check purged
// again).
func TestSyncLearningTombstonesDuringAPurgeLeavesNothing(t *testing.T) {
	type purger string
	const (
		byForget purger = "forget"      // git mem forget X
		byFinish purger = "finish"      // add or check --repair finishing a killed forget of X
		bySync   purger = "sync-finish" // a sync's own FinishPending (it learned X's tombstone)
	)
	type marker string
	const (
		learns  marker = "learns"  // Y is in main; the remote's tombstone drops it
		fetches marker = "fetches" // Y was forgotten here; the remote's main still holds it
	)
	// When the sync runs: after purge step 1, after step 2, or after the
	// pending file was removed (testHookPendingCleared).
	whens := map[string]int{"noted": 1, "packed": 2, "cleared": 3}
	type tc struct {
		p    purger
		m    marker
		when string
	}
	var cases []tc
	for _, p := range []purger{byForget, byFinish, bySync} {
		for _, m := range []marker{learns, fetches} {
			if p == bySync && m == fetches {
				continue // the first sync pushes the remote's main without Y
			}
			for _, w := range []string{"noted", "packed", "cleared"} {
				cases = append(cases, tc{p, m, w})
			}
		}
	}
	for _, c := range cases {
		t.Run(string(c.p)+"/"+string(c.m)+"/"+c.when, func(t *testing.T) {
			const secretX, secretY = "xerus-0417-marker", "yapok-9921-marker"
			url := bareRemote(t, t.TempDir(), "remote.git")
			b := memWith(t, url, ids("keep", 6)...)
			x, y := secretEntry("gone-x", secretX), secretEntry("gone-y", secretY)
			if _, err := b.Append([]Entry{x}, time.Minute); err != nil {
				t.Fatal(err)
			}
			appendIDs(t, b, "keep-7", "keep-8")
			if _, err := b.Append([]Entry{y}, time.Minute); err != nil {
				t.Fatal(err)
			}
			mustSync(t, b)
			a := memWith(t, url)
			mustSync(t, a)
			head, _ := b.Head()
			xBlob, _, _ := b.BlobHashAt(head, x.Path)
			yBlob, _, _ := b.BlobHashAt(head, y.Path)
			before := exchangeSet(t, b.Dir())

			// What the purger owes (X), and what the racing sync will owe (Y).
			switch {
			case c.p == bySync: // a forgets X: b's first sync learns it (and Y later)
				forgetOne(t, a, x)
				mustSync(t, a)
			case c.m == learns: // a forgets Y and pushes its tombstone
				forgetOne(t, a, y)
				mustSync(t, a)
			case c.m == fetches: // b forgot Y and has not synced since: the remote holds it
				forgetOne(t, b, y)
			}

			hookAt := whens[c.when]
			var once sync.Once
			var raced SyncResult
			var raceErr error
			race := func(r *Repo) {
				if r.Dir() != b.Dir() {
					return
				}
				once.Do(func() {
					other, err := Open(b.Dir()) // as a second process
					if err != nil {
						raceErr = err
						return
					}
					if c.p == bySync {
						// a forgets Y only now, while b's first sync purges,
						// so that b's second sync learns it.
						forgetOne(t, a, y)
						mustSync(t, a)
					}
					raced, raceErr = other.Sync(context.Background(), "origin", SyncOptions{})
					if raceErr == nil { // and an add lands meanwhile
						_, raceErr = other.Append([]Entry{testEntry("late-1")}, time.Minute)
					}
				})
			}
			if hookAt == 3 {
				testHookPendingCleared = race
			} else {
				testHookPurge = func(r *Repo, step int) {
					if step == hookAt {
						race(r)
					}
				}
			}
			t.Cleanup(func() { testHookPurge, testHookPendingCleared = nil, nil })
			switch c.p {
			case byForget:
				forgetOne(t, b, x)
			case byFinish:
				forgetKilledBeforePurge(t, b, x)
				if ran, err := b.FinishPending(time.Minute); err != nil || !ran {
					t.Fatalf("finish: ran %v, %v", ran, err)
				}
			case bySync:
				res := mustSync(t, b)
				if res.TombstonesLearned != 1 || res.Forgotten != 1 {
					t.Fatalf("b's first sync: %+v", res)
				}
			}
			testHookPurge, testHookPendingCleared = nil, nil
			if raceErr != nil {
				t.Fatalf("the racing sync: %v", raceErr)
			}
			switch {
			case c.m == learns && (raced.TombstonesLearned != 1 || raced.Forgotten == 0):
				t.Fatalf("the racing sync did not learn Y's tombstone: %+v", raced)
			case c.m == fetches && !raced.RemoteRewritten:
				t.Fatalf("the racing sync did not fetch Y: %+v", raced)
			}

			dir := b.Dir()
			for name, h := range map[string]plumbing.Hash{"X": xBlob, "Y": yBlob} {
				if err := exec.Command("git", "--git-dir", dir, "cat-file", "-e", h.String()).Run(); err == nil {
					t.Errorf("%s's blob %s is still in the object store", name, h)
				}
			}
			all, err := exec.Command("git", "--git-dir", dir, "cat-file", "--batch-all-objects", "--batch", "--unordered").Output()
			if err != nil {
				t.Fatal(err)
			}
			logAll := gitOut(t, "--git-dir", dir, "log", "--all", "--format=%B")
			unreach := gitOut(t, "--git-dir", dir, "fsck", "--unreachable", "--no-reflogs")
			for _, s := range []string{secretX, secretY} {
				if bytes.Contains(all, []byte(s)) {
					t.Errorf("an object (reachable or not) still holds %q", s)
				}
				if strings.Contains(logAll, s) {
					t.Errorf("a commit message of a ref still holds %q", s)
				}
			}
			for _, h := range []plumbing.Hash{xBlob, yBlob} {
				if strings.Contains(unreach, h.String()) {
					t.Errorf("fsck --unreachable lists %s", h)
				}
			}
			if b.Pending() {
				t.Error("mem/forget.pending is left though nothing is owed")
			}
			fsck(t, dir)
			want := slices.DeleteFunc(slices.Clone(before), func(id string) bool { return id == "gone-x" || id == "gone-y" })
			want = append(want, "late-1")
			slices.Sort(want)
			if got := exchangeSet(t, dir); !slices.Equal(got, want) {
				t.Errorf("main's exchanges: %v, want %v", got, want)
			}
		})
	}
}

// The pending file's marks: a file of an older git mem (one time line) or
// an empty one (a kill mid-write) is finished like any; syncs that keep
// marking during every purge make the holder give up after settleRounds
// purges and leave the file (never remove it unpurged); a forget that finds
// the mark of a forget killed between its tombstone ref and main drops
// that exchange too before its purge.
func TestPendingMarks(t *testing.T) {
	const secretX, secretY = "xerus-0417-marker", "yapok-9921-marker"
	cases := []struct {
		name string
		run  func(t *testing.T, r *Repo, x, y Entry)
		// after the run: is the file left, and are X and Y gone
		left, xGone, yGone bool
	}{
		{"older file", func(t *testing.T, r *Repo, x, y Entry) {
			forgetKilledBeforePurge(t, r, x)
			writeFile(t, filepath.Join(r.MemDir(), pendingFile), "2026-12-01T10:00:00.123456789Z\n")
			if ran, err := r.FinishPending(time.Minute); err != nil || !ran {
				t.Fatalf("finish: %v %v", ran, err)
			}
		}, false, true, false},
		{"empty file", func(t *testing.T, r *Repo, x, y Entry) {
			forgetKilledBeforePurge(t, r, x)
			writeFile(t, filepath.Join(r.MemDir(), pendingFile), "")
			if ran, err := r.FinishPending(time.Minute); err != nil || !ran {
				t.Fatalf("finish: %v %v", ran, err)
			}
		}, false, true, false},
		{"syncs keep marking", func(t *testing.T, r *Repo, x, y Entry) {
			forgetKilledBeforePurge(t, r, x)
			purges := markEveryPurge(t)
			ran, err := r.FinishPending(time.Minute)
			if err != nil || !ran || *purges != settleRounds {
				t.Fatalf("finish: ran %v, %d purges (want %d), %v", ran, *purges, settleRounds, err)
			}
		}, true, true, false},
		{"syncs keep marking during a forget", func(t *testing.T, r *Repo, x, y Entry) {
			purges := markEveryPurge(t)
			forgetOne(t, r, x)
			if *purges != 1+settleRounds {
				t.Fatalf("%d purges, want %d", *purges, 1+settleRounds)
			}
		}, true, true, false},
		{"forget after a kill between the tombstone ref and main", func(t *testing.T, r *Repo, x, y Entry) {
			head, _ := r.Head()
			forgetKilledBeforePurge(t, r, y)
			gitOut(t, "--git-dir", r.Dir(), "update-ref", "refs/heads/main", head.String()) // main did not move
			if _, ok, _ := r.ReadPath(plumbing.ZeroHash, y.Path); !ok {
				t.Fatal("y is not in main")
			}
			forgetOne(t, r, x)
		}, false, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRepo(t)
			appendIDs(t, r, ids("keep", 4)...)
			x, y := secretEntry("gone-x", secretX), secretEntry("gone-y", secretY)
			if _, err := r.Append([]Entry{x, y}, time.Minute); err != nil {
				t.Fatal(err)
			}
			appendIDs(t, r, "keep-7")
			head, _ := r.Head()
			xBlob, _, _ := r.BlobHashAt(head, x.Path)
			yBlob, _, _ := r.BlobHashAt(head, y.Path)
			c.run(t, r, x, y)
			if r.Pending() != c.left {
				t.Errorf("pending %v, want %v", r.Pending(), c.left)
			}
			for _, o := range []struct {
				name string
				h    plumbing.Hash
				gone bool
			}{{"X", xBlob, c.xGone}, {"Y", yBlob, c.yGone}} {
				err := exec.Command("git", "--git-dir", r.Dir(), "cat-file", "-e", o.h.String()).Run()
				if gone := err != nil; gone != o.gone {
					t.Errorf("%s's blob gone: %v, want %v", o.name, gone, o.gone)
				}
			}
			fsck(t, r.Dir())
			if c.left {
				testHookPurge = nil
				if ran, err := r.FinishPending(time.Minute); err != nil || !ran || r.Pending() {
					t.Fatalf("the next command: ran %v, pending %v, %v", ran, r.Pending(), err)
				}
			}
		})
	}
}

// markEveryPurge marks a purge owed (as a sync that learned tombstones
// does) after step 1 of every purge from now on, and counts the purges.
func markEveryPurge(t *testing.T) *int {
	purges := new(int)
	testHookPurge = func(r *Repo, step int) {
		if step != 1 {
			return
		}
		*purges++
		l, err := r.syncLock(time.Minute)
		if err != nil {
			t.Error(err)
			return
		}
		defer l.Unlock()
		if _, err := r.markPending(); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { testHookPurge = nil })
	return purges
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
