package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Qwen Code settings.json as a user keeps it: auth and model, hooks of
// their own on the events git mem uses and another.
const userQwenSettings = `{
  "security": {
    "auth": {
      "selectedType": "openai"
    }
  },
  "model": {
    "name": "qwen3-coder-plus"
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "./notify.sh",
            "timeout": 10
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "run_shell_command",
        "hooks": [
          {
            "type": "command",
            "command": "./check.sh"
          }
        ]
      }
    ]
  },
  "privacy": {
    "usageStatisticsEnabled": false
  }
}
`

func TestInstallQwenCode(t *testing.T) {
	tests := []struct {
		name   string
		before string // "" : no file
		edit   func(string) string
		after  string // the file after uninstall ("" : none before: no hooks left)
	}{
		{name: "user file, byte for byte", before: userQwenSettings, after: userQwenSettings},
		{name: "no file", before: ""},
		{
			name: "later edits kept", before: userQwenSettings,
			edit:  func(s string) string { return strings.Replace(s, `"qwen3-coder-plus"`, `"qwen3-coder-flash"`, 1) },
			after: strings.Replace(userQwenSettings, `"qwen3-coder-plus"`, `"qwen3-coder-flash"`, 1),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("QWEN_HOME", "")
			p := QwenSettingsPath(ScopeUser, home, "/proj")
			if p != filepath.Join(home, ".qwen", "settings.json") {
				t.Fatalf("settings path %s", p)
			}
			if tc.before != "" {
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			msg, err := Install(FormatQwenCode, false, home, "/proj", "/opt/bin/git-mem", InstallOptions{Scope: ScopeUser, MemDir: "/m/mem.git"})
			if err != nil || !strings.Contains(msg, "wrote qwen-code hooks (Stop, SessionEnd)") {
				t.Fatalf("install: %q, %v", msg, err)
			}
			v := decode(t, p)
			hooks := v["hooks"].(map[string]any)
			for _, ev := range []string{"Stop", "SessionEnd"} {
				groups := hooks[ev].([]any)
				last := groups[len(groups)-1].(map[string]any)["hooks"].([]any)[0].(map[string]any)
				if last["command"] != "/opt/bin/git-mem --mem-dir /m/mem.git hook qwen-code" || last["type"] != "command" || last["timeout"] != float64(5000) {
					t.Errorf("%s handlers %v", ev, groups)
				}
			}
			if tc.before != "" {
				if s := readString(t, p); !strings.Contains(s, `"./notify.sh"`) || !strings.Contains(s, `"./check.sh"`) || !strings.Contains(s, `"qwen3-coder-plus"`) {
					t.Errorf("the user's settings were not kept:\n%s", s)
				}
			}
			if msg, _ := Install(FormatQwenCode, false, home, "/proj", "/opt/bin/git-mem", InstallOptions{Scope: ScopeUser, MemDir: "/m/mem.git"}); !strings.Contains(msg, "already") {
				t.Errorf("second install: %q", msg)
			}
			// An install from another path updates ours in place.
			if _, err := InstallQwenCode(p, "git-mem", InstallOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(readString(t, p), "hook qwen-code"); n != 2 {
				t.Errorf("%d git mem handlers after a reinstall, want 2 (Stop, SessionEnd)", n)
			}
			if tc.edit != nil {
				if err := os.WriteFile(p, []byte(tc.edit(readString(t, p))), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			msg, err = Install(FormatQwenCode, true, home, "/proj", "", InstallOptions{Scope: ScopeUser})
			if err != nil || !strings.Contains(msg, "removed 2 git mem hook") {
				t.Fatalf("uninstall: %q, %v", msg, err)
			}
			if tc.before == "" {
				assertGone(t, p) // install made it: uninstall takes it
				return
			}
			got := readString(t, p)
			if tc.after != "" && got != tc.after {
				t.Errorf("after uninstall:\n%s\nwant:\n%s", got, tc.after)
			}
			if tc.after == "" && strings.Contains(got, "hooks") {
				t.Errorf("hooks left behind: %s", got)
			}
			if msg, _ := UninstallQwenCode(p, InstallOptions{}); !strings.Contains(msg, "no git mem hooks") {
				t.Errorf("second uninstall: %q", msg)
			}
		})
	}
}

func TestInstallQwenCodePaths(t *testing.T) {
	t.Setenv("QWEN_HOME", "")
	if p := QwenSettingsPath(ScopeProject, "/h", "/proj"); p != "/proj/.qwen/settings.json" {
		t.Errorf("project settings %s", p)
	}
	t.Setenv("QWEN_HOME", "~/qh")
	if p := QwenSettingsPath(ScopeUser, "/h", "/proj"); p != "/h/qh/settings.json" {
		t.Errorf("QWEN_HOME settings %s", p)
	}
	if p := QwenSettingsPath(ScopeProject, "/h", "/proj"); p != "/proj/.qwen/settings.json" {
		t.Errorf("project settings with QWEN_HOME %s", p)
	}
	t.Setenv("QWEN_RUNTIME_DIR", "/rt")
	if got := strings.Join(QwenProjectsDirs("/h"), " "); got != "/rt/projects /h/qh/projects /h/.qwen/projects" {
		t.Errorf("projects dirs %s", got)
	}
}

func TestInstallQwenCodeBad(t *testing.T) {
	for _, bad := range []string{`{"hooks": {"Stop": {"command": "x"}}}`, `{"hooks": []}`, `{"hooks": `, `[1]`} {
		p := filepath.Join(t.TempDir(), "settings.json")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := InstallQwenCode(p, "git-mem", InstallOptions{}); err == nil {
			t.Errorf("%s: installed", bad)
		}
		if got := readString(t, p); got != bad {
			t.Errorf("%s: changed to %s", bad, got)
		}
	}
}

// TestParseQwenHook: the real Stop payload, and what a hook must refuse.
func TestParseQwenHook(t *testing.T) {
	f, err := os.Open("testdata/qwen-code/generated/stop-hook.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := ParseQwenHook(f, time.Second)
	if err != nil || in.HookEventName != "Stop" || in.SessionID != "0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21" ||
		in.Cwd != "/tmp/git-mem-fixture/qwen-code/project" || in.LastAssistantMessage != "README.md now says how to run greet.js." {
		t.Fatalf("%+v %v", in, err)
	}
	for _, bad := range []string{"", "not json", `{"session_id": "s"}`} {
		if _, err := ParseQwenHook(strings.NewReader(bad), time.Second); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
