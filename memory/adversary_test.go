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

// TestAddRaceTakesTheClaimedPromptAlone: one input holds two versions of
// one exchange (one id): the add claims the id for the first and settles
// the second against that claim (the prompt alone, then the exchange with
// its reply, which goes to the completed id of the claim; or the second
// present, the same first user turn). Another writer stores under the id
// between this add's look-up and its append, so the first is not stored
// there. What was settled against the claim must be settled as if the
// other writer's exchange had been stored before the add looked: never a
// second card of an exchange main holds with its reply, never a supersede
// link to an unrelated exchange, nothing lost that the serial order
// stores; and a re-add of the same input, or of each item alone, adds
// nothing.
func TestAddRaceTakesTheClaimedPromptAlone(t *testing.T) {
	const user, reply = "why does the walrus deploy hang", "an advisory lock the nightly cron holds"
	alone := func() *exchange.Exchange { return exTurns("x", user, "") }
	full := func() *exchange.Exchange { return exTurns("x", user, reply) }
	other := func() *exchange.Exchange { return exTurns("x", user, "the migration step is slow") }
	for _, tc := range []struct {
		name   string
		input  func() []*exchange.Exchange
		theirs *exchange.Exchange
	}{
		{"prompt alone then reply, theirs another exchange", func() []*exchange.Exchange { return []*exchange.Exchange{alone(), full()} }, exTurns("x", "rotate the quokka logs", "use logrotate")},
		{"prompt alone then reply, theirs another reply", func() []*exchange.Exchange { return []*exchange.Exchange{alone(), full()} }, other()},
		{"prompt alone then reply, theirs the same reply", func() []*exchange.Exchange { return []*exchange.Exchange{alone(), full()} }, full()},
		{"prompt alone then reply, theirs another prompt alone", func() []*exchange.Exchange { return []*exchange.Exchange{alone(), full()} }, func() *exchange.Exchange { e := alone(); e.Session = "s2"; return e }()},
		{"reply then prompt alone, theirs another exchange", func() []*exchange.Exchange { return []*exchange.Exchange{full(), alone()} }, exTurns("x", "rotate the quokka logs", "use logrotate")},
		{"reply then another reply, theirs another exchange", func() []*exchange.Exchange { return []*exchange.Exchange{full(), other()} }, exTurns("x", "rotate the quokka logs", "use logrotate")},
		{"prompt alone, reply, another reply, theirs another exchange", func() []*exchange.Exchange { return []*exchange.Exchange{alone(), full(), other()} }, exTurns("x", "rotate the quokka logs", "use logrotate")},
		{"prompt alone, reply, another reply, theirs another prompt alone", func() []*exchange.Exchange { return []*exchange.Exchange{alone(), full(), other()} }, func() *exchange.Exchange { e := alone(); e.Session = "s2"; return e }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			// The serial order: theirs first, then the input.
			serial := newMemory(t)
			if _, err := serial.Add(ctx, []*exchange.Exchange{tc.theirs}, AddOptions{NoIndex: true}); err != nil {
				t.Fatal(err)
			}
			want, err := serial.Add(ctx, tc.input(), AddOptions{NoIndex: true})
			if err != nil {
				t.Fatal(err)
			}
			wantTree := mainTree(t, serial)

			m := newMemory(t)
			other, err := Open(m.Repo.Dir())
			if err != nil {
				t.Fatal(err)
			}
			rep := addWithTheirsBetween(t, m, other, tc.input(), tc.theirs)
			if rep.Added != want.Added || rep.Present != want.Present {
				t.Errorf("add: added %d present %d, want %d %d as when theirs came first", rep.Added, rep.Present, want.Added, want.Present)
			}
			if got := mainTree(t, m); got != wantTree {
				t.Errorf("main holds\n%swant as when theirs came first\n%s", got, wantTree)
			}
			if got, w := supersedeLinks(t, m), supersedeLinks(t, serial); strings.Join(got, ",") != strings.Join(w, ",") {
				t.Errorf("supersede links %q, want %q as when theirs came first", got, w)
			}
			if r, err := m.Add(ctx, tc.input(), AddOptions{NoIndex: true}); err != nil || r.Added != 0 {
				t.Errorf("re-add: %+v %v, want nothing added", r, err)
			}
			for _, e := range tc.input() {
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
