package memory

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// A catch-up across a merge whose sides are each longer than a batch ends:
// before, a batch ending inside the merged side branch recorded a last
// commit whose history lacked the other side, and every later batch added
// that side again (a sync of 1,000 new on each side never finished).
func TestCatchUpAcrossAMergeLongerThanABatch(t *testing.T) {
	old := catchUpBatch
	catchUpBatch = 4
	t.Cleanup(func() { catchUpBatch = old })
	t.Setenv("HOME", t.TempDir())
	remote := syncRemote(t)
	a, c := memoryOn(t, remote), memoryOn(t, remote)
	batch := func(side string, n int) []*exchange.Exchange {
		var exs []*exchange.Exchange
		for i := 0; i < n; i++ {
			exs = append(exs, ex(fmt.Sprintf("%s%d", side, i), side, "2026-01-01T00:00:00Z", "change "+side, fmt.Sprintf("did %s %d", side, i)))
		}
		return exs
	}
	mustAdd(t, a, batch("base", 3)...)
	mustSyncMem(t, a)
	mustSyncMem(t, c)
	mustAdd(t, a, batch("a", 10)...)
	mustAdd(t, c, batch("c", 10)...)
	mustSyncMem(t, a)
	done := make(chan error, 1)
	go func() { // fetch, merge, catch-up, push
		rep, err := c.Sync(context.Background(), "")
		if err == nil && rep.IndexErr != "" {
			err = fmt.Errorf("index: %s", rep.IndexErr)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sync: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the catch-up after the merge did not finish")
	}
	mustSyncMem(t, a) // fast-forward over the merge
	for _, m := range []*Memory{a, c} {
		res, _, err := m.Search(context.Background(), SearchQuery{Text: "change", K: 100})
		if err != nil {
			t.Fatal(err)
		}
		ix, release, err := m.OpenIndex(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n := ix.Count()
		release()
		if n != 23 {
			t.Errorf("%s: index holds %d exchanges, want 23 (search found %d)", m.Repo.Dir(), n, len(res))
		}
		fsckStrict(t, m.Repo.Dir())
	}
}
