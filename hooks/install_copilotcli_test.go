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
				if last["bash"] != "/opt/bin/git-mem --mem-dir /m/mem.git hook copilot-cli" || last["type"] != "command" || last["timeoutSec"] != float64(5) {
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
			if n := strings.Count(s, "hook copilot-cli"); n != 2 || !strings.Contains(s, `"bash": "git-mem hook copilot-cli"`) {
				t.Errorf("%d git mem handlers after a reinstall, want 2 running git-mem:\n%s", n, s)
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
