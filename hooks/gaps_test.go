package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCodexNotifyClosesTurn: Codex's notify says the turn it names is
// complete, so that turn is stored even when the reported final message is
// not the rollout's text word for word (Codex has no session end: without
// this the last exchange of every thread is lost).
func TestCodexNotifyClosesTurn(t *testing.T) {
	path := "testdata/codex/rollout-2026-03-06T05-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl"
	tests := []struct {
		name string
		opt  Options
		want int
	}{
		{"no notify", Options{}, 2},
		{"notify for the open turn", Options{TurnComplete: true, LastAssistantMessage: "Ran it: 3 tests pass", InputMessages: []string{"and run it"}}, 3},
		{"notify without input messages", Options{TurnComplete: true}, 3},
		{"notify for an older turn", Options{TurnComplete: true, InputMessages: []string{"now add a test"}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ReadCodex(path, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Exchanges) != tt.want {
				t.Errorf("got %d exchanges %q, want %d", len(res.Exchanges), ids(res.Exchanges), tt.want)
			}
		})
	}
}

func TestInstallNamesMemDir(t *testing.T) {
	home := t.TempDir()
	mem := "/x/my mem"
	path := ClaudeSettingsPath(ScopeUser, home, "/unused")
	opt := InstallOptions{Scope: ScopeUser, MCP: true, MemDir: mem}
	if _, err := InstallClaudeCode(path, "git-mem", opt); err != nil {
		t.Fatal(err)
	}
	v := decode(t, path)
	for _, ev := range []string{"SessionEnd", "PreCompact", "SessionStart"} {
		hs := handlers(v, ev)
		if len(hs) != 1 || !strings.HasPrefix(hs[0]["command"].(string), "git-mem --mem-dir '/x/my mem' ") {
			t.Errorf("%s: %v", ev, hs)
		}
	}
	m := decode(t, filepath.Join(home, ".claude.json"))["mcpServers"].(map[string]any)
	if want := map[string]any{"command": "git-mem", "args": []any{"--mem-dir", mem, "mcp"}}; !reflect.DeepEqual(m["git-mem"], want) {
		t.Errorf("mcp %v", m["git-mem"])
	}
	// Installing for another memory replaces ours, not adds a second.
	opt.MemDir = "/y"
	if _, err := InstallClaudeCode(path, "git-mem", opt); err != nil {
		t.Fatal(err)
	}
	if hs := handlers(decode(t, path), "SessionEnd"); len(hs) != 1 || hs[0]["command"] != "git-mem --mem-dir /y hook claude-code" {
		t.Errorf("reinstall: %v", hs)
	}
	if _, err := UninstallClaudeCode(path, opt); err != nil {
		t.Fatal(err)
	}
	assertGone(t, path)

	cpath := CodexConfigPath(home)
	os.MkdirAll(filepath.Dir(cpath), 0o755)
	os.WriteFile(cpath, []byte(codexConfig), 0o644)
	if _, err := InstallCodex(cpath, "git-mem", InstallOptions{MCP: true, MemDir: mem}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(cpath)
	for _, w := range []string{`notify = ["git-mem", "--mem-dir", "/x/my mem", "hook", "codex"]`, `args = ["--mem-dir", "/x/my mem", "mcp"]`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("codex config lacks %s:\n%s", w, b)
		}
	}
	if _, err := InstallCodex(cpath, "git-mem", InstallOptions{MCP: true, MemDir: "/y"}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(cpath)
	if strings.Count(string(b), "[mcp_servers.git-mem]") != 1 || !strings.Contains(string(b), `args = ["--mem-dir", "/y", "mcp"]`) || !strings.Contains(string(b), `"/y", "hook"`) {
		t.Errorf("codex reinstall:\n%s", b)
	}
	if _, err := UninstallCodex(cpath, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(cpath); string(b) != codexConfig {
		t.Errorf("codex uninstall left:\n%s", b)
	}
}
