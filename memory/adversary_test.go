package memory

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory/reader"
)

// supersedeLinks lists main's stated supersede links as "new old" (one a
// line, in log order).
func supersedeLinks(t *testing.T, m *Memory) []string {
	t.Helper()
	if mainTree(t, m) == "" && exec.Command("git", "--git-dir", m.Repo.Dir(), "rev-parse", "--verify", "-q", "main").Run() != nil {
		return nil
	}
	out, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "log", "--format=%(trailers:key=Superseded-By,valueonly,separator=)|%(trailers:key=Supersedes,valueonly,separator=)", "main").CombinedOutput()
	if err != nil {
		t.Fatalf("log: %v %s", err, out)
	}
	var links []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		l = strings.ReplaceAll(l, "\n", "")
		if n, o, ok := strings.Cut(l, "|"); ok && n != "" {
			links = append(links, n+" "+o)
		}
	}
	return links
}

// TestAddRaceTakesTheClaimedPromptAlone: one input holds an exchange's
// prompt alone and, after it, the exchange with its reply (one id). The
// add claims the id for the prompt alone and puts the reply under the
// completed id of that claim. Another writer stores under the id between
// this add's look-up and its append, so the prompt alone is not stored
// there. The completed id named a prompt alone that main does not hold:
// the exchange with its reply must be settled as if the other writer's
// exchange had been stored before the add looked (never a second card of
// an exchange main holds with its reply, never a supersede link to an
// unrelated exchange), and a re-add of the same input adds nothing.
func TestAddRaceTakesTheClaimedPromptAlone(t *testing.T) {
	const user, reply = "why does the walrus deploy hang", "an advisory lock the nightly cron holds"
	for _, tc := range []struct {
		name   string
		theirs *exchange.Exchange
	}{
		{"another exchange", exTurns("x", "rotate the quokka logs", "use logrotate")},
		{"the exchange with another reply", exTurns("x", user, "the migration step is slow")},
		{"the exchange with the same reply", exTurns("x", user, reply)},
		{"another prompt alone of it", func() *exchange.Exchange { e := exTurns("x", user, ""); e.Session = "s2"; return e }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := func() []*exchange.Exchange {
				return []*exchange.Exchange{exTurns("x", user, ""), exTurns("x", user, reply)}
			}
			ctx := context.Background()
			// The serial order: theirs first, then the input.
			serial := newMemory(t)
			if _, err := serial.Add(ctx, []*exchange.Exchange{tc.theirs}, AddOptions{NoIndex: true}); err != nil {
				t.Fatal(err)
			}
			want, err := serial.Add(ctx, input(), AddOptions{NoIndex: true})
			if err != nil {
				t.Fatal(err)
			}
			wantTree := strings.Count(mainTree(t, serial), "\n")

			m := newMemory(t)
			other, err := Open(m.Repo.Dir())
			if err != nil {
				t.Fatal(err)
			}
			todo, looked, rep, err := m.lookupItems(ctx, prepareAdd(input(), AddOptions{}), claims{})
			if err != nil || len(todo) != 2 {
				t.Fatalf("lookup: %d %v", len(todo), err)
			}
			if r, err := other.Add(ctx, []*exchange.Exchange{tc.theirs}, AddOptions{NoIndex: true}); err != nil || r.Added != 1 {
				t.Fatalf("their add: %+v %v", r, err)
			}
			rep, err = m.storeItems(ctx, todo, looked, rep, AddOptions{NoIndex: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Added != want.Added || rep.Present != want.Present {
				t.Errorf("add: added %d present %d, want %d %d as when theirs came first", rep.Added, rep.Present, want.Added, want.Present)
			}
			if n := strings.Count(mainTree(t, m), "\n"); n != wantTree {
				t.Errorf("%d exchanges stored, want %d as when theirs came first:\n%s", n, wantTree, mainTree(t, m))
			}
			if got, w := supersedeLinks(t, m), supersedeLinks(t, serial); strings.Join(got, ",") != strings.Join(w, ",") {
				t.Errorf("supersede links %q, want %q as when theirs came first", got, w)
			}
			if r, err := m.Add(ctx, input(), AddOptions{NoIndex: true}); err != nil || r.Added != 0 {
				t.Errorf("re-add: %+v %v, want nothing added", r, err)
			}
			for _, e := range input() {
				if r, err := m.Add(ctx, []*exchange.Exchange{e}, AddOptions{NoIndex: true}); err != nil || r.Added != 0 {
					t.Errorf("re-add of %q alone: %+v %v, want nothing added", e.Turns, r, err)
				}
			}
			fsckStrict(t, m.Repo.Dir())
		})
	}
}

// TestAddCompletedWhileItsPromptIsForgotten: an add looks up an exchange
// with its reply whose id holds its prompt stored alone (so it goes to the
// completed id), and a forget of the prompt alone ends before the add
// appends. As when the forget came first, the exchange is refused (its id
// is tombstoned: forgotten text is never stored again), and no supersede
// link names the forgotten exchange.
func TestAddCompletedWhileItsPromptIsForgotten(t *testing.T) {
	const user, reply = "why does the walrus deploy hang", "an advisory lock the nightly cron holds"
	m := newMemory(t)
	ctx := context.Background()
	if r, err := m.Add(ctx, []*exchange.Exchange{exTurns("x", user, "")}, AddOptions{NoIndex: true}); err != nil || r.Added != 1 {
		t.Fatalf("add the prompt alone: %+v %v", r, err)
	}
	todo, looked, rep, err := m.lookupItems(ctx, prepareAdd([]*exchange.Exchange{exTurns("x", user, reply)}, AddOptions{}), claims{})
	if err != nil || len(todo) != 1 || todo[0].stage != completedID {
		t.Fatalf("lookup: %d %v", len(todo), err)
	}
	other, err := Open(m.Repo.Dir())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := other.ForgetPlan(ctx, ForgetSelect{Refs: []string{"x"}})
	if err != nil || len(plan) != 1 {
		t.Fatalf("plan: %v %v", plan, err)
	}
	if _, err := other.Forget(ctx, plan, ""); err != nil {
		t.Fatal(err)
	}
	rep, err = m.storeItems(ctx, todo, looked, rep, AddOptions{NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 0 || rep.Forgotten != 1 {
		t.Errorf("add: %+v, want added 0 forgotten 1 as when the forget came first", rep)
	}
	if tree := mainTree(t, m); tree != "" {
		t.Errorf("main holds\n%s\nwant nothing", tree)
	}
	if links := supersedeLinks(t, m); len(links) != 0 {
		t.Errorf("supersede links %q name the forgotten exchange", links)
	}
	if r, err := m.Add(ctx, []*exchange.Exchange{exTurns("x", user, reply)}, AddOptions{NoIndex: true}); err != nil || r.Added != 0 || r.Forgotten != 1 {
		t.Errorf("re-add: %+v %v, want forgotten 1", r, err)
	}
	fsckStrict(t, m.Repo.Dir())
}

// TestCheckAfterEverythingIsForgotten: a forget of every exchange leaves
// main empty and the index following it (no documents): check finds no
// problem and status calls the index up to date, as after init. On main
// 2f6bf6d check reported "indexed up to (nothing), main is at 000…"
// (exit 1, which --repair could not clear) and status marked the index
// out of step, for a rebuild at every search.
func TestCheckAfterEverythingIsForgotten(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	if r, err := m.Add(ctx, []*exchange.Exchange{exTurns("x", "why does the walrus deploy hang", "an advisory lock")}, AddOptions{}); err != nil || r.Added != 1 {
		t.Fatalf("add: %+v %v", r, err)
	}
	plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{"x"}})
	if err != nil || len(plan) != 1 {
		t.Fatalf("plan: %v %v", plan, err)
	}
	if _, err := m.Forget(ctx, plan, ""); err != nil {
		t.Fatal(err)
	}
	for _, repair := range []bool{false, true, false} {
		rep, err := m.Check(ctx, repair)
		if err != nil || len(rep.Problems) != 0 {
			t.Fatalf("check (repair %v): %+v %v", repair, rep, err)
		}
	}
	st, err := m.Status()
	if err != nil || !st.UpToDate {
		t.Fatalf("status: %+v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(m.IndexDir(), reader.StaleMarker)); err == nil {
		t.Fatalf("status marked the index stale")
	}
	fsckStrict(t, m.Repo.Dir())
}

// TestCheckAcceptsPinsAndLinks: the commits that are not exchanges (a pin
// of a note, even as main's first commit, a pin of an exchange, a stated
// supersede link, the link an add writes when it completes a prompt stored
// alone) are well formed: check finds no problem. On main 2f6bf6d each
// was "carries no Exchange: trailer" (exit 1, not repairable): every
// memory whose add completed a prompt alone failed check.
func TestCheckAcceptsPinsAndLinks(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	check := func(step string) {
		t.Helper()
		rep, err := m.Check(ctx, false)
		if err != nil || len(rep.Problems) != 0 {
			t.Fatalf("check after %s: %+v %v", step, rep, err)
		}
	}
	if _, err := m.Pin(ctx, PinRequest{Note: "never force-push to main"}); err != nil {
		t.Fatal(err)
	}
	check("a note pinned in an empty memory")
	if _, err := m.Add(ctx, []*exchange.Exchange{exTurns("x", "why does the walrus deploy hang", "")}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := m.Add(ctx, []*exchange.Exchange{exTurns("x", "why does the walrus deploy hang", "an advisory lock")}, AddOptions{})
	if err != nil || rep.Reused != 1 {
		t.Fatalf("completing add: %+v %v", rep, err)
	}
	check("an add completed a prompt alone")
	if _, err := m.Add(ctx, []*exchange.Exchange{exTurns("y", "rotate the logs", "use logrotate")}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Pin(ctx, PinRequest{Ref: "y"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Supersede(ctx, "y", "x", false); err != nil {
		t.Fatal(err)
	}
	check("pins and a stated link")
	fsckStrict(t, m.Repo.Dir())
}
