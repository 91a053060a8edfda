package memory

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// answer is what findEntry says of a ref: the card's commit or the error.
func answer(e *Entry, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return e.Commit
}

// refsOf are the refs show is given: ids, full commits, the prefixes log
// prints, shorter and upper-case ones, and refs that name nothing.
func refsOf(all []Entry) []string {
	refs := []string{"nothing-here", "deadbeefdeadbeef", "abc", "zz-not-hex", " "}
	for _, e := range all {
		refs = append(refs, e.Exchange, e.Commit, e.Commit[:7], e.Commit[:4], e.Commit[:5], strings.ToUpper(e.Commit[:9]))
	}
	return refs
}

// TestShowFromCardCache: show's scan of the card cache gives for every ref
// what findEntry gives over Entries, with the cache at main's head and with
// main moved past it (new cards at the same times as cached ones), and
// leaves the cache as it was.
func TestShowFromCardCache(t *testing.T) {
	m := newMemory(t)
	add := func(prefix string, n, day0 int) {
		for i := 0; i < n; i++ {
			mustAdd(t, m, ex(fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf("s%d", i%3),
				fmt.Sprintf("2026-01-%02dT10:00:00Z", day0+i%20), fmt.Sprintf("tune the heron cache %d", i), "done"))
		}
	}
	add("old", 30, 1)
	if _, err := m.Entries(); err != nil { // the cache at this head
		t.Fatal(err)
	}
	compareShow(t, m, "current")
	add("new", 8, 5) // main moves past the cache
	compareShow(t, m, "stale")
}

// compareShow checks findCached against findEntry over Entries for every ref.
func compareShow(t *testing.T, m *Memory, stage string) {
	t.Helper()
	before, err := os.ReadFile(m.EntryCachePath())
	if err != nil {
		t.Fatal(err)
	}
	head, err := m.Repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	walked, _, err := walkNew(m, head, plumbing.ZeroHash) // every card, the cache untouched
	if err != nil {
		t.Fatal(err)
	}
	refs := refsOf(walked)
	got := make([]string, len(refs))
	for i, ref := range refs {
		e, ok, err := m.findCached(ref)
		if !ok {
			t.Fatalf("%s: %q: the cache did not answer", stage, ref)
		}
		got[i] = answer(e, err)
	}
	if after, _ := os.ReadFile(m.EntryCachePath()); string(after) != string(before) {
		t.Fatalf("%s: the scan rewrote the card cache", stage)
	}
	all, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for i, ref := range refs {
		if want := answer(findEntry(all, ref)); got[i] != want {
			t.Errorf("%s: show %q from the cache: %s, want %s", stage, ref, got[i], want)
		}
	}
}

// TestShowFromCardCacheAmbiguous: prefixes several cards share give
// findEntry's error (the first five in order, the count of the rest); a
// cache whose digest does not match its cards is not used.
func TestShowFromCardCacheAmbiguous(t *testing.T) {
	m := newMemory(t)
	mustAdd(t, m, ex("real", "s", "2026-01-01T10:00:00Z", "hello", "done"))
	head, err := m.Repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	var es []Entry
	for i := 0; i < 9; i++ {
		commit := fmt.Sprintf("abcd%d%035d", i%3, i)
		if i == 8 {
			commit = fmt.Sprintf("ffff%036d", i)
		}
		es = append(es, Entry{Commit: commit, Exchange: fmt.Sprintf("id-%d", i), Session: "s",
			Rooms: []string{"r"}, Files: []string{}, Time: time.Date(2026, 1, 1+i%4, 10, 0, 0, 0, time.UTC)})
	}
	sortEntries(es)
	cf := entryCacheFile{Version: entryCacheVersion, Head: head.String(), Entries: es}
	if err := saveEntryCache(m.EntryCachePath(), cf); err != nil {
		t.Fatal(err)
	}
	all := pointers(es)
	for _, ref := range []string{"abcd", "ABCD", "abcd1", "abcd2", "abcd0000", "ffff", "id-3", "id-9", "abcd" + strings.Repeat("0", 36)} {
		e, ok, err := m.findCached(ref)
		if !ok {
			t.Fatalf("%q: the cache did not answer", ref)
		}
		if got, want := answer(e, err), answer(findEntry(all, ref)); got != want {
			t.Errorf("show %q from the cache: %s, want %s", ref, got, want)
		}
	}
	if _, _, err := m.findCached("abcd"); err == nil || !strings.Contains(err.Error(), "and 3 more") {
		t.Errorf("abcd: %v, want an ambiguity naming five and 3 more", err)
	}
	// A card changed under the digest: not trusted.
	b := encodeEntryCache(cf)
	i := strings.Index(string(b), "id-4")
	b[i+3] = '7'
	if err := os.WriteFile(m.EntryCachePath(), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.findCached("id-7"); ok {
		t.Error("a cache with a wrong digest answered")
	}
}
