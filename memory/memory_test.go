package memory

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/exchange"
)

func newMemory(t *testing.T) *Memory {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	m, created, err := Init(filepath.Join(t.TempDir(), "mem.git"))
	if err != nil || !created {
		t.Fatalf("init: %v", err)
	}
	return m
}

func ex(id, session, when, user, reply string) *exchange.Exchange {
	return &exchange.Exchange{ID: id, Session: session, Time: when, Project: "p",
		Turns: []exchange.Turn{{Role: "user", Text: user}, {Role: "assistant", Text: reply}}}
}

func TestAddLogShowAndEntryCache(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	rep, err := m.Add(ctx, []*exchange.Exchange{
		ex("a", "s1", "2026-01-02T00:00:00Z", "fix the flaky retry test", "raised the timeout in retry_test.go"),
		ex("b", "s1", "2026-01-01T00:00:00Z", "rename calcTax", "renamed calcTax to computeTax"),
	}, AddOptions{})
	if err != nil || rep.Added != 2 || !rep.Indexed {
		t.Fatalf("add: %+v %v", rep, err)
	}
	got, err := m.Log(Filter{}, 0)
	if err != nil || len(got) != 2 || got[0].Exchange != "a" || got[1].Exchange != "b" {
		t.Fatalf("log: %v %v", got, err)
	}
	// The cache is extended, not rebuilt, by a later add; a new exchange with
	// an older time still sorts by its own time.
	if _, err := m.Add(ctx, []*exchange.Exchange{ex("c", "s2", "2025-12-31T00:00:00Z", "older work", "done")}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ = m.Log(Filter{}, 0)
	if len(got) != 3 || got[2].Exchange != "c" {
		t.Fatalf("log after add: %v", ids(got))
	}
	got, _ = m.Log(Filter{Session: "s1"}, 1)
	if len(got) != 1 || got[0].Exchange != "a" {
		t.Fatalf("log -n 1 --session s1: %v", ids(got))
	}
	e, blob, err := m.Show(got[0].Short)
	if err != nil || e.Exchange != "a" || !bytes.Contains(blob, []byte("flaky retry")) {
		t.Fatalf("show by commit: %v %s %v", e, blob, err)
	}
	if _, _, err := m.Show("nope"); err == nil {
		t.Fatal("show of a missing id succeeded")
	}
	// Deleting the cache loses nothing.
	os.Remove(m.EntryCachePath())
	got, _ = m.Log(Filter{}, 0)
	if len(got) != 3 {
		t.Fatalf("log without cache: %v", ids(got))
	}
}

func ids(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Exchange)
	}
	return out
}

// A secret in the input is in no git object and no file under the git dir.
func TestSecretsNeverStored(t *testing.T) {
	m := newMemory(t)
	secret := "ghp_" + strings.Repeat("Ab3dE", 7) + "x"
	in := ex("s", "s1", "2026-01-01T00:00:00Z", "use token "+secret+" for the deploy", "deployed with GITHUB_TOKEN="+secret)
	rep, err := m.Add(context.Background(), []*exchange.Exchange{in}, AddOptions{})
	if err != nil || rep.Redacted == 0 {
		t.Fatalf("add: %+v %v", rep, err)
	}
	if _, _, err := m.Search(context.Background(), SearchQuery{Text: "deploy token"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Repo.Repack(); err != nil {
		t.Fatal(err)
	}
	// Every object, decompressed.
	out, err := exec.Command("sh", "-c", "git --git-dir '"+m.Repo.Dir()+"' cat-file --batch-all-objects --batch").Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(secret)) {
		t.Fatal("the secret is in a git object")
	}
	if !bytes.Contains(out, []byte("[REDACTED:")) {
		t.Fatal("no redaction marker in the stored objects")
	}
	// Every file under the git dir (indexes, caches, logs), raw.
	err = filepath.Walk(m.Repo.Dir(), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("the secret is in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSearchAfterIndexDeletedIsIdentical(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	var exs []*exchange.Exchange
	for i, txt := range []string{"retry timeout in the webhook", "webhook signature check", "timeout of the db pool", "retry the webhook on 500", "unrelated css change"} {
		exs = append(exs, ex(string(rune('a'+i)), "s", "2026-01-01T00:00:00Z", txt, "done: "+txt))
	}
	if _, err := m.Add(ctx, exs, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	q := SearchQuery{Text: "webhook retry timeout", K: 5}
	before, _, err := m.Search(ctx, q)
	if err != nil || len(before) == 0 {
		t.Fatalf("search: %v %v", before, err)
	}
	if err := os.RemoveAll(m.IndexDir()); err != nil {
		t.Fatal(err)
	}
	after, _, err := m.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("%d results before, %d after", len(before), len(after))
	}
	for i := range before {
		if before[i].Exchange != after[i].Exchange {
			t.Fatalf("result %d: %s before, %s after", i, before[i].Exchange, after[i].Exchange)
		}
	}
	if _, err := m.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	again, _, _ := m.Search(ctx, q)
	for i := range before {
		if before[i].Exchange != again[i].Exchange {
			t.Fatalf("after reindex, result %d: %s before, %s after", i, before[i].Exchange, again[i].Exchange)
		}
	}
}

// A 20 MB exchange (a huge tool output) is stored whole and searchable.
func TestLargeExchangeIsStored(t *testing.T) {
	m := newMemory(t)
	big := strings.Repeat("log line with nothing special 0123456789\n", 20<<20/41)
	in := &exchange.Exchange{ID: "big", Session: "s", Time: "2026-01-01T00:00:00Z", Turns: []exchange.Turn{
		{Role: "user", Text: "why is the build log so long? look for the zebra warning"},
		{Role: "tool", Name: "Bash", Input: map[string]any{"command": "make"}, Text: big + "warning: zebra stripes misaligned\n"},
		{Role: "assistant", Text: "The zebra warning comes from the stripes module."}}}
	rep, err := m.Add(context.Background(), []*exchange.Exchange{in}, AddOptions{})
	if err != nil || rep.Added != 1 {
		t.Fatalf("add: %+v %v", rep, err)
	}
	_, blob, err := m.Show("big")
	if err != nil || len(blob) < 20<<20 {
		t.Fatalf("show: %d bytes, %v", len(blob), err)
	}
	res, _, err := m.Search(context.Background(), SearchQuery{Text: "zebra warning", K: 1})
	if err != nil || len(res) != 1 || res[0].Exchange != "big" {
		t.Fatalf("search: %v %v", res, err)
	}
}

// The index reads an exchange's talk and its tools' results apart: the
// default mode ranks the exchange that talks about a thing above one whose
// tool output repeats it, and both modes still find a word seen only in a
// tool's output.
func TestToolOutputIndexedApart(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	talk := ex("talk", "s1", "2026-01-01T00:00:00Z", "why is the login test flaky?", "It clicked before the redirect finished; it now waits for the redirect.")
	tool := ex("tool", "s2", "2026-01-02T00:00:00Z", "grep the old logs", "Here is what I found.")
	tool.Turns = append(tool.Turns, exchange.Turn{Role: exchange.RoleTool, Name: "grep", Input: map[string]any{"pattern": "login"},
		Text: strings.Repeat("login redirect timeout\n", 20) + "ECONNRESET"})
	if _, err := m.Add(ctx, []*exchange.Exchange{talk, tool}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	first := func(q, mode string) []string {
		t.Helper()
		rs, _, err := m.Search(ctx, SearchQuery{Text: q, K: 5, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.Exchange)
		}
		return out
	}
	if got := first("login redirect", "verbatim-bm25"); len(got) != 2 || got[0] != "tool" {
		t.Fatalf("verbatim-bm25: %v, want tool first (else the test shows nothing)", got)
	}
	if got := first("login redirect", ""); len(got) != 2 || got[0] != "talk" {
		t.Errorf("default mode: %v, want talk first", got)
	}
	for _, mode := range []string{"", "verbatim-bm25"} {
		if got := first("ECONNRESET", mode); len(got) != 1 || got[0] != "tool" {
			t.Errorf("mode %q: a word of the tool output only: %v, want [tool]", mode, got)
		}
	}
}

// The indexer that follows an add takes the blobs the add committed from
// the hand-off, not from git, and the hand-off ends with the add.
func TestIndexTakesTheAddsBlobs(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	rep, err := m.Add(ctx, []*exchange.Exchange{ex("a", "s", "2026-01-01T00:00:00Z", "tune the pool", "raised pool size")}, AddOptions{NoIndex: true})
	if err != nil || rep.Added != 1 {
		t.Fatalf("add: %+v %v", rep, err)
	}
	stop := m.startHandoff()
	// A blob that differs from the stored one shows which was indexed.
	other := ex("a", "s", "2026-01-01T00:00:00Z", "the quokka word", "only in the hand-off")
	m.handoff.Load().keep(plumbing.NewHash(rep.Commits[0].Commit), other.Canonical(), nil)
	if _, err := m.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	stop()
	if m.handoff.Load() != nil {
		t.Fatal("hand-off still set after stop")
	}
	res, _, err := m.Search(ctx, SearchQuery{Text: "quokka", K: 5, Mode: "verbatim-bm25"})
	if err != nil || len(res) != 1 {
		t.Fatalf("the indexer did not read the hand-off: %v %v", res, err)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "ex.jsonl")
	if err := os.WriteFile(f, []byte(`{"id":"b","session":"s","time":"2026-01-02T00:00:00Z","turns":[{"role":"user","text":"x y"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err := m.AddFiles(ctx, []string{f}, nil, "auto", AddOptions{}); err != nil || !rep.Indexed {
		t.Fatalf("add files: %+v %v", rep, err)
	}
	if m.handoff.Load() != nil {
		t.Fatal("hand-off still set after AddFiles")
	}
}
