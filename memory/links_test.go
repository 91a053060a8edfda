package memory

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/redact"
)

func TestMetaEventAndPaths(t *testing.T) {
	c := func(msg string) *object.Commit {
		return &object.Commit{Hash: plumbing.NewHash("1111111111111111111111111111111111111111"), Message: msg,
			Author: object.Signature{When: time.Unix(1, 0)}, ParentHashes: []plumbing.Hash{plumbing.ZeroHash}}
	}
	for _, tc := range []struct {
		msg   string
		ok    bool
		kind  string
		paths int
	}{
		{"Pin: x\n\nMem-Kind: pin\nPinned: ex-1\nProject: atlas\n", true, KindPin, 1},
		{"never force-push\n\nMem-Kind: pin\nPinned: note:0123456789abcdef\n", true, KindPin, 0},
		{"b supersedes a\n\nMem-Kind: supersede\nSupersedes: a\nSuperseded-By: b\n", true, KindSupersede, 2},
		{"a supersedes a\n\nMem-Kind: supersede\nSupersedes: a\nSuperseded-By: a\n", false, "", 2},
		{"x\n\nMem-Kind: frobnicate\nPinned: a\n", false, "", 1},
		{"card\n\ncontext\n\nExchange: e1\nProject: p\n", false, "", 0},
	} {
		ev, ok := metaEvent(c(tc.msg))
		if ok != tc.ok || ev.Kind != tc.kind {
			t.Errorf("metaEvent(%q) = %+v %v", tc.msg, ev, ok)
		}
		if n := len(metaPaths(tc.msg)); n != tc.paths {
			t.Errorf("metaPaths(%q) = %d paths, want %d", tc.msg, n, tc.paths)
		}
	}
}

// A pinned note is redacted before it is written, every pin commit passes
// git fsck --strict and adds nothing to the tree, and pins survive a
// reindex.
func TestPinNoteRedactedAndReindexed(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	if _, err := m.Add(ctx, nil, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	rep, err := m.Pin(ctx, PinRequest{Note: "deploy with token " + secret + " never", Project: "atlas"})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "log", "-1", "--format=%B", "main").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(msg), secret) || !strings.Contains(string(msg), "[REDACTED") {
		t.Fatalf("pin message not redacted: %s", msg)
	}
	if out, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("fsck: %v %s", err, out)
	}
	if _, err := m.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	pins, err := m.Pins(ctx, "atlas")
	if err != nil || len(pins) != 1 || pins[0].ID != rep.ID || pins[0].Commit != rep.Commit {
		t.Fatalf("pins after reindex: %+v %v (want %+v)", pins, err, rep)
	}
	if pins, _ := m.Pins(ctx, "other"); len(pins) != 0 {
		t.Fatalf("another project's pins: %+v", pins)
	}
	if _, err := m.Pin(ctx, PinRequest{Note: strings.Repeat("long rule ", 50)}); err == nil {
		t.Fatal("a note over the limit was pinned")
	}
}

// The SessionStart hook's read does no index work: behind main it says so
// instead of catching up.
func TestLinksIfCurrentDoesNoIndexWork(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	if _, err := m.Pin(ctx, PinRequest{Note: "a rule"}); err != nil {
		t.Fatal(err)
	}
	if l, ok, err := m.LinksIfCurrent(nil); err != nil || !ok || len(l.Pins) != 1 {
		t.Fatalf("caught up: %+v %v %v", l, ok, err)
	}
	if _, err := m.Add(ctx, []*exchange.Exchange{ex("a", "s", "2026-01-01T00:00:00Z", "hello", "hi")}, AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := m.LinksIfCurrent(nil); err != nil || ok {
		t.Fatalf("behind main: ok %v err %v", ok, err)
	}
	if l, ok, err := m.LinksIfCurrent(nil); ok || l != nil || err != nil {
		t.Fatal("LinksIfCurrent caught the index up")
	}
	if _, err := m.UpdateIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.LinksIfCurrent(nil); !ok {
		t.Fatal("caught up again: not ok")
	}
}

// Git dates commits to the second: a pin and an unpin written within one
// second must still leave the last word in force (CI saw an unpin lose to
// its pin by commit id). Each event is dated after the one it follows.
// A pin's --project is redacted as an exchange's project is: a pin is a
// commit that sync pushes. Both kinds of pin; the pin is then found under
// the redacted project, as the exchanges of that project are.
func TestPinProjectRedacted(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	secret := "ghp_" + strings.Repeat("Z9y8X7w6V5", 4)[:36]
	mustAdd(t, m, ex("p-1", "s", "2026-01-01T10:00:00Z", "always run the linters", "ok"))
	for _, req := range []PinRequest{
		{Note: "use the staging cluster first", Project: "proj-" + secret},
		{Ref: "p-1", Project: "proj-" + secret},
	} {
		if _, err := m.Pin(ctx, req); err != nil {
			t.Fatal(err)
		}
		msg, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "log", "-1", "--format=%B", "main").Output()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(msg), secret) || !strings.Contains(string(msg), "Project: proj-[REDACTED:") {
			t.Fatalf("pin %+v: project not redacted: %s", req, msg)
		}
	}
	redacted, _ := redact.String("proj-" + secret)
	if pins, err := m.Pins(ctx, redacted); err != nil || len(pins) != 2 {
		t.Fatalf("pins of the redacted project: %+v %v", pins, err)
	}
	fsckStrict(t, m.Repo.Dir())
}

func TestPinUnpinSameSecondLastWins(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	note := "Always run the linters before a push."
	for i := 0; i < 4; i++ {
		if _, err := m.Pin(ctx, PinRequest{Note: note}); err != nil {
			t.Fatal(err)
		}
		if pins, err := m.Pins(ctx, ""); err != nil || len(pins) != 1 {
			t.Fatalf("round %d: after a pin: %+v %v", i, pins, err)
		}
		if _, err := m.Unpin(ctx, NoteID(note)); err != nil {
			t.Fatal(err)
		}
		if pins, err := m.Pins(ctx, ""); err != nil || len(pins) != 0 {
			t.Fatalf("round %d: after an unpin: %+v %v", i, pins, err)
		}
	}
	out, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "log", "--format=%at", "main").Output()
	if err != nil {
		t.Fatal(err)
	}
	dates := strings.Fields(string(out))
	for i := 1; i < len(dates); i++ {
		if dates[i] >= dates[i-1] {
			t.Fatalf("events not dated one after another: %v", dates)
		}
	}
}

func TestDatedAfter(t *testing.T) {
	prev := time.Unix(1000, 0)
	for _, tc := range []struct {
		now  time.Time
		want int64
	}{
		{time.Unix(999, 5), 1001},
		{time.Unix(1000, 900), 1001},
		{time.Unix(1001, 1), 1001},
		{time.Unix(1500, 0), 1500},
	} {
		if got := datedAfter(tc.now, prev); got.Unix() != tc.want {
			t.Errorf("datedAfter(%v) = %d, want %d", tc.now, got.Unix(), tc.want)
		}
	}
}
