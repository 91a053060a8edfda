package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

func TestProjectFromCwd(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "checkout")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.MkdirAll(filepath.Join(repo, "sub", "dir"), 0o755)
	os.WriteFile(filepath.Join(repo, ".git", "config"), []byte(`[core]
	bare = false
[remote "upstream"]
	url = https://github.com/other/wrong.git
[remote "origin"]
	url = https://alice:ghp_secret@github.com/acme/billing-api.git
	fetch = +refs/heads/*:refs/remotes/origin/*
`), 0o644)
	plain := filepath.Join(root, "plain-folder")
	os.MkdirAll(plain, 0o755)
	noRemote := filepath.Join(root, "local-only")
	os.MkdirAll(filepath.Join(noRemote, ".git"), 0o755)
	// A worktree: .git is a file pointing into the main repo's git dir.
	wt := filepath.Join(root, "wt")
	os.MkdirAll(wt, 0o755)
	wtGit := filepath.Join(repo, ".git", "worktrees", "wt")
	os.MkdirAll(wtGit, 0o755)
	os.WriteFile(filepath.Join(wtGit, "commondir"), []byte("../..\n"), 0o644)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+wtGit+"\n"), 0o644)

	tests := map[string]string{
		repo:                                   "billing-api",
		filepath.Join(repo, "sub", "dir"):      "billing-api",
		plain:                                  "plain-folder",
		noRemote:                               "local-only",
		wt:                                     "billing-api",
		"/no/such/place/on/this/machine/myapp": "myapp",
		"-experiments/worktrees":               "worktrees",
		"":                                     "",
	}
	for cwd, want := range tests {
		if got := ProjectFromCwd(cwd); got != want {
			t.Errorf("ProjectFromCwd(%q) = %q, want %q", cwd, got, want)
		}
	}
}

func TestRepoFromURL(t *testing.T) {
	tests := map[string]string{
		"https://github.com/acme/widgets.git":           "widgets",
		"https://user:tok@github.com/acme/widgets.git/": "widgets",
		"git@github.com:acme/widgets.git":               "widgets",
		"ssh://git@host:2222/srv/widgets":               "widgets",
		"/srv/git/widgets.git":                          "widgets",
		"file:///srv/git/widgets.git":                   "widgets",
		"":                                              "",
		"https://github.com":                            "",
	}
	for in, want := range tests {
		if got := repoFromURL(in); got != want {
			t.Errorf("repoFromURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseHooks(t *testing.T) {
	in, err := ParseClaudeHook(strings.NewReader(`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/w","hook_event_name":"SessionEnd","reason":"other","last_assistant_message":"done"}`))
	if err != nil || in != (ClaudeHookInput{SessionID: "s1", TranscriptPath: "/t/s1.jsonl", Cwd: "/w", HookEventName: "SessionEnd", LastAssistantMessage: "done"}) {
		t.Errorf("ParseClaudeHook = %+v, %v", in, err)
	}
	for _, bad := range []string{"", "  \n", "{", "[1]"} {
		if _, err := ParseClaudeHook(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseClaudeHook(%q) accepted", bad)
		}
	}
	n, err := ParseCodexNotify(`{"type":"agent-turn-complete","thread-id":"0199","turn-id":"t1","cwd":"/w","input-messages":["hi"],"last-assistant-message":"ok","client":"codex-tui"}`)
	want := CodexNotify{Type: "agent-turn-complete", ThreadID: "0199", TurnID: "t1", Cwd: "/w", InputMessages: []string{"hi"}, LastAssistantMessage: "ok", Client: "codex-tui"}
	if err != nil || !reflect.DeepEqual(n, want) {
		t.Errorf("ParseCodexNotify = %+v, %v", n, err)
	}
	for _, bad := range []string{"", "nope", `{"type":"agent-turn-complete"}`} {
		if _, err := ParseCodexNotify(bad); err == nil {
			t.Errorf("ParseCodexNotify(%q) accepted", bad)
		}
	}
}

func TestFindCodexRollout(t *testing.T) {
	root := t.TempDir()
	// 0199aaaa-bbbb-7... : UUIDv7 whose time prefix is 2025-09-30 or so.
	id := "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"
	ts, _ := uuidV7Time(id)
	day := ts.Local()
	dated := filepath.Join(root, day.Format("2006"), day.Format("01"), day.Format("02"))
	os.MkdirAll(dated, 0o755)
	want := filepath.Join(dated, "rollout-"+day.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	os.WriteFile(want, nil, 0o644)
	if got, err := FindCodexRollout(root, id); err != nil || got != want {
		t.Errorf("dated: %q %v", got, err)
	}
	// Not UUIDv7, filed elsewhere: found by walking.
	other := "01234567-89ab-4cde-8f01-23456789abcd"
	odd := filepath.Join(root, "2020", "01", "01", "rollout-2020-01-01T00-00-00-"+other+".jsonl")
	os.MkdirAll(filepath.Dir(odd), 0o755)
	os.WriteFile(odd, nil, 0o644)
	if got, err := FindCodexRollout(root, other); err != nil || got != odd {
		t.Errorf("walk: %q %v", got, err)
	}
	if _, err := FindCodexRollout(root, "0199ffff-0000-7000-8000-000000000000"); err == nil || !strings.Contains(err.Error(), "no rollout") {
		t.Errorf("missing: %v", err)
	}
	if _, err := FindCodexRollout(root, "../../etc/passwd"); err == nil {
		t.Error("path in thread id accepted")
	}
}

// TestCodexArchivedSessions: Codex moves archived threads from sessions/ to
// archived_sessions/; the hook's lookup and the importer find them there.
func TestCodexArchivedSessions(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	live := filepath.Join(home, "sessions", "2025", "10", "02", "rollout-2025-10-02T09-00-00-0199aaaa-0000-7000-8000-000000000002.jsonl")
	archived := filepath.Join(home, "archived_sessions", "rollout-2025-10-01T09-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl")
	for _, p := range []string{live, archived} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := FindCodexRollout(filepath.Join(home, "sessions"), "0199aaaa-0000-7000-8000-000000000001")
	if err != nil || got != archived {
		t.Errorf("archived thread: %q, %v", got, err)
	}
	list, err := ListSessions(FormatCodex, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{archived, live}; !reflect.DeepEqual(list, want) {
		t.Errorf("ListSessions = %v, want %v (oldest first, archived included)", list, want)
	}
	// An explicit root is read alone.
	list, err = ListSessions(FormatCodex, filepath.Join(home, "sessions"))
	if err != nil || len(list) != 1 || list[0] != live {
		t.Errorf("explicit root: %v, %v", list, err)
	}
	// No archived_sessions folder is not an error.
	if err := os.RemoveAll(filepath.Join(home, "archived_sessions")); err != nil {
		t.Fatal(err)
	}
	if list, err := ListSessions(FormatCodex, ""); err != nil || len(list) != 1 {
		t.Errorf("without archived_sessions: %v, %v", list, err)
	}
}

func TestListSessions(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, age time.Duration) string {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{}\n"), 0o644)
		tm := time.Now().Add(-age)
		os.Chtimes(p, tm, tm)
		return p
	}
	newer := mk("-home-me-a/s2.jsonl", time.Hour)
	older := mk("-home-me-b/s1.jsonl", 2*time.Hour)
	mk("-home-me-a/s2/subagents/agent-x.jsonl", 0)
	mk("-home-me-a/agent-1234abcd.jsonl", 0)
	mk("-home-me-a/notes.txt", 0)
	got, err := ListSessions(FormatClaudeCode, root)
	if err != nil || !reflect.DeepEqual(got, []string{older, newer}) {
		t.Errorf("claude-code: %q %v", got, err)
	}
	croot := t.TempDir()
	root = croot
	b := mk("2025/09/25/rollout-2025-09-25T01-00-00-b.jsonl", 0)
	a := mk("2025/09/24/rollout-2025-09-24T01-00-00-a.jsonl", 0)
	mk("2025/09/24/history.jsonl", 0)
	got, err = ListSessions(FormatCodex, croot)
	if err != nil || !reflect.DeepEqual(got, []string{a, b}) {
		t.Errorf("codex: %q %v", got, err)
	}
	if _, err := ListSessions("zed", croot); err == nil {
		t.Error("unknown kind accepted")
	}
	if _, err := ListSessions(FormatCodex, filepath.Join(croot, "missing")); err == nil {
		t.Error("missing root accepted")
	}
}

func TestFilesTouched(t *testing.T) {
	in := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	ex := &exchange.Exchange{Agent: AgentClaudeCode, Turns: []exchange.Turn{
		{Role: exchange.RoleUser, Text: "go"},
		{Role: exchange.RoleTool, Name: "Read", Input: in("file_path", "/r.go")},
		{Role: exchange.RoleTool, Name: "MultiEdit", Input: in("file_path", "/m.go")},
		{Role: exchange.RoleTool, Name: "NotebookEdit", Input: in("notebook_path", "/n.ipynb")},
		{Role: exchange.RoleTool, Name: "Edit", Input: in("file_path", "/refused.go"), Extra: map[string]any{"is_error": true}},
		{Role: exchange.RoleTool, Name: "shell", Input: map[string]any{"command": []any{"bash", "-lc", "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: old.ts\n*** Update File: a.ts\n*** Move to: b.ts\n*** End Patch\nEOF"}}},
		{Role: exchange.RoleTool, Name: "Write", Input: in("file_path", "/m.go")},
		{Role: exchange.RoleSystem, Text: "Applied edit to not-aider.go"},
	}}
	want := []string{"/m.go", "/n.ipynb", "old.ts", "a.ts", "b.ts"}
	if got := FilesTouched(ex); !reflect.DeepEqual(got, want) {
		t.Errorf("FilesTouched = %q, want %q", got, want)
	}
}

// TestChangedAtSeesTheWAL: a database written through its WAL counts as
// changed when the WAL did, though the main file is old.
func TestChangedAtSeesTheWAL(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "opencode.db")
	if err := os.WriteFile(db, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(db, old, old); err != nil {
		t.Fatal(err)
	}
	if got := ChangedAt(db); !got.Equal(old) {
		t.Errorf("without a WAL: %v, want the file's %v", got, old)
	}
	if err := os.WriteFile(db+"-wal", []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ChangedAt(db); time.Since(got) > time.Minute {
		t.Errorf("with a fresh WAL: %v, want about now", got)
	}
	if !ChangedAt(filepath.Join(dir, "none")).IsZero() {
		t.Error("a missing file has a change time")
	}
}
