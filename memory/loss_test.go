package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/hooks"
)

// mainTree lists main's tree (path and blob id, one a line; "" for no main).
func mainTree(t *testing.T, m *Memory) string {
	t.Helper()
	if exec.Command("git", "--git-dir", m.Repo.Dir(), "rev-parse", "--verify", "-q", "main").Run() != nil {
		return ""
	}
	out, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "ls-tree", "-r", "main").CombinedOutput()
	if err != nil {
		t.Fatalf("ls-tree: %v %s", err, out)
	}
	return string(out)
}

// exTurns is an exchange of a user prompt and, unless reply is "", the
// agent's reply.
func exTurns(id, user, reply string) *exchange.Exchange {
	e := &exchange.Exchange{ID: id, Session: "s", Time: "2026-01-02T00:00:00Z", Project: "p",
		Turns: []exchange.Turn{{Role: "user", Text: user}}}
	if reply != "" {
		e.Turns = append(e.Turns, exchange.Turn{Role: "assistant", Text: reply})
	}
	return e
}

func jsonlOf(t *testing.T, exs []*exchange.Exchange) string {
	t.Helper()
	var b strings.Builder
	for _, e := range exs {
		b.Write(e.Canonical())
		b.WriteByte('\n')
	}
	return b.String()
}

// TestAddSameIDTwiceInOneInput: two items of one id in one input (one
// file, or one add of two files; in one batch or two) are compared as an
// item is with a stored exchange: the same blob or the same first user
// turn is present, another exchange is stored under a derived id, and a
// prompt stored alone does not hide the exchange with its reply. A re-add
// adds nothing.
func TestAddSameIDTwiceInOneInput(t *testing.T) {
	type rec struct{ user, reply string }
	for _, tc := range []struct {
		name          string
		recs          []rec
		added, reused int
		has           []string
	}{
		{"other first user turn", []rec{{"rotate logs", "use logrotate"}, {"why is the quokka build slow", "the linker runs twice"}}, 2, 1, []string{"logrotate", "quokka"}},
		{"same blob", []rec{{"rotate logs", "use logrotate"}, {"rotate logs", "use logrotate"}}, 1, 0, []string{"logrotate"}},
		{"same first user turn, other reply", []rec{{"rotate logs", "use logrotate"}, {"rotate  logs", "use cron"}}, 1, 0, []string{"logrotate"}},
		{"prompt alone, then with its reply", []rec{{"rotate logs", ""}, {"rotate logs", "use logrotate"}}, 2, 1, []string{"logrotate"}},
		{"with its reply, then the prompt alone", []rec{{"rotate logs", "use logrotate"}, {"rotate logs", ""}}, 1, 0, []string{"logrotate"}},
		{"three versions", []rec{{"rotate logs", "use logrotate"}, {"why is the quokka build slow", "the linker runs twice"}, {"what about the zebra cache", "flush it with zebractl"}}, 3, 2, []string{"logrotate", "quokka", "zebractl"}},
	} {
		for _, mode := range []string{"one batch", "batches of 1", "two files", "Add"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				if mode == "batches of 1" {
					defer func(b int) { addBatch = b }(addBatch)
					addBatch = 1
				}
				m := newMemory(t)
				ctx := context.Background()
				dir := t.TempDir()
				add := func() AddReport {
					t.Helper()
					var exs []*exchange.Exchange
					for _, r := range tc.recs {
						exs = append(exs, exTurns("x", r.user, r.reply))
					}
					var rep AddReport
					var err error
					switch mode {
					case "Add":
						rep, err = m.Add(ctx, exs, AddOptions{NoIndex: true})
					case "two files":
						var files []string
						for i, e := range exs {
							f := filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i))
							if err := os.WriteFile(f, []byte(jsonlOf(t, []*exchange.Exchange{e})), 0o644); err != nil {
								t.Fatal(err)
							}
							files = append(files, f)
						}
						rep, err = m.AddFiles(ctx, files, nil, "exchange", AddOptions{NoIndex: true})
					default:
						f := filepath.Join(dir, "f.jsonl")
						if err := os.WriteFile(f, []byte(jsonlOf(t, exs)), 0o644); err != nil {
							t.Fatal(err)
						}
						rep, err = m.AddFiles(ctx, []string{f}, nil, "exchange", AddOptions{NoIndex: true})
					}
					if err != nil {
						t.Fatal(err)
					}
					return rep
				}
				rep := add()
				if rep.Added != tc.added || rep.Reused != tc.reused || rep.Present != len(tc.recs)-tc.added {
					t.Fatalf("add: %+v, want added %d reused %d present %d", rep, tc.added, tc.reused, len(tc.recs)-tc.added)
				}
				for _, s := range tc.has {
					if !grepMain(t, m, s) {
						t.Errorf("%q not stored", s)
					}
				}
				if rep := add(); rep.Added != 0 || rep.Present != len(tc.recs) {
					t.Fatalf("re-add: %+v, want added 0 present %d", rep, len(tc.recs))
				}
				fsckStrict(t, m.Repo.Dir())
			})
		}
	}
}

// TestAddInOneInputAsOneByOne: whatever an input holds (ids repeated,
// prompts repeated or alone, whitespace read differently), adding it in one
// call, or as a file in batches of 1 and 3, stores what adding its items
// one by one stores (random inputs; seed logged).
func TestAddInOneInputAsOneByOne(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	ids := []string{"x", "y", "x~0123456789ab"}
	users := []string{"rotate logs", "rotate  logs ", "why is the quokka build slow", "flush the zebra cache"}
	replies := []string{"", "", "use logrotate", "the linker runs twice", "zebractl"}
	ctx := context.Background()
	for round := 0; round < 8; round++ {
		n := 1 + rng.IntN(7)
		mk := func() []*exchange.Exchange {
			r := rand.New(rand.NewPCG(uint64(seed), uint64(round)+100))
			var exs []*exchange.Exchange
			for i := 0; i < n; i++ {
				exs = append(exs, exTurns(ids[r.IntN(len(ids))], users[r.IntN(len(users))], replies[r.IntN(len(replies))]))
			}
			return exs
		}
		one := newMemory(t)
		var want AddReport
		for _, e := range mk() {
			rep, err := one.Add(ctx, []*exchange.Exchange{e}, AddOptions{NoIndex: true})
			if err != nil {
				t.Fatal(err)
			}
			want.Added += rep.Added
			want.Present += rep.Present
			want.Reused += rep.Reused
		}
		wantTree := mainTree(t, one)
		for _, mode := range []string{"Add", "batches of 1", "batches of 3"} {
			m := newMemory(t)
			var rep AddReport
			var err error
			if mode == "Add" {
				rep, err = m.Add(ctx, mk(), AddOptions{NoIndex: true})
			} else {
				b := 1
				if mode == "batches of 3" {
					b = 3
				}
				func() {
					defer func(b int) { addBatch = b }(addBatch)
					addBatch = b
					f := filepath.Join(t.TempDir(), "f.jsonl")
					if err := os.WriteFile(f, []byte(jsonlOf(t, mk())), 0o644); err != nil {
						t.Fatal(err)
					}
					rep, err = m.AddFiles(ctx, []string{f}, nil, "exchange", AddOptions{NoIndex: true})
				}()
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Added != want.Added || rep.Present != want.Present || rep.Reused != want.Reused {
				t.Fatalf("round %d %s: %+v, one by one added %d present %d reused %d", round, mode, rep, want.Added, want.Present, want.Reused)
			}
			if got := mainTree(t, m); got != wantTree {
				t.Fatalf("round %d %s: tree\n%s\none by one:\n%s", round, mode, got, wantTree)
			}
			again, err := m.Add(ctx, mk(), AddOptions{NoIndex: true})
			if err != nil || again.Added != 0 {
				t.Fatalf("round %d %s: re-add %+v %v", round, mode, again, err)
			}
			fsckStrict(t, m.Repo.Dir())
		}
		fsckStrict(t, one.Repo.Dir())
	}
}

// ccLine is one Claude Code transcript record.
func ccLine(typ, uuid, parent, when string, content string) string {
	sess := "22222222-2222-4222-8222-222222222222"
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	msg := fmt.Sprintf(`{"role": "user", "content": %q}`, content)
	if typ == "assistant" {
		msg = fmt.Sprintf(`{"role": "assistant", "content": [{"type": "text", "text": %q}], "id": "m-%s"}`, content, uuid)
	}
	return fmt.Sprintf(`{"type": %q, "uuid": %q, "parentUuid": %s, "sessionId": %q, "timestamp": %q, "cwd": "/nonexistent/walrus", "isSidechain": false, "version": "2.1.114", "message": %s}`,
		typ, uuid, p, sess, when, msg) + "\n"
}

// TestAddPromptStoredAloneThenItsReply: a SessionEnd hook (or an add of a
// transcript left alone for a while, later resumed) stores an exchange
// whose reply is not written yet, a prompt alone or a prompt before a
// half-written last line; when the agent writes the reply, the next add
// stores the exchange with it under a derived id (the prompt alone stays),
// the reply is found by search, and a third add adds nothing. Through the
// Claude Code reader, as the hook worker reads (SessionEnded).
func TestAddPromptStoredAloneThenItsReply(t *testing.T) {
	prompt := ccLine("user", "u1", "", "2026-03-04T07:00:00Z", "why does the walrus deploy hang at the migration step")
	reply := ccLine("assistant", "a1", "u1", "2026-03-04T07:00:05Z", "the walrus migration waits on an advisory lock that the nightly cron job holds; release it before deploying")
	for _, tc := range []struct {
		name  string
		first string // the transcript at the first add
		probs int    // problems the first read reports
	}{
		{"prompt alone", prompt, 0},
		{"half-written reply line", prompt + reply[:len(reply)/2], 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemory(t)
			ctx := context.Background()
			f := filepath.Join(t.TempDir(), "22222222-2222-4222-8222-222222222222.jsonl")
			add := func(body string) AddReport { t.Helper(); return addTranscript(t, m, f, body) }
			rep := add(tc.first)
			if rep.Added != 1 || len(rep.Skipped) != tc.probs {
				t.Fatalf("first add: %+v", rep)
			}
			if grepMain(t, m, "advisory lock") {
				t.Fatalf("the reply is stored before it was written")
			}
			full := prompt + reply
			rep = add(full)
			if rep.Added != 1 || rep.Reused != 1 || rep.Present != 0 {
				t.Fatalf("add with the reply: %+v, want added 1 reused 1", rep)
			}
			if !grepMain(t, m, "advisory lock") {
				t.Fatalf("the reply is not stored")
			}
			res, _, err := m.Search(ctx, SearchQuery{Text: "walrus migration advisory lock cron", K: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) == 0 || res[0].Exchange != rep.Commits[0].Exchange {
				t.Fatalf("search: %+v, want %s first", res, rep.Commits[0].Exchange)
			}
			// The completed exchange supersedes its prompt alone: the prompt
			// comes right after it and says so.
			own := strings.SplitN(rep.Commits[0].Exchange, "~", 2)[0]
			if len(res) < 2 || res[1].Exchange != own || !slices.Contains(res[1].SupersededBy, rep.Commits[0].Exchange) {
				t.Fatalf("search: %+v, want %s second, superseded by %s", res, own, rep.Commits[0].Exchange)
			}
			if rep := add(full); rep.Added != 0 || rep.Present != 1 {
				t.Fatalf("third add: %+v, want added 0 present 1", rep)
			}
			// Never the other way: a longer reply to a stored one is the same
			// exchange read again.
			more := full + ccLine("assistant", "a2", "a1", "2026-03-04T07:00:09Z", "also check the walrus pool size")
			if rep := add(more); rep.Added != 0 || rep.Present != 1 {
				t.Fatalf("a longer reply: %+v, want added 0 present 1", rep)
			}
			fsckStrict(t, m.Repo.Dir())
		})
	}
}

// TestAddRaceStoresBetweenLookupAndAppend: another add stores an exchange
// under an id between this add's look-up and its append (the write lock):
// under the lock the path is taken. The item is present only when the blob
// there is its own or the same exchange (first user turn); another exchange
// sends it back through classify, and it is stored under its derived id (or
// the completed id, when what came in between is its prompt alone).
func TestAddRaceStoresBetweenLookupAndAppend(t *testing.T) {
	for _, tc := range []struct {
		name               string
		mine, theirs       *exchange.Exchange
		added, reused, has int
	}{
		{"another exchange", exTurns("x", "why is the quokka build slow", "the linker runs twice"), exTurns("x", "rotate logs", "use logrotate"), 1, 1, 2},
		{"the same blob", exTurns("x", "rotate logs", "use logrotate"), exTurns("x", "rotate logs", "use logrotate"), 0, 0, 1},
		{"the same first user turn", exTurns("x", "rotate logs", "use logrotate"), exTurns("x", "rotate  logs", "use cron"), 0, 0, 1},
		{"its prompt alone", exTurns("x", "rotate logs", "use logrotate"), exTurns("x", "rotate logs", ""), 1, 1, 2},
		{"a derived id taken", exTurns("x~0123456789ab", "rotate logs", "use logrotate"), exTurns("x~0123456789ab", "why is the quokka build slow", "the linker runs twice"), 1, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemory(t)
			other, err := Open(m.Repo.Dir())
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			mine := tc.mine.Canonical()
			rep := addWithTheirsBetween(t, m, other, []*exchange.Exchange{tc.mine}, tc.theirs)
			if rep.Added != tc.added || rep.Reused != tc.reused || rep.Present != 1-tc.added {
				t.Fatalf("add: %+v, want added %d reused %d", rep, tc.added, tc.reused)
			}
			if n := strings.Count(mainTree(t, m), "\n"); n != tc.has {
				t.Fatalf("%d exchanges stored, want %d", n, tc.has)
			}
			var ex exchange.Exchange
			if err := json.Unmarshal(mine, &ex); err != nil {
				t.Fatal(err)
			}
			if r, err := m.Add(ctx, []*exchange.Exchange{&ex}, AddOptions{NoIndex: true}); err != nil || r.Added != 0 {
				t.Fatalf("re-add: %+v %v", r, err)
			}
			fsckStrict(t, m.Repo.Dir())
		})
	}
}

// TestAddConcurrentSameIDs: two writers (two opens of one memory) add
// random versions of a few ids at once, each add one to three exchanges,
// with a random pause between each add's look-up and its append. Nothing
// is lost: afterwards one add of everything either wrote adds nothing
// (random; seed logged).
func TestAddConcurrentSameIDs(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	m := newMemory(t)
	ctx := context.Background()
	ids := []string{"x", "y", "z"}
	users := []string{"rotate logs", "why is the quokka build slow", "flush the zebra cache", "walrus deploy hangs"}
	replies := []string{"", "use logrotate", "the linker runs twice", "zebractl", "release the lock"}
	var pause [2]*rand.Rand
	for w := range pause {
		pause[w] = rand.New(rand.NewPCG(uint64(seed), uint64(w)+7))
	}
	var mu sync.Mutex
	testHookBeforeStore = func() {
		mu.Lock()
		d := time.Duration(pause[0].IntN(2000)) * time.Microsecond
		mu.Unlock()
		time.Sleep(d)
	}
	defer func() { testHookBeforeStore = nil }()
	before := storeRetries.Load()
	var all [2][]*exchange.Exchange
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for w := 0; w < 2; w++ {
		wm, err := Open(m.Repo.Dir())
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(w)))
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for n := 0; n < 30; n++ {
				var exs []*exchange.Exchange
				for k := 1 + rng.IntN(3); k > 0; k-- {
					e := exTurns(ids[rng.IntN(len(ids))], users[rng.IntN(len(users))], replies[rng.IntN(len(replies))])
					exs = append(exs, e)
					c := *e // Add sets a derived id on its own copy
					all[w] = append(all[w], &c)
				}
				if _, err := wm.Add(ctx, exs, AddOptions{NoIndex: true}); err != nil {
					errs[w] = err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d items classified again after their path was taken", storeRetries.Load()-before)
	for w := range all {
		for i, e := range all[w] {
			id := e.ID
			rep, err := m.Add(ctx, []*exchange.Exchange{e}, AddOptions{NoIndex: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Added != 0 {
				t.Fatalf("writer %d's exchange %d (%s %q) was lost: %+v", w, i, id, e.Turns, rep)
			}
		}
	}
	fsckStrict(t, m.Repo.Dir())
}

// TestForgetTakesEveryCopyOfAPrompt: a prompt stored alone and the exchange
// stored later under its completed id hold the same message of the person.
// A forget of either takes both (a forget of one alone kept the text in the
// other); an unrelated exchange, and one at a derived id without the link,
// stay.
func TestForgetTakesEveryCopyOfAPrompt(t *testing.T) {
	prompt := ccLine("user", "u1", "", "2026-03-04T07:00:00Z", "the walrus deploy token leaked in the migration log, what now")
	reply := ccLine("assistant", "a1", "u1", "2026-03-04T07:00:05Z", "rotate the walrus token and scrub the migration log")
	other := ccLine("user", "u9", "", "2026-03-04T08:00:00Z", "rename the heron service") +
		ccLine("assistant", "a9", "u9", "2026-03-04T08:00:04Z", "renamed the heron service")
	for _, by := range []string{"own id", "completed id"} {
		t.Run(by, func(t *testing.T) {
			m := newMemory(t)
			ctx := context.Background()
			dir := t.TempDir()
			add := func(name, body string) AddReport {
				t.Helper()
				return addTranscript(t, m, filepath.Join(dir, name), body)
			}
			first := add("33333333-3333-4333-8333-333333333333.jsonl", prompt)
			done := add("33333333-3333-4333-8333-333333333333.jsonl", prompt+reply)
			keep := add("44444444-4444-4444-8444-444444444444.jsonl", other)
			if first.Added != 1 || done.Reused != 1 || keep.Added != 1 {
				t.Fatalf("adds: %+v / %+v / %+v", first, done, keep)
			}
			own, completed := first.Commits[0].Exchange, done.Commits[0].Exchange
			ref := own
			if by == "completed id" {
				ref = completed
			}
			plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{ref}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range plan {
				got = append(got, e.Exchange)
			}
			slices.Sort(got)
			if want := []string{own, completed}; !slices.Equal(got, want) {
				t.Fatalf("plan %v, want %v", got, want)
			}
			if _, err := m.Forget(ctx, plan, ""); err != nil {
				t.Fatal(err)
			}
			if grepMain(t, m, "walrus deploy token") {
				t.Error("the prompt's text is still in main")
			}
			all, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "cat-file", "--batch-all-objects", "--batch").Output()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(all), "walrus deploy token") {
				t.Error("an object of the store still holds the prompt's text")
			}
			if !grepMain(t, m, "heron service") {
				t.Error("the unrelated exchange was forgotten too")
			}
			fsckStrict(t, m.Repo.Dir())
		})
	}
	// Without the supersede link an <id>~<12 hex> is another exchange.
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"x", "x~0123456789ab", true},
		{"x~0123456789ab", "x", true},
		{"x", "x~0123456789a", false},
		{"x", "x~0123456789aB", false},
		{"x", "y~0123456789ab", false},
		{"x", "x", false},
	} {
		if got := completionPair(c.a, c.b); got != c.want {
			t.Errorf("completionPair(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// addTranscript writes body as the Claude Code transcript f and adds it as
// its SessionEnd hook would.
func addTranscript(t *testing.T, m *Memory, f, body string) AddReport {
	t.Helper()
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := m.AddFile(context.Background(), f, "claude-code", hooks.Options{SessionEnded: true}, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// addWithTheirsBetween adds mine to m with other's add of theirs (another
// writer of the same memory) between the look-up and the append.
func addWithTheirsBetween(t *testing.T, m, other *Memory, mine []*exchange.Exchange, theirs *exchange.Exchange) AddReport {
	t.Helper()
	ctx := context.Background()
	todo, looked, rep, err := m.lookupItems(ctx, prepareAdd(mine, AddOptions{}), claims{})
	if err != nil {
		t.Fatalf("lookup: %d %v", len(todo), err)
	}
	if r, err := other.Add(ctx, []*exchange.Exchange{theirs}, AddOptions{NoIndex: true}); err != nil || r.Added != 1 {
		t.Fatalf("their add: %+v %v", r, err)
	}
	rep, err = m.storeItems(ctx, todo, looked, rep, AddOptions{NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
