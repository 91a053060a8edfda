package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Cursor hooks.json as a user keeps it: other events, another stop
// handler, a key Cursor may add later.
const userCursorHooks = `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [
      {
        "command": "./format.sh"
      }
    ],
    "stop": [
      {
        "command": "./notify.sh",
        "loop_limit": 3
      }
    ]
  },
  "extra": {
    "kept": true
  }
}
`

func TestInstallCursor(t *testing.T) {
	tests := []struct {
		name   string
		before string // "" : no file
		// edit is what the user changes between install and uninstall.
		edit  func(string) string
		after string // the file after uninstall ("" : removed)
	}{
		{name: "user file, byte for byte", before: userCursorHooks, after: userCursorHooks},
		{name: "no file: created, then removed", before: "", after: ""},
		{
			name: "later edits kept", before: userCursorHooks,
			edit:  func(s string) string { return strings.Replace(s, `"./format.sh"`, `"./format.sh --all"`, 1) },
			after: strings.Replace(userCursorHooks, `"./format.sh"`, `"./format.sh --all"`, 1),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), ".cursor", "hooks.json")
			if tc.before != "" {
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			msg, err := InstallCursor(p, "/opt/bin/git-mem", InstallOptions{MemDir: "/m/mem.git"})
			if err != nil || !strings.Contains(msg, "wrote cursor hook (stop)") {
				t.Fatalf("install: %q, %v", msg, err)
			}
			v := decode(t, p)
			if v["version"] != float64(1) {
				t.Errorf("version %v", v["version"])
			}
			stop := v["hooks"].(map[string]any)["stop"].([]any)
			last := stop[len(stop)-1].(map[string]any)
			if last["command"] != "/opt/bin/git-mem --mem-dir /m/mem.git hook cursor" {
				t.Errorf("stop handlers %v", stop)
			}
			if msg, _ := InstallCursor(p, "/opt/bin/git-mem", InstallOptions{MemDir: "/m/mem.git"}); !strings.Contains(msg, "already") {
				t.Errorf("second install: %q", msg)
			}
			// An install from another path updates ours in place.
			if _, err := InstallCursor(p, "git-mem", InstallOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(readString(t, p), "hook cursor"); n != 1 {
				t.Errorf("%d git mem handlers after a reinstall", n)
			}
			if tc.edit != nil {
				if err := os.WriteFile(p, []byte(tc.edit(readString(t, p))), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			msg, err = UninstallCursor(p, InstallOptions{})
			if err != nil || !strings.Contains(msg, "removed 1 git mem hook") {
				t.Fatalf("uninstall: %q, %v", msg, err)
			}
			got, err := os.ReadFile(p)
			switch {
			case tc.after == "" && err == nil:
				t.Errorf("hooks.json left behind: %s", got)
			case tc.after != "" && string(got) != tc.after:
				t.Errorf("after uninstall:\n%s\nwant:\n%s", got, tc.after)
			}
			if msg, _ := UninstallCursor(p, InstallOptions{}); !strings.Contains(msg, "no git mem hooks") {
				t.Errorf("second uninstall: %q", msg)
			}
		})
	}
}

func TestInstallCursorBad(t *testing.T) {
	for _, bad := range []string{`{"version": 1, "hooks": {"stop": {"command": "x"}}}`, `{"hooks": `, `[1]`} {
		p := filepath.Join(t.TempDir(), "hooks.json")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := InstallCursor(p, "git-mem", InstallOptions{}); err == nil {
			t.Errorf("%s: installed", bad)
		}
		if got := readString(t, p); got != bad {
			t.Errorf("%s: changed to %s", bad, got)
		}
	}
}

func TestInstallOpenCode(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", "")
	p := OpenCodePluginPath(ScopeUser, home, "/proj")
	if p != filepath.Join(home, ".config", "opencode", "plugins", "git-mem.js") {
		t.Fatalf("plugin path %s", p)
	}
	if q := OpenCodePluginPath(ScopeProject, home, "/proj"); q != "/proj/.opencode/plugins/git-mem.js" {
		t.Errorf("project plugin path %s", q)
	}
	if _, err := InstallOpenCode(p, "/opt/it's/git-mem", InstallOptions{MemDir: "/m"}); err != nil {
		t.Fatal(err)
	}
	src := readString(t, p)
	for _, want := range []string{`const COMMAND = ["/opt/it's/git-mem","--mem-dir","/m"]`, `"session.idle"`, `"hook", "opencode"`, "export const GitMemPlugin"} {
		if !strings.Contains(src, want) {
			t.Errorf("plugin lacks %s", want)
		}
	}
	if msg, _ := InstallOpenCode(p, "/opt/it's/git-mem", InstallOptions{MemDir: "/m"}); !strings.Contains(msg, "already") {
		t.Errorf("second install: %q", msg)
	}
	if _, err := UninstallOpenCode(p, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(p)); !os.IsNotExist(err) {
		t.Errorf("empty plugins folder left: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(p))); err != nil {
		t.Errorf("the opencode config folder went too: %v", err)
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
