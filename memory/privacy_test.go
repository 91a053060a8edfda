package memory

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory/queue"
	"github.com/gitmem/git-mem/redact/redacttest"
)

// gitDirHolds lists where under dir the needle is: every git object
// decompressed (git cat-file --batch-all-objects, loose and packed) and
// every file raw (indexes, caches, queue, logs).
func gitDirHolds(t *testing.T, dir string, needles []string) map[string][]string {
	t.Helper()
	objs, err := exec.Command("git", "--git-dir", dir, "cat-file", "--batch-all-objects", "--batch").Output()
	if err != nil {
		t.Fatalf("cat-file: %v", err)
	}
	found := map[string][]string{}
	for _, n := range needles {
		if bytes.Contains(objs, []byte(n)) {
			found[n] = append(found[n], "a git object")
		}
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				found[n] = append(found[n], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// Every secret class of issue 14, in user, assistant and tool turns, goes
// through the real pipeline (redact, distill, commit, index, search) and
// reaches no file under the git dir; look-alikes come back unchanged.
func TestNoSecretClassReachesTheGitDir(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	const seed = 2026
	t.Logf("seed %d", seed)
	var exs []*exchange.Exchange
	var secrets []string
	for i, c := range redacttest.Classes(seed) {
		secrets = append(secrets, c.Secrets...)
		exs = append(exs, &exchange.Exchange{
			ID: fmt.Sprintf("secret-%03d", i), Session: "s1", Time: "2026-01-01T00:00:00Z", Project: "p",
			Turns: []exchange.Turn{
				{Role: "user", Text: "set up the " + c.Class + " config: " + c.Text},
				{Role: "tool", Name: "Bash", Input: map[string]any{"command": c.Text}, Text: c.Text},
				{Role: "assistant", Text: "Done. I used " + strings.Join(c.Secrets, " and ") + " as you said."},
			},
		})
	}
	looks := redacttest.LookAlikes()
	for i, s := range looks {
		exs = append(exs, ex(fmt.Sprintf("look-%03d", i), "s2", "2026-01-02T00:00:00Z", "check this: "+s, "noted"))
	}
	rep, err := m.Add(ctx, exs, AddOptions{})
	if err != nil || rep.Added != len(exs) || !rep.Indexed {
		t.Fatalf("add: added %d of %d, indexed %v, %v", rep.Added, len(exs), rep.Indexed, err)
	}
	for _, q := range []string{"config password token key", "webhook url", "mysql sshpass redis"} {
		res, _, err := m.Search(ctx, SearchQuery{Text: q, K: 50})
		if err != nil || len(res) == 0 {
			t.Fatalf("search %q: %d results, %v", q, len(res), err)
		}
		for _, r := range res {
			line := fmt.Sprintf("%+v", r)
			for _, s := range secrets {
				if strings.Contains(line, s) {
					t.Errorf("search %q shows secret %q", q, s)
				}
			}
		}
	}
	if _, err := m.Entries(); err != nil {
		t.Fatal(err)
	}
	check := func(stage string) {
		for s, where := range gitDirHolds(t, m.Repo.Dir(), secrets) {
			t.Errorf("%s: secret %q is in %v", stage, s, where)
		}
	}
	check("after add")
	if err := m.Repo.Repack(); err != nil {
		t.Fatal(err)
	}
	check("after repack")
	for i, s := range looks {
		_, blob, err := m.Show(fmt.Sprintf("look-%03d", i))
		if err != nil {
			t.Fatalf("show look-alike %d: %v", i, err)
		}
		got, err := exchange.Parse(blob)
		if err != nil {
			t.Fatal(err)
		}
		if got.Turns[0].Text != "check this: "+s {
			t.Errorf("look-alike changed: %q -> %q", s, got.Turns[0].Text)
		}
	}
}

// claudeSession is a Claude Code transcript whose last exchange has no
// closing marker: only the hook's final reply closes it.
func claudeSession(reply string) string {
	return `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"33333333-3333-4333-8333-333333333333","timestamp":"2026-04-01T09:00:00Z","cwd":"/nonexistent/app","isSidechain":false,"message":{"role":"user","content":"rotate the deploy token"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"33333333-3333-4333-8333-333333333333","timestamp":"2026-04-01T09:00:05Z","cwd":"/nonexistent/app","isSidechain":false,"message":{"role":"assistant","id":"m1","content":[{"type":"text","text":` + fmt.Sprintf("%q", reply) + `}]}}
`
}

// The hook's job files hold no clear text of the final reply, in the queue
// nor in failed/, and the worker still closes the last exchange with it.
func TestQueueFilesHoldNoClearText(t *testing.T) {
	m := newMemory(t)
	secret := "ghp_" + strings.Repeat("Zk4mQ", 7) + "w"
	reply := "Rotated. The new token is " + secret + " and the old one is revoked."
	dir := t.TempDir()
	tr := filepath.Join(dir, "session.jsonl")
	if err := os.WriteFile(tr, []byte(claudeSession(reply)), 0o644); err != nil {
		t.Fatal(err)
	}
	job := Job{Job: queue.Job{Kind: "claude-code", Transcript: tr, SessionID: "33333333-3333-4333-8333-333333333333", Event: "Stop", LastAssistantMessage: reply}}
	if err := m.Enqueue(job); err != nil {
		t.Fatal(err)
	}
	// A job that will fail, so that failed/ is written too: a transcript
	// that cannot be read (a missing one is dropped as moot).
	job.Transcript = filepath.Join(dir, "unreadable.jsonl")
	if err := os.Mkdir(job.Transcript, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.Enqueue(job); err != nil {
		t.Fatal(err)
	}
	assertQueueClean := func(stage string, needles ...string) {
		for s, where := range gitDirHolds(t, m.Repo.Dir(), needles) {
			t.Errorf("%s: %q is in %v", stage, s, where)
		}
	}
	assertQueueClean("queued", secret, "Rotated. The new")
	for i := 0; i < maxAttempts; i++ {
		if err := m.RunQueue(context.Background(), t.Logf); err != nil {
			t.Fatal(err)
		}
	}
	failed, err := m.Jobs(true)
	if err != nil || len(failed) != 1 || failed[0].LastAssistantDigest == "" || failed[0].LastAssistantMessage != "" {
		t.Fatalf("failed jobs: %+v %v", failed, err)
	}
	assertQueueClean("after the worker", secret)
	got, err := m.Log(Filter{}, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("the final reply's digest did not close the exchange: %d stored, %v", len(got), err)
	}
}

// <private> spans never reach the blob, the card, the index or any cache.
func TestPrivateSpansNeverStored(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	in := &exchange.Exchange{ID: "priv", Session: "s", Time: "2026-01-01T00:00:00Z", Turns: []exchange.Turn{
		{Role: "user", Text: "<private>quuxsecretuser</private>fix the login redirect"},
		{Role: "tool", Name: "Bash", Input: map[string]any{"command": "grep <private>quuxsecretinput</private> -r ."}, Text: "<private>quuxsecretoutput"},
		{Role: "assistant", Text: "Fixed the login redirect. <private>quuxsecretreply"},
	}}
	if _, err := m.Add(ctx, []*exchange.Exchange{in}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	res, _, err := m.Search(ctx, SearchQuery{Text: "login redirect"})
	if err != nil || len(res) != 1 {
		t.Fatalf("search: %v %v", res, err)
	}
	if _, err := m.Entries(); err != nil {
		t.Fatal(err)
	}
	for s, where := range gitDirHolds(t, m.Repo.Dir(), []string{"quuxsecret"}) {
		t.Errorf("%q is in %v", s, where)
	}
}

// A failed job written by an older version kept the final reply in clear;
// the first look at the queue rewrites it as a digest.
func TestOldFailedJobLosesItsClearText(t *testing.T) {
	m := newMemory(t)
	const token = "ghp_" + "Zq8nW3kLp0Rt5vXy2Ab7Cd9Ef1Gh4Ij6Kl3M"
	dir := m.failedDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "1700000000000000000-abcd0123.json")
	old := `{"kind":"claude-code","transcript":"/gone.jsonl","session_id":"s","event":"Stop","last_assistant_message":"use ` + token + ` for the api","queued":"2026-01-01T00:00:00Z","attempts":3,"last_error":"x"}`
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs, err := m.Jobs(true)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %v %v", jobs, err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), token) || strings.Contains(string(b), "last_assistant_message") {
		t.Fatalf("the job file still holds the reply: %s", b)
	}
	if jobs[0].LastAssistantDigest == "" || !strings.Contains(string(b), jobs[0].LastAssistantDigest) {
		t.Fatalf("no digest kept: %s", b)
	}
}
