package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// machine is one memory driven through the built binary.
type machine struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

func newMachine(t *testing.T, bin, dir, home string) *machine {
	return &machine{t: t, bin: bin, dir: dir, env: append(os.Environ(), "GIT_MEM_DIR="+dir, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_MEM_AUTO_REPACK=0")}
}

func (m *machine) run(args ...string) (string, error) {
	c := exec.Command(m.bin, args...)
	c.Env = m.env
	out, err := c.CombinedOutput()
	return string(out), err
}

func (m *machine) must(args ...string) string {
	m.t.Helper()
	out, err := m.run(args...)
	if err != nil {
		m.t.Fatalf("%s: git mem %v: %v\n%s", filepath.Base(m.dir), args, err, out)
	}
	return out
}

func (m *machine) ids() map[string]bool {
	m.t.Helper()
	var cards []struct{ Exchange string }
	if err := json.Unmarshal([]byte(m.must("log", "--json")), &cards); err != nil {
		m.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, c := range cards {
		if out[c.Exchange] {
			m.t.Errorf("%s: %s twice in the log", m.dir, c.Exchange)
		}
		out[c.Exchange] = true
	}
	return out
}

// holds reports where under a git dir the text still is: an object the
// refs reach, any object at all, or a plain file (index, cache, queue, log).
func holds(t *testing.T, dir, text string) []string {
	t.Helper()
	var where []string
	reach, err := exec.Command("sh", "-c", "git --git-dir '"+dir+"' rev-list --all --objects | cut -d' ' -f1 | git --git-dir '"+dir+"' cat-file --batch").Output()
	if err != nil {
		t.Fatalf("rev-list %s: %v", dir, err)
	}
	if bytes.Contains(reach, []byte(text)) {
		where = append(where, "a reachable object")
	}
	all, err := exec.Command("git", "--git-dir", dir, "cat-file", "--batch-all-objects", "--batch", "--unordered").Output()
	if err != nil {
		t.Fatalf("cat-file %s: %v", dir, err)
	}
	if bytes.Contains(all, []byte(text)) {
		where = append(where, "an object")
	}
	if out, _ := exec.Command("grep", "-rl", "--", text, dir).Output(); len(out) > 0 {
		where = append(where, "files: "+strings.TrimSpace(string(out)))
	}
	return where
}

func heavyBinary(t *testing.T) (work, bin string) {
	t.Helper()
	if os.Getenv("GIT_MEM_HEAVY") != "1" {
		t.Skip("heavy: set GIT_MEM_HEAVY=1")
	}
	work = t.TempDir()
	bin = filepath.Join(work, "git-mem")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return work, bin
}

func writeExchanges(t *testing.T, path, prefix string, n int, text func(i int) string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(f, `{"id":"%s-%d","session":"%s-s%d","time":"2026-03-01T10:%02d:00Z","turns":[{"role":"user","text":%q},{"role":"assistant","text":"done %d"}]}`+"\n",
			prefix, i, prefix, i/10, i%60, text(i), i)
	}
	f.Close()
}

// TestHeavyForgetThreeMachines is the privacy issue's check: A forgets an
// exchange holding a secret while B adds exchanges of its own; A, B and C
// sync. Then no machine and no object the bare remote's refs reach holds
// the secret (nor any object of the remote after its own gc), search,
// log and check agree everywhere, fsck --strict is clean, every other
// exchange is intact with its id, and re-importing brings nothing back.
func TestHeavyForgetThreeMachines(t *testing.T) {
	work, bin := heavyBinary(t)
	remote := filepath.Join(work, "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remote).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	const secret = "marmoset-9931-quince"
	ms := map[string]*machine{}
	for _, n := range []string{"a", "b", "c"} {
		ms[n] = newMachine(t, bin, filepath.Join(work, n+".git"), work)
		ms[n].must("init")
		ms[n].must("remote", "add", "origin", remote)
	}
	a, b, c := ms["a"], ms["b"], ms["c"]
	first := filepath.Join(work, "first.jsonl")
	writeExchanges(t, first, "x", 400, func(i int) string {
		if i == 137 {
			return "the staging vault phrase is " + secret + ", rotate it monthly"
		}
		return fmt.Sprintf("heron task %d about retries and backoff", i)
	})
	a.must("add", first)
	a.must("sync")
	b.must("sync")
	c.must("sync")
	extra := filepath.Join(work, "extra.jsonl")
	writeExchanges(t, extra, "y", 60, func(i int) string { return fmt.Sprintf("walrus task %d on b alone", i) })
	b.must("add", extra)
	a.must("forget", "x-137", "--yes", "--reason", "a secret")
	a.must("sync")
	b.must("sync")
	c.must("sync")
	a.must("sync")
	c.must("sync")

	want := map[string]bool{}
	for i := 0; i < 400; i++ {
		if i != 137 {
			want[fmt.Sprintf("x-%d", i)] = true
		}
	}
	for i := 0; i < 60; i++ {
		want[fmt.Sprintf("y-%d", i)] = true
	}
	for name, m := range ms {
		got := m.ids()
		if len(got) != len(want) {
			t.Errorf("%s: %d exchanges, want %d", name, len(got), len(want))
		}
		for id := range want {
			if !got[id] {
				t.Errorf("%s lost %s", name, id)
			}
		}
		if w := holds(t, m.dir, secret); len(w) > 0 {
			t.Errorf("%s still holds the secret in %v", name, w)
		}
		if out := m.must("search", secret, "--json"); strings.Contains(out, "x-137") {
			t.Errorf("%s: search finds the forgotten exchange", name)
		}
		m.must("check")
		if out, err := exec.Command("git", "--git-dir", m.dir, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
			t.Errorf("%s: fsck: %v\n%s", name, err, out)
		}
	}
	if w := holds(t, remote, secret); len(w) > 0 && w[0] == "a reachable object" {
		t.Errorf("an object the remote's refs reach holds the secret")
	}
	// What a hosted remote does in its own time (the README says so).
	if out, err := exec.Command("git", "--git-dir", remote, "gc", "-q", "--prune=now").CombinedOutput(); err != nil {
		t.Fatalf("gc: %v %s", err, out)
	}
	if w := holds(t, remote, secret); len(w) > 0 {
		t.Errorf("the remote holds the secret after its gc: %v", w)
	}
	// Re-importing the transcript on any machine brings nothing back.
	for name, m := range ms {
		m.must("add", first)
		if m.ids()["x-137"] {
			t.Errorf("%s: re-import brought the forgotten exchange back", name)
		}
	}
	a.must("sync")
	if c.must("sync"); c.ids()["x-137"] {
		t.Error("c: sync after re-imports brought it back")
	}
}

// TestHeavyForgetKill kills a forget with SIGKILL at random moments, 12 times
// (GIT_MEM_HEAVY=1; GIT_MEM_KILL_SEED replays). Each time the memory is in
// the old state (the exchange kept, no tombstone) or the new one (a
// tombstone, and once the next command ran, the exchange out of main and
// of every object), never lost anything else, and check and fsck are clean.
func TestHeavyForgetKill(t *testing.T) {
	work, bin := heavyBinary(t)
	seed := time.Now().UnixNano()
	if s := os.Getenv("GIT_MEM_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (GIT_MEM_KILL_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	m := newMachine(t, bin, filepath.Join(work, "mem.git"), work)
	m.must("init")
	const n = 1500
	all := filepath.Join(work, "all.jsonl")
	marker := func(i int) string { return fmt.Sprintf("okapi%dzx", i*7919) }
	writeExchanges(t, all, "k", n, func(i int) string { return "note " + marker(i) + " on the build cache" })
	m.must("add", all)
	alive := map[string]bool{}
	for i := 0; i < n; i++ {
		alive[fmt.Sprintf("k-%d", i)] = true
	}
	extra := 0
	// How long a forget takes here, so that the kills land inside one.
	t0 := time.Now()
	m.must("forget", "k-0", "--yes")
	span := time.Since(t0)
	delete(alive, "k-0")
	t.Logf("one forget: %s", span)
	killed, finished := 0, 0
	for round := 0; round < 40 && killed < 12; round++ {
		i := rng.Intn(n)
		id := fmt.Sprintf("k-%d", i)
		if !alive[id] {
			continue
		}
		c := exec.Command(bin, "forget", id, "--yes")
		c.Env = m.env
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		start := time.Now()
		select {
		case <-done:
			finished++
			span = time.Since(start) // forgets get faster once the packs settle
		case <-time.After(time.Duration(rng.Int63n(int64(span) * 9 / 10))):
			_ = c.Process.Signal(syscall.SIGKILL)
			<-done
			killed++
		}
		tomb := exec.Command("git", "--git-dir", m.dir, "cat-file", "-e", "refs/mem/tombstones:"+"t/"+strings.TrimPrefix(exchange.BlobPath(id), "ex/")).Run() == nil
		// The next command (an add) finishes what the kill interrupted.
		next := filepath.Join(work, fmt.Sprintf("next-%d.jsonl", round))
		writeExchanges(t, next, fmt.Sprintf("n%d", round), 1, func(int) string { return "after the kill" })
		m.must("add", next)
		alive[fmt.Sprintf("n%d-0", round)] = true
		extra++
		got := m.ids()
		if tomb {
			delete(alive, id)
			if got[id] {
				t.Fatalf("round %d: %s has a tombstone but is still in main after the next add", round, id)
			}
			if w := holds(t, m.dir, marker(i)); len(w) > 0 {
				t.Fatalf("round %d: forgotten %s still in %v", round, id, w)
			}
		} else if !got[id] {
			t.Fatalf("round %d: %s left main without a tombstone", round, id)
		}
		for a := range alive {
			if !got[a] {
				t.Fatalf("round %d: %s lost", round, a)
			}
		}
		if len(got) != len(alive) {
			t.Fatalf("round %d: %d in main, want %d", round, len(got), len(alive))
		}
		if out, err := m.run("check"); err != nil {
			t.Fatalf("round %d: check: %v\n%s", round, err, out)
		}
		if out, err := exec.Command("git", "--git-dir", m.dir, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
			t.Fatalf("round %d: fsck: %v\n%s", round, err, out)
		}
	}
	t.Logf("%d forgets killed, %d finished, %d exchanges left", killed, finished, len(alive))
	if killed < 12 {
		t.Fatalf("only %d kills in 40 rounds", killed)
	}
}
