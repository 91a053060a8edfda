package memory

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/memory/queue"
	"github.com/gitmem/git-mem/redact"
)

// writeOld writes a transcript and dates it an hour back, so that add does
// not keep its last exchange back as open (liveHold).
func writeOld(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func continueSession(pairs ...string) string {
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	type item struct {
		Message msg `json:"message"`
	}
	var hist []item
	for i, s := range pairs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		hist = append(hist, item{Message: msg{Role: role, Content: s}})
	}
	b, _ := json.Marshal(map[string]any{"sessionId": "sess-reuse", "workspaceDirectory": "/tmp/proj", "history": hist})
	return string(b)
}

func aiderHistory(pairs ...string) string {
	var b strings.Builder
	b.WriteString("\n# aider chat started at 2026-03-01 10:00:00\n\n")
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString("#### " + pairs[i] + "  \n\n" + pairs[i+1] + "\n\n")
	}
	return b.String()
}

// grepMain says whether any blob of main holds s.
func grepMain(t *testing.T, m *Memory, s string) bool {
	t.Helper()
	if exec.Command("git", "--git-dir", m.Repo.Dir(), "rev-parse", "--verify", "-q", "main").Run() != nil {
		return false // no main: nothing stored
	}
	out, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "grep", "-l", "-F", s, "main").CombinedOutput()
	if err != nil && len(out) != 0 {
		t.Fatalf("git grep: %v %s", err, out)
	}
	return len(out) > 0
}

// TestAddReusedPositionalID: an agent that rewrites a session's history
// (an edited earlier message, compaction) gives a new exchange an id built
// from its position that an exchange already stored holds. The new one is
// stored under a derived id; a re-read of either version adds nothing.
func TestAddReusedPositionalID(t *testing.T) {
	for _, tc := range []struct {
		format string
		render func(...string) string
	}{
		{"continue", continueSession},
		{"aider", aiderHistory},
	} {
		t.Run(tc.format, func(t *testing.T) {
			m := newMemory(t)
			ctx := context.Background()
			dir := t.TempDir()
			f := filepath.Join(dir, "session.json")
			if tc.format == "aider" {
				f = filepath.Join(dir, ".aider.chat.history.md")
			}
			add := func(body string) AddReport {
				t.Helper()
				writeOld(t, f, body)
				rep, err := m.AddFiles(ctx, []string{f}, nil, tc.format, AddOptions{NoIndex: true})
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			first := []string{"how do I rotate the logs", "use logrotate weekly", "what about the zebra cache", "flush it with zebractl"}
			if rep := add(tc.render(first...)); rep.Added != 2 {
				t.Fatalf("first add: %+v", rep)
			}
			rewritten := []string{"how do I rotate the logs", "use logrotate weekly", "why is the quokka build slow", "the quokka linker runs twice"}
			rep := add(tc.render(rewritten...))
			if rep.Added != 1 || rep.Present != 1 {
				t.Fatalf("rewritten add: %+v, want added 1 present 1", rep)
			}
			for _, s := range []string{"quokka linker", "zebractl", "logrotate"} {
				if !grepMain(t, m, s) {
					t.Errorf("%q not stored", s)
				}
			}
			// Deterministic: re-reading either version adds nothing.
			for i, body := range []string{tc.render(rewritten...), tc.render(first...)} {
				if rep := add(body); rep.Added != 0 || rep.Present != 2 {
					t.Fatalf("re-add %d: %+v, want added 0 present 2", i, rep)
				}
			}
		})
	}
}

// TestAddSameIDClassify: an item whose id is stored is present when it is
// the same exchange (the same blob, or the same first user turn: redacted
// or read differently), and another exchange under a derived id otherwise;
// an id a tombstone names stays forgotten, the derived one too.
func TestAddSameIDClassify(t *testing.T) {
	const when = "2026-01-02T00:00:00Z"
	type step struct {
		user, reply            string
		added, present, forgot int
		reused                 int
	}
	for _, tc := range []struct {
		name   string
		forget string // forget this id after the first step
		steps  []step
	}{
		{"same blob", "", []step{
			{"rotate logs", "use logrotate", 1, 0, 0, 0},
			{"rotate logs", "use logrotate", 0, 1, 0, 0},
		}},
		{"other reply, same prompt", "", []step{
			{"rotate logs", "use logrotate", 1, 0, 0, 0},
			{"rotate logs", "use [REDACTED:token] with logrotate", 0, 1, 0, 0},
		}},
		{"prompt whitespace read differently", "", []step{
			{"rotate  the\nlogs ", "use logrotate", 1, 0, 0, 0},
			{"rotate the logs", "use logrotate", 0, 1, 0, 0},
		}},
		{"other prompt: derived id, then present", "", []step{
			{"rotate logs", "use logrotate", 1, 0, 0, 0},
			{"why is the quokka build slow", "the linker runs twice", 1, 0, 0, 1},
			{"why is the quokka build slow", "the linker runs twice", 0, 1, 0, 0},
			{"rotate logs", "use logrotate", 0, 1, 0, 0},
			{"a third question", "a third reply", 1, 0, 0, 1},
		}},
		{"forgotten id stays forgotten, even for another prompt", "x", []step{
			{"rotate logs", "use logrotate", 1, 0, 0, 0},
			{"rotate logs", "use logrotate", 0, 0, 1, 0},
			{"why is the quokka build slow", "the linker runs twice", 0, 0, 1, 0},
		}},
		{"forgotten derived id stays forgotten", "derived", []step{
			{"rotate logs", "use logrotate", 1, 0, 0, 0},
			{"why is the quokka build slow", "the linker runs twice", 1, 0, 0, 1},
			{"why is the quokka build slow", "the linker runs twice", 0, 0, 1, 0},
			{"rotate logs", "use logrotate", 0, 1, 0, 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemory(t)
			ctx := context.Background()
			var derived string
			for i, s := range tc.steps {
				rep, err := m.Add(ctx, []*exchange.Exchange{ex("x", "s", when, s.user, s.reply)}, AddOptions{NoIndex: true})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Added != s.added || rep.Present != s.present || rep.Forgotten != s.forgot || rep.Reused != s.reused {
					t.Fatalf("step %d: %+v, want added %d present %d forgotten %d reused %d", i, rep, s.added, s.present, s.forgot, s.reused)
				}
				if s.reused > 0 && derived == "" {
					derived = rep.Commits[0].Exchange
					if !strings.HasPrefix(derived, "x~") || len(derived) != len("x~")+12 {
						t.Fatalf("derived id %q", derived)
					}
				}
				ref := tc.forget
				if ref == "derived" {
					ref = derived
				}
				if ref != "" && (i == 0 && ref == "x" || i == 1 && ref == derived) {
					plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{ref}})
					if err != nil || len(plan) != 1 {
						t.Fatalf("forget plan %q: %v %v", ref, plan, err)
					}
					if _, err := m.Forget(ctx, plan, ""); err != nil {
						t.Fatal(err)
					}
				}
			}
			if grepMain(t, m, "quokka") && tc.forget != "" {
				t.Errorf("forgotten or refused text in main")
			}
			out, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "fsck", "--strict").CombinedOutput()
			if err != nil {
				t.Fatalf("fsck: %v %s", err, out)
			}
		})
	}
}

// TestMootReasonSeesAReusedID: a failed hook job whose transcript's
// history was rewritten is not dropped as "all in main" while its new
// exchange, under a reused id, is not stored.
func TestMootReasonSeesAReusedID(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	f := filepath.Join(t.TempDir(), "session.json")
	writeOld(t, f, continueSession("how do I rotate the logs", "use logrotate weekly", "what about the zebra cache", "flush it with zebractl"))
	if rep, err := m.AddFiles(ctx, []string{f}, nil, "continue", AddOptions{NoIndex: true}); err != nil || rep.Added != 2 {
		t.Fatalf("add: %+v %v", rep, err)
	}
	job := Job{Job: queue.Job{Kind: "continue", Transcript: f, Event: "SessionEnd"}}
	if r := m.mootReason(job); r == "" {
		t.Fatalf("a stored transcript's job is not moot")
	}
	writeOld(t, f, continueSession("how do I rotate the logs", "use logrotate weekly", "why is the quokka build slow", "the quokka linker runs twice"))
	if r := m.mootReason(job); r != "" {
		t.Fatalf("rewritten transcript's job dropped: %s", r)
	}
	if rep, err := m.AddFiles(ctx, []string{f}, nil, "continue", AddOptions{NoIndex: true}); err != nil || rep.Added != 1 || rep.Reused != 1 {
		t.Fatalf("add rewritten: %+v %v", rep, err)
	}
	if r := m.mootReason(job); r == "" {
		t.Fatalf("the rewritten transcript, stored, is not moot")
	}
}

// TestGitBlobIDMatchesGoGit: the id classify compares with a tree entry is
// the one go-git gives the blob it writes (random inputs; seed logged).
func TestGitBlobIDMatchesGoGit(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for i := 0; i < 200; i++ {
		b := make([]byte, rng.IntN(1<<(i%17)+1))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		if got, want := gitstore.BlobID(b), plumbing.ComputeHash(plumbing.BlobObject, b); got != want {
			t.Fatalf("len %d: %s, go-git %s", len(b), got, want)
		}
	}
}

// TestAddSameIDStoredBeforeARedactionRule: an exchange stored before a
// redaction rule covered a secret in its prompt is present when re-read
// (its redacted prompt differs from the stored one, the prompt as read
// does not): never stored twice.
func TestAddSameIDStoredBeforeARedactionRule(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	secret := "ghp_" + strings.Repeat("aB3dE5gH7j", 4)[:36]
	prompt := "why does the push fail with token " + secret
	old := ex("x", "s", "2026-01-02T00:00:00Z", prompt, "the token expired")
	if _, err := m.Repo.Append([]gitstore.Entry{{Path: exchange.BlobPath("x"), Blob: old.Canonical(),
		Message: "stored unredacted\n\nExchange: x", When: time.Now()}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := redact.Exchange(ex("x", "s", "", prompt, "")); n == 0 {
		t.Fatalf("the test secret is not redacted")
	}
	rep, err := m.Add(ctx, []*exchange.Exchange{ex("x", "s", "2026-01-02T00:00:00Z", prompt, "the token expired")}, AddOptions{NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 0 || rep.Present != 1 {
		t.Fatalf("re-read of an exchange stored before a rule: %+v, want present", rep)
	}
}
