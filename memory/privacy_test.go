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
