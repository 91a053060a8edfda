package hooks

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const userSettings = `{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(go test:*)"]
  },
  "hooks": {
    "SessionEnd": [
      {
        "hooks": [
          {"type": "command", "command": "other-tool --flush && echo <done>", "timeout": 3}
        ]
      }
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "say done"}]}
    ]
  },
  "statusLine": {"type": "command", "command": "x"},
  "zeta": 1.50
}
`

// assertGone: uninstall removed a file that only git mem's entries were in.
func assertGone(t *testing.T, path string) {
	t.Helper()
	if b, err := os.ReadFile(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s left after uninstall (%v): %q", path, err, b)
	}
}

func backups(t *testing.T, path string) []string {
	t.Helper()
	m, _ := filepath.Glob(path + ".bak-*")
	return m
}

func decode(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return v
}

func handlers(v map[string]any, event string) []map[string]any {
	var out []map[string]any
	hooks, _ := v["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			out = append(out, h.(map[string]any))
		}
	}
	return out
}

func TestInstallClaudeCode(t *testing.T) {
	home := t.TempDir()
	path := ClaudeSettingsPath(ScopeUser, home, "/unused")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(userSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	msg, err := InstallClaudeCode(path, "git-mem", InstallOptions{Scope: ScopeUser})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, path) || !strings.HasPrefix(msg, "wrote") || strings.Contains(msg, "\n") {
		t.Errorf("message %q", msg)
	}
	v := decode(t, path)
	// Other keys and hooks kept, in their order, numbers as written.
	b, _ := os.ReadFile(path)
	s := string(b)
	if !(strings.Index(s, `"model"`) < strings.Index(s, `"permissions"`) && strings.Index(s, `"hooks"`) < strings.Index(s, `"statusLine"`)) {
		t.Errorf("key order changed:\n%s", s)
	}
	if !strings.Contains(s, `"zeta": 1.50`) || !strings.Contains(s, "other-tool --flush && echo <done>") {
		t.Errorf("values rewritten:\n%s", s)
	}
	if v["model"] != "opus" || len(handlers(v, "Stop")) != 1 {
		t.Errorf("other settings lost: %v", v)
	}
	end := handlers(v, "SessionEnd")
	if len(end) != 2 || end[0]["command"] != "other-tool --flush && echo <done>" || end[1]["command"] != "git-mem hook claude-code" || end[1]["timeout"] != 5.0 {
		t.Errorf("SessionEnd handlers %v", end)
	}
	if pc := handlers(v, "PreCompact"); len(pc) != 1 || pc[0]["command"] != "git-mem hook claude-code" {
		t.Errorf("PreCompact handlers %v", pc)
	}
	if ss := handlers(v, "SessionStart"); len(ss) != 1 || ss[0]["command"] != "git-mem context --hook claude-code" || ss[0]["timeout"] != 5.0 {
		t.Errorf("SessionStart handlers %v", ss)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v not kept", st.Mode())
	}
	bk := backups(t, path)
	if len(bk) != 1 {
		t.Fatalf("backups %v", bk)
	}
	if b, _ := os.ReadFile(bk[0]); string(b) != userSettings {
		t.Error("backup is not the old file")
	}

	// Idempotent: nothing changes, no new backup.
	before, _ := os.ReadFile(path)
	msg, err = InstallClaudeCode(path, "git-mem", InstallOptions{Scope: ScopeUser})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) || len(backups(t, path)) != 1 || !strings.Contains(msg, "already") {
		t.Errorf("second install changed something: %q", msg)
	}

	// A new path updates our handlers in place; --no-context drops the
	// context hook.
	if _, err := InstallClaudeCode(path, "/opt/bin/git-mem", InstallOptions{NoContext: true}); err != nil {
		t.Fatal(err)
	}
	v = decode(t, path)
	if end := handlers(v, "SessionEnd"); len(end) != 2 || end[1]["command"] != "/opt/bin/git-mem hook claude-code" {
		t.Errorf("updated SessionEnd %v", end)
	}
	if ss := handlers(v, "SessionStart"); len(ss) != 0 {
		t.Errorf("context hook kept with NoContext: %v", ss)
	}

	// Uninstall removes ours only.
	msg, err = UninstallClaudeCode(path, InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "removed 2") {
		t.Errorf("uninstall message %q", msg)
	}
	v = decode(t, path)
	if end := handlers(v, "SessionEnd"); len(end) != 1 || end[0]["command"] != "other-tool --flush && echo <done>" {
		t.Errorf("after uninstall SessionEnd %v", end)
	}
	if _, ok := v["hooks"].(map[string]any)["PreCompact"]; ok {
		t.Error("empty PreCompact left behind")
	}
	var want map[string]any
	json.Unmarshal([]byte(userSettings), &want)
	if !reflect.DeepEqual(v, want) {
		t.Errorf("install+uninstall is not a no-op:\n got %v\nwant %v", v, want)
	}
	if msg, _ := UninstallClaudeCode(path, InstallOptions{}); !strings.HasPrefix(msg, "no git mem hooks") {
		t.Errorf("second uninstall: %q", msg)
	}
}

func TestInstallClaudeCodeNewFileAndMCP(t *testing.T) {
	cwd := t.TempDir()
	path := ClaudeSettingsPath(ScopeProject, "/unused", cwd)
	mcp := ClaudeMCPPath(ScopeProject, "/unused", cwd)
	if err := os.WriteFile(mcp, []byte(`{"mcpServers": {"other": {"command": "x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	msg, err := InstallClaudeCode(path, "git-mem", InstallOptions{Scope: ScopeProject, MCP: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, path) || !strings.Contains(msg, mcp) {
		t.Errorf("message %q", msg)
	}
	if len(backups(t, path)) != 0 {
		t.Error("backup of a file that did not exist")
	}
	m := decode(t, mcp)["mcpServers"].(map[string]any)
	if m["other"] == nil || !reflect.DeepEqual(m["git-mem"], map[string]any{"command": "git-mem", "args": []any{"mcp"}}) {
		t.Errorf("mcpServers %v", m)
	}
	if _, err := InstallClaudeCode(path, "git-mem", InstallOptions{Scope: ScopeProject, MCP: true}); err != nil {
		t.Fatal(err)
	}
	if len(backups(t, mcp)) != 1 {
		t.Errorf("mcp backups %v", backups(t, mcp))
	}
	if _, err := UninstallClaudeCode(path, InstallOptions{Scope: ScopeProject}); err != nil {
		t.Fatal(err)
	}
	m = decode(t, mcp)["mcpServers"].(map[string]any)
	if m["other"] == nil || m["git-mem"] != nil {
		t.Errorf("after uninstall %v", m)
	}
	assertGone(t, path)
}

func TestInstallClaudeCodeBadJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	bad := "{\n  \"model\": \"opus\",\n  \"hooks\": {\n}\n"
	os.WriteFile(path, []byte(bad), 0o644)
	for _, f := range []func() (string, error){
		func() (string, error) { return InstallClaudeCode(path, "git-mem", InstallOptions{}) },
		func() (string, error) { return UninstallClaudeCode(path, InstallOptions{}) },
	} {
		_, err := f()
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not valid JSON") || !strings.Contains(err.Error(), "not changed") {
			t.Errorf("error %v", err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Error("bad file was touched")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("stray files: %v", entries)
	}
	os.WriteFile(path, []byte(`{"hooks": []}`), 0o644)
	if _, err := InstallClaudeCode(path, "git-mem", InstallOptions{}); err == nil || !strings.Contains(err.Error(), `"hooks" is not an object`) {
		t.Errorf("hooks not an object: %v", err)
	}
	if _, err := InstallClaudeCode(path, "git-mem", InstallOptions{Scope: "global"}); err == nil {
		t.Error("unknown scope accepted")
	}
}

func TestInstallClaudeCodeSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles-settings.json")
	os.WriteFile(real, []byte(`{"a": 1}`), 0o644)
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if _, err := InstallClaudeCode(link, "git-mem", InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("symlink replaced by a file")
	}
	if len(handlers(decode(t, real), "SessionEnd")) != 1 {
		t.Error("target not updated")
	}
}

const codexConfig = `# my codex config
model = "gpt-5-codex"   # trailing comment
approval_policy = "on-request"
instructions = """
multi-line = not a key
[not.a.table]
"""

[profiles.fast]
model = "gpt-5-mini"
notify = ["not-top-level"]

[mcp_servers.other]
command = "other"
args = ["serve"]
`

func TestInstallCodex(t *testing.T) {
	home := t.TempDir()
	path := CodexConfigPath(home)
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(codexConfig), 0o644)
	msg, err := InstallCodex(path, "git-mem", InstallOptions{MCP: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, path) || strings.Contains(msg, "\n") {
		t.Errorf("message %q", msg)
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	wantPrefix := strings.Replace(codexConfig, "[profiles.fast]", "notify = [\"git-mem\", \"hook\", \"codex\"]\n\n[profiles.fast]", 1)
	if !strings.HasPrefix(got, wantPrefix) {
		t.Errorf("notify not inserted at the top level, rest not kept:\n%s", got)
	}
	if !strings.HasSuffix(got, "\n\n[mcp_servers.git-mem]\ncommand = \"git-mem\"\nargs = [\"mcp\"]\n") {
		t.Errorf("mcp table:\n%s", got)
	}
	if len(backups(t, path)) != 1 {
		t.Error("no backup")
	}
	// Idempotent.
	msg, err = InstallCodex(path, "git-mem", InstallOptions{MCP: true})
	b2, _ := os.ReadFile(path)
	if err != nil || string(b2) != got || len(backups(t, path)) != 1 || !strings.Contains(msg, "already") {
		t.Errorf("second install: %q %v", msg, err)
	}
	// Uninstall restores the file byte for byte.
	if _, err := UninstallCodex(path, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != codexConfig {
		t.Errorf("uninstall did not restore the file:\n%s", b)
	}
	if msg, _ := UninstallCodex(path, InstallOptions{}); !strings.HasPrefix(msg, "no git mem notify") {
		t.Errorf("second uninstall %q", msg)
	}
}

func TestInstallCodexCases(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	// A missing file is created; no backup.
	if _, err := InstallCodex(path, "", InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "notify = [\"git-mem\", \"hook\", \"codex\"]\n" || len(backups(t, path)) != 0 {
		t.Errorf("new file %q", b)
	}
	// A foreign notify (even over several lines) is refused, file untouched.
	foreign := "notify = [\n  \"notify-send\",\n  \"Codex\", # why\n]\nmodel = \"o3\"\n"
	os.WriteFile(path, []byte(foreign), 0o644)
	_, err := InstallCodex(path, "git-mem", InstallOptions{})
	if err == nil || !strings.Contains(err.Error(), "already sets notify") || !strings.Contains(err.Error(), path) {
		t.Errorf("foreign notify: %v", err)
	}
	if msg, err := UninstallCodex(path, InstallOptions{}); err != nil || !strings.HasPrefix(msg, "no git mem notify") {
		t.Errorf("uninstall of foreign notify: %q %v", msg, err)
	}
	if b, _ := os.ReadFile(path); string(b) != foreign {
		t.Error("foreign config touched")
	}
	// Ours with another path is updated in place.
	os.WriteFile(path, []byte("notify = ['/old/git-mem', 'hook', 'codex'] # git mem\nmodel = \"o3\"\n"), 0o644)
	if _, err := InstallCodex(path, "/new/git-mem", InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "notify = [\"/new/git-mem\", \"hook\", \"codex\"]\nmodel = \"o3\"\n" {
		t.Errorf("update in place: %q", b)
	}
	// No trailing newline, no tables.
	os.WriteFile(path, []byte(`model = "o3"`), 0o644)
	if _, err := InstallCodex(path, "git-mem", InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "model = \"o3\"\nnotify = [\"git-mem\", \"hook\", \"codex\"]\n" {
		t.Errorf("append: %q", b)
	}
	if _, err := InstallCodex(path, "git-mem", InstallOptions{Scope: ScopeProject}); err == nil || !strings.Contains(err.Error(), "--scope user") {
		t.Errorf("project scope: %v", err)
	}
}

func TestParseStringArray(t *testing.T) {
	tests := map[string][]string{
		`["a", "b"]`:                 {"a", "b"},
		`[ 'x\y' ,"q\"z", ]`:         {`x\y`, `q"z`},
		"[\n \"a\",\n # c\n]":        nil, // comments inside: not ours, refused
		`"a"`:                        nil,
		`[1, 2]`:                     nil,
		`["unterminated]`:            nil,
		`["git-mem","hook","codex"]`: {"git-mem", "hook", "codex"},
	}
	for in, want := range tests {
		got, ok := parseStringArray(in)
		if want == nil {
			if ok {
				t.Errorf("%q accepted: %q", in, got)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%q = %q %v, want %q", in, got, ok, want)
		}
	}
}

// TestUninstallLeavesNoFile: on a HOME and project with no agent config,
// install then uninstall of every agent, in each scope it has, with the MCP
// server and the context hook, leaves no file behind — the files install
// made go with it, not left as {} (folders the agents own may stay).
func TestUninstallLeavesNoFile(t *testing.T) {
	for _, agent := range HookAgents() {
		for _, scope := range []string{ScopeUser, ScopeProject} {
			t.Run(agent+"/"+scope, func(t *testing.T) {
				home, cwd := t.TempDir(), t.TempDir()
				t.Setenv("XDG_CONFIG_HOME", "")
				t.Setenv("QWEN_HOME", "")
				t.Setenv("COPILOT_HOME", "")
				t.Setenv("CLINE_DIR", "")
				opt := InstallOptions{Scope: scope, MCP: true, MemDir: "/m/mem.git"}
				msg, err := Install(agent, false, home, cwd, "/opt/bin/git-mem", opt)
				if errors.Is(err, ErrScope) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatalf("install: %v", err)
				}
				if n := len(regularFiles(t, home, cwd)); n == 0 {
					t.Fatalf("install wrote no file: %s", msg)
				}
				if msg, err = Install(agent, true, home, cwd, "", opt); err != nil {
					t.Fatalf("uninstall: %v", err)
				}
				if left := regularFiles(t, home, cwd); len(left) > 0 {
					t.Errorf("left after uninstall (%s): %v", msg, left)
				}
			})
		}
	}
}

func regularFiles(t *testing.T, roots ...string) []string {
	t.Helper()
	var out []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
