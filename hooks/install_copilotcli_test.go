package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A hooks file of the user's own at git mem's path: hooks on the events
// git mem uses and another, and a key Copilot CLI does not know.
const userCopilotHooks = `{
  "version": 1,
  "hooks": {
    "agentStop": [
      {
        "type": "command",
        "bash": "./notify.sh",
        "timeoutSec": 10
      }
    ],
    "preToolUse": [
      {
        "type": "command",
        "bash": "./check.sh",
        "powershell": "./check.ps1"
      }
    ]
  },
  "comment": "mine"
}
`

// The user's other Copilot CLI config, which an install never touches.
const (
	copilotSettings  = "{\n  \"banner\": \"never\",\n  \"hooks\": {\"sessionEnd\": [{\"type\": \"command\", \"bash\": \"./bye.sh\"}]}\n}\n"
	copilotUserHooks = `{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "./hi.sh"}]}}`
)

func TestInstallCopilotCLI(t *testing.T) {
	addSessionStart := func(s string) string {
		return strings.Replace(s, `"hooks": {`, `"hooks": {"sessionStart": [{"type": "command", "bash": "./start.sh"}], `, 1)
	}
	tests := []struct {
		name   string
		before string // "" : no file
		edit   func(string) string
		after  string // the file after uninstall ("": none)
	}{
		{name: "no file", before: ""},
		{name: "user file, byte for byte", before: userCopilotHooks, after: userCopilotHooks},
		{
			name: "later edits kept", before: userCopilotHooks,
			edit:  func(s string) string { return strings.Replace(s, `"mine"`, `"still mine"`, 1) },
			after: strings.Replace(userCopilotHooks, `"mine"`, `"still mine"`, 1),
		},
		{
			// The user adds a hook of their own to git mem's file: the file
			// stays, with that hook only.
			name: "a hook added to git mem's file", before: "",
			edit: addSessionStart,
			after: "{\n  \"version\": 1,\n  \"hooks\": {\n    \"sessionStart\": [\n      {\n        \"type\": \"command\",\n" +
				"        \"bash\": \"./start.sh\"\n      }\n    ]\n  }\n}\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("COPILOT_HOME", "")
			p := CopilotCLIHooksPath(ScopeUser, home, "/proj")
			if p != filepath.Join(home, ".copilot", "hooks", "git-mem.json") {
				t.Fatalf("hooks path %s", p)
			}
			dir := filepath.Join(home, ".copilot")
			os.MkdirAll(filepath.Join(dir, "hooks"), 0o755)
			os.WriteFile(filepath.Join(dir, "settings.json"), []byte(copilotSettings), 0o644)
			os.WriteFile(filepath.Join(dir, "hooks", "user.json"), []byte(copilotUserHooks), 0o644)
			if tc.before != "" {
				if err := os.WriteFile(p, []byte(tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			msg, err := Install(AgentCopilotCLI, false, home, "/proj", "/opt/bin/git-mem", InstallOptions{Scope: ScopeUser, MemDir: "/m/mem.git"})
			if err != nil || !strings.Contains(msg, "wrote copilot-cli hooks (agentStop, sessionEnd)") {
				t.Fatalf("install: %q, %v", msg, err)
			}
			v := decode(t, p)
			if v["version"] != float64(1) {
				t.Errorf("version %v", v["version"])
			}
			hooks := v["hooks"].(map[string]any)
			for _, ev := range []string{"agentStop", "sessionEnd"} {
				list := hooks[ev].([]any)
				last := list[len(list)-1].(map[string]any)
				const c = "/opt/bin/git-mem --mem-dir /m/mem.git hook copilot-cli"
				if last["bash"] != c || last["powershell"] != c || last["type"] != "command" || last["timeoutSec"] != float64(5) {
					t.Errorf("%s handlers %v", ev, list)
				}
			}
			if tc.before != "" {
				if s := readString(t, p); !strings.Contains(s, `"./notify.sh"`) || !strings.Contains(s, `"./check.ps1"`) || !strings.Contains(s, `"mine"`) {
					t.Errorf("the user's hooks were not kept:\n%s", s)
				}
			}
			if msg, _ := Install(AgentCopilotCLI, false, home, "/proj", "/opt/bin/git-mem", InstallOptions{Scope: ScopeUser, MemDir: "/m/mem.git"}); !strings.Contains(msg, "already") {
				t.Errorf("second install: %q", msg)
			}
			// An install from another path (and no memory named) updates
			// ours in place.
			if _, err := InstallCopilotCLI(p, "git-mem", InstallOptions{}); err != nil {
				t.Fatal(err)
			}
			s := readString(t, p)
			// Two handlers, each with a bash and a powershell command.
			if n := strings.Count(s, "hook copilot-cli"); n != 4 || strings.Count(s, `"bash": "git-mem hook copilot-cli"`) != 2 ||
				strings.Count(s, `"powershell": "git-mem hook copilot-cli"`) != 2 {
				t.Errorf("%d git mem commands after a reinstall, want 2 handlers running git-mem from bash and powershell:\n%s", n, s)
			}
			if tc.edit != nil {
				if err := os.WriteFile(p, []byte(tc.edit(s)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			msg, err = Install(AgentCopilotCLI, true, home, "/proj", "", InstallOptions{Scope: ScopeUser})
			if err != nil || !strings.Contains(msg, "removed 2 git mem hook") {
				t.Fatalf("uninstall: %q, %v", msg, err)
			}
			got, err := os.ReadFile(p)
			switch {
			case tc.after == "" && err == nil:
				t.Errorf("git mem's hooks file left behind: %s", got)
			case tc.after != "" && string(got) != tc.after:
				t.Errorf("after uninstall:\n%s\nwant:\n%s", got, tc.after)
			}
			if s := readString(t, filepath.Join(dir, "settings.json")); s != copilotSettings {
				t.Errorf("settings.json changed: %s", s)
			}
			if s := readString(t, filepath.Join(dir, "hooks", "user.json")); s != copilotUserHooks {
				t.Errorf("the user's hooks file changed: %s", s)
			}
			if msg, _ := UninstallCopilotCLI(p, InstallOptions{}); !strings.Contains(msg, "no git mem hooks") {
				t.Errorf("second uninstall: %q", msg)
			}
		})
	}
}

// TestCopilotCLIHooksFile: the whole file a fresh install writes, with a
// program and a memory that need quoting: each handler's bash and
// powershell commands run the same git mem, each quoted for its shell.
func TestCopilotCLIHooksFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hooks", "git-mem.json")
	if _, err := InstallCopilotCLI(p, "/opt/my tools/git-mem", InstallOptions{MemDir: "/m/it's $mem.git"}); err != nil {
		t.Fatal(err)
	}
	handler := `      {
        "type": "command",
        "bash": "'/opt/my tools/git-mem' --mem-dir '/m/it'\\''s $mem.git' hook copilot-cli",
        "powershell": "& '/opt/my tools/git-mem' --mem-dir '/m/it''s $mem.git' hook copilot-cli",
        "timeoutSec": 5
      }
`
	want := "{\n  \"version\": 1,\n  \"hooks\": {\n    \"agentStop\": [\n" + handler + "    ],\n    \"sessionEnd\": [\n" + handler + "    ]\n  }\n}\n"
	if got := readString(t, p); got != want {
		t.Errorf("hooks file:\n%s\nwant:\n%s", got, want)
	}
	if msg, err := UninstallCopilotCLI(p, InstallOptions{}); err != nil || !strings.Contains(msg, "removed 2 git mem hook(s) and the file") {
		t.Errorf("uninstall: %q, %v", msg, err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("hooks file left: %v", err)
	}
}

// TestCopilotCLIPowerShell: the powershell command of each install, and
// which commands uninstall takes for git mem's.
func TestCopilotCLIPowerShell(t *testing.T) {
	for _, tc := range []struct{ cmd, memDir, want string }{
		{"", "", "git-mem hook copilot-cli"},
		{"git mem", "", "git mem hook copilot-cli"},
		{"git-mem", "/home/me/.git-mem", "git-mem --mem-dir /home/me/.git-mem hook copilot-cli"},
		{`C:\Users\me\go\bin\git-mem.exe`, `C:\Users\me\.git-mem`, `C:\Users\me\go\bin\git-mem.exe --mem-dir C:\Users\me\.git-mem hook copilot-cli`},
		// A quoted program needs the call operator.
		{`C:\Program Files\git-mem\git-mem.exe`, `D:\my mem`, `& 'C:\Program Files\git-mem\git-mem.exe' --mem-dir 'D:\my mem' hook copilot-cli`},
		// Single quotes are literal: $ and ` stay; a quote is doubled,
		// the typographic ones too (PowerShell ends a string at them).
		{"/opt/git-mem", "/m/$HOME `n", "/opt/git-mem --mem-dir '/m/$HOME `n' hook copilot-cli"},
		{"/opt/git-mem", "/m/it's", "/opt/git-mem --mem-dir '/m/it''s' hook copilot-cli"},
		{"/opt/git-mem", "/m/it\u2019s", "/opt/git-mem --mem-dir '/m/it\u2019\u2019s' hook copilot-cli"},
		// Bare, these would be read as numbers, an array or a splat.
		{"/opt/git-mem", "1e3", "/opt/git-mem --mem-dir '1e3' hook copilot-cli"},
		{"/opt/git-mem", "/m/a,b", "/opt/git-mem --mem-dir '/m/a,b' hook copilot-cli"},
		{"/opt/git-mem", "@m", "/opt/git-mem --mem-dir '@m' hook copilot-cli"},
		{"/opt/git-mem", "~/mem", "/opt/git-mem --mem-dir '~/mem' hook copilot-cli"},
	} {
		got := copilotCLIPowerShell(tc.cmd, InstallOptions{MemDir: tc.memDir})
		if got != tc.want {
			t.Errorf("%q, %q: %s, want %s", tc.cmd, tc.memDir, got, tc.want)
		}
		if !isOurCopilotCLIPowerShell(got) {
			t.Errorf("%s not recognised as git mem's", got)
		}
		if tc.memDir != "" {
			if w := strings.TrimSuffix(strings.SplitN(got, " --mem-dir ", 2)[1], copilotCLIHookTail); psUnquote(w) != tc.memDir {
				t.Errorf("%s: the memory reads back as %q", got, psUnquote(w))
			}
		}
	}
	for _, other := range []string{"./check.ps1", "git-mem hook copilot", "& 'C:\\x\\not-git-mem.exe' hook copilot-cli",
		"git-mem-dev hook copilot-cli", "git-mem hook copilot-cli; Remove-Item x", ""} {
		if isOurCopilotCLIPowerShell(other) {
			t.Errorf("%q taken for git mem's", other)
		}
	}
}

// TestCopilotCLIHookUpgrade: a handler from before the powershell command
// gets it in place (its other keys kept); one installed on Windows (a
// git-mem.exe path) is git mem's for a reinstall and an uninstall; a
// handler whose bash command is the user's stays, whatever its powershell.
func TestCopilotCLIHookUpgrade(t *testing.T) {
	p := filepath.Join(t.TempDir(), "git-mem.json")
	const user = `{"type": "command", "bash": "./mine.sh", "powershell": "git-mem hook copilot-cli"}`
	before := `{"version": 1, "hooks": {"agentStop": [` + user + `, {"type": "command", "bash": "git-mem hook copilot-cli", "timeoutSec": 5, "env": {"A": "1"}}]}}`
	os.WriteFile(p, []byte(before), 0o644)
	if _, err := InstallCopilotCLI(p, "git-mem", InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	v := decode(t, p)
	list := v["hooks"].(map[string]any)["agentStop"].([]any)
	if len(list) != 2 {
		t.Fatalf("agentStop handlers %v", list)
	}
	if h := list[1].(map[string]any); h["powershell"] != "git-mem hook copilot-cli" || h["bash"] != "git-mem hook copilot-cli" || h["env"] == nil {
		t.Errorf("upgraded handler %v", h)
	}
	if h := list[0].(map[string]any); h["bash"] != "./mine.sh" {
		t.Errorf("the user's handler %v", h)
	}
	win := `C:\Users\me\bin\git-mem.exe`
	if _, err := InstallCopilotCLI(p, win, InstallOptions{MemDir: `C:\Users\me\.git-mem`}); err != nil {
		t.Fatal(err)
	}
	if msg, _ := InstallCopilotCLI(p, win, InstallOptions{MemDir: `C:\Users\me\.git-mem`}); !strings.Contains(msg, "already") {
		t.Errorf("reinstall from git-mem.exe: %q", msg)
	}
	s := readString(t, p)
	if strings.Count(s, `"powershell": "C:\\Users\\me\\bin\\git-mem.exe --mem-dir C:\\Users\\me\\.git-mem hook copilot-cli"`) != 2 ||
		strings.Count(s, `"bash": "'C:\\Users\\me\\bin\\git-mem.exe' --mem-dir 'C:\\Users\\me\\.git-mem' hook copilot-cli"`) != 2 {
		t.Errorf("installed from git-mem.exe:\n%s", s)
	}
	msg, err := UninstallCopilotCLI(p, InstallOptions{})
	if err != nil || !strings.Contains(msg, "removed 2 git mem hook") {
		t.Fatalf("uninstall: %q, %v", msg, err)
	}
	want := "{\n  \"version\": 1,\n  \"hooks\": {\n    \"agentStop\": [\n      {\n        \"type\": \"command\",\n" +
		"        \"bash\": \"./mine.sh\",\n        \"powershell\": \"git-mem hook copilot-cli\"\n      }\n    ]\n  }\n}\n"
	if got := readString(t, p); got != want {
		t.Errorf("after uninstall:\n%s\nwant:\n%s", got, want)
	}
	// A handler with only a powershell command of git mem's is git mem's.
	os.WriteFile(p, []byte(`{"version": 1, "hooks": {"sessionEnd": [{"type": "command", "powershell": "& 'C:\\a b\\git-mem.exe' hook copilot-cli"}]}}`), 0o644)
	if msg, err := UninstallCopilotCLI(p, InstallOptions{}); err != nil || !strings.Contains(msg, "removed 1 git mem hook(s) and the file") {
		t.Errorf("uninstall of a powershell-only handler: %q, %v", msg, err)
	}
}

func TestInstallCopilotCLIPaths(t *testing.T) {
	t.Setenv("COPILOT_HOME", "/ch")
	if p := CopilotCLIHooksPath(ScopeUser, "/h", "/proj"); p != "/ch/hooks/git-mem.json" {
		t.Errorf("COPILOT_HOME hooks %s", p)
	}
	// Project scope: the repository's .github/hooks, which Copilot CLI
	// reads at the git root of its folder.
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	sub := filepath.Join(root, "cmd", "tool")
	os.MkdirAll(sub, 0o755)
	if p := CopilotCLIHooksPath(ScopeProject, "/h", sub); p != filepath.Join(root, ".github", "hooks", "git-mem.json") {
		t.Errorf("project hooks %s", p)
	}
	plain := t.TempDir()
	if p := CopilotCLIHooksPath(ScopeProject, "/h", plain); p != filepath.Join(plain, ".github", "hooks", "git-mem.json") {
		t.Errorf("project hooks outside a repository %s", p)
	}
	if _, err := Install(AgentCopilotCLI, false, "/h", sub, "git-mem", InstallOptions{Scope: ScopeProject}); err != nil {
		t.Fatal(err)
	}
	if s := readString(t, filepath.Join(root, ".github", "hooks", "git-mem.json")); !strings.Contains(s, `"git-mem hook copilot-cli"`) {
		t.Errorf("project hooks file %s", s)
	}
}

func TestInstallCopilotCLIBad(t *testing.T) {
	for _, bad := range []string{`{"hooks": {"agentStop": {"bash": "x"}}}`, `{"hooks": []}`, `{"hooks": `, `[1]`} {
		p := filepath.Join(t.TempDir(), "git-mem.json")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := InstallCopilotCLI(p, "git-mem", InstallOptions{}); err == nil {
			t.Errorf("%s: installed", bad)
		}
		if got := readString(t, p); got != bad {
			t.Errorf("%s: changed to %s", bad, got)
		}
	}
}

// TestParseCopilotCLIHook: the payloads Copilot CLI 1.0.102 gave git mem's
// hooks (scripts/agent-fixtures/copilot-cli/hook-check.sh), and what a hook
// must refuse.
func TestParseCopilotCLIHook(t *testing.T) {
	t.Setenv("COPILOT_HOME", "")
	const session = "9d3b5f7a-2c4e-4a6b-8d0f-1a3c5e7b9d2f"
	home := t.TempDir()
	parse := func(name string) CopilotCLIHook {
		t.Helper()
		f, err := os.Open("testdata/copilot-cli/hook/" + name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		in, err := ParseCopilotCLIHook(f, time.Second, home)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return in
	}
	in := parse("agentStop.json")
	if in.Event != "agentStop" || in.SessionID != session || in.StopReason != "end_turn" || in.Timestamp == 0 ||
		!strings.HasSuffix(in.TranscriptPath, "/.copilot/session-state/"+session+"/events.jsonl") || !strings.HasSuffix(in.Cwd, "/project") {
		t.Errorf("agentStop %+v", in)
	}
	// sessionEnd names no transcript: it is the session's under the home.
	want := filepath.Join(home, ".copilot", "session-state", session, "events.jsonl")
	for _, name := range []string{"sessionEnd.json", "sessionEnd-error.json"} {
		in := parse(name)
		if in.Event != "sessionEnd" || in.SessionID != session || in.TranscriptPath != want || in.Timestamp == 0 {
			t.Errorf("%s: %+v", name, in)
		}
	}
	if in := parse("sessionEnd-error.json"); in.Reason != "error" {
		t.Errorf("reason %q", in.Reason)
	}
	// An older build's session file, <id>.jsonl, when there is no folder.
	legacy := filepath.Join(home, ".copilot", "session-state", session+".jsonl")
	os.MkdirAll(filepath.Dir(legacy), 0o755)
	os.WriteFile(legacy, []byte("{}\n"), 0o644)
	if in := parse("sessionEnd.json"); in.TranscriptPath != legacy {
		t.Errorf("legacy transcript %s", in.TranscriptPath)
	}
	t.Setenv("COPILOT_HOME", "/ch")
	if in := parse("sessionEnd.json"); in.TranscriptPath != "/ch/session-state/"+session+"/events.jsonl" {
		t.Errorf("COPILOT_HOME transcript %s", in.TranscriptPath)
	}
	for _, bad := range []string{"", "not json", `{"cwd": "/x"}`, `{"sessionId": "../../etc", "reason": "complete"}`, `{"sessionId": "..", "reason": "complete"}`} {
		if _, err := ParseCopilotCLIHook(strings.NewReader(bad), time.Second, home); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// TestWaitCopilotCLIHook: the session file records each hook's run with
// its payload's timestamp; the wait ends once it does, not before, and
// gives up on a run never recorded.
func TestWaitCopilotCLIHook(t *testing.T) {
	ctx := context.Background()
	real := "testdata/copilot-cli/hook/events.jsonl"
	for _, name := range []string{"agentStop.json", "sessionEnd.json", "sessionEnd-error.json"} {
		f, _ := os.Open("testdata/copilot-cli/hook/" + name)
		in, err := ParseCopilotCLIHook(f, time.Second, t.TempDir())
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !WaitCopilotCLIHook(ctx, real, in.Event, in.Timestamp, time.Second) {
			t.Errorf("%s: its run (%s at %d) not found in the session", name, in.Event, in.Timestamp)
		}
		if WaitCopilotCLIHook(ctx, real, in.Event, in.Timestamp+1, 100*time.Millisecond) {
			t.Errorf("%s: a run at another time was found", name)
		}
	}
	agentStop, _ := os.Open("testdata/copilot-cli/hook/agentStop.json")
	in, _ := ParseCopilotCLIHook(agentStop, time.Second, t.TempDir())
	agentStop.Close()
	if WaitCopilotCLIHook(ctx, real, "sessionEnd", in.Timestamp, 100*time.Millisecond) {
		t.Error("agentStop's run taken for a sessionEnd")
	}

	// Written late and in pieces, as Copilot CLI flushes it: the file does
	// not exist yet, then holds half a line.
	data, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	marker := `"hookType":"agentStop"`
	i := strings.Index(string(data), marker)
	if i < 0 {
		t.Fatal("no agentStop run in the session")
	}
	p := filepath.Join(t.TempDir(), "events.jsonl")
	var written atomic.Bool
	go func() {
		time.Sleep(150 * time.Millisecond)
		os.WriteFile(p, data[:i], 0o644)
		time.Sleep(150 * time.Millisecond)
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		written.Store(true)
		f.Write(data[i:])
		f.Close()
	}()
	if !WaitCopilotCLIHook(ctx, p, "agentStop", in.Timestamp, 5*time.Second) {
		t.Fatal("the run written late was not seen")
	}
	if !written.Load() {
		t.Error("the wait ended before the run was written")
	}
}
