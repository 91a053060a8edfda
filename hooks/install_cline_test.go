package hooks

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// The user's own hooks in Cline's global folder: scripts of theirs on
// other events, and a note that is not a hook.
var userClineHooks = map[string]string{
	"PreToolUse": "#!/bin/sh\n# block rm -rf\ncat > /dev/null\necho '{\"cancel\": false}'\n",
	"TaskStart":  "#!/bin/sh\nnotify-send 'Cline started a task'\n",
	"README.txt": "my hooks\n",
}

// clineFolder is a hooks folder's files and their contents, or nil when
// the folder does not exist.
func clineFolder(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func sameFolder(a, b map[string]string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// noXDG gives the test a PATH without xdg-user-dir.
func noXDG(t *testing.T) {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
}

func TestInstallCline(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Cline runs .ps1 hooks on Windows")
	}
	tests := []struct {
		name   string
		scope  string
		before map[string]string // the folder before install (nil: none)
		edit   func(t *testing.T, dir string)
		after  map[string]string // the folder after uninstall (default: before)
		gone   bool              // uninstall removes the folder (left empty)
	}{
		{name: "user folder, byte for byte", scope: ScopeUser, before: userClineHooks},
		{name: "no folder", scope: ScopeUser},
		{name: "empty folder (Cline makes it) removed", scope: ScopeUser, before: map[string]string{}, gone: true},
		{name: "project scope", scope: ScopeProject, before: map[string]string{"PostToolUse": "#!/bin/sh\nexit 0\n"}},
		{
			name: "later edits kept", scope: ScopeUser, before: userClineHooks,
			edit: func(t *testing.T, dir string) {
				os.WriteFile(filepath.Join(dir, "PreToolUse"), []byte("#!/bin/sh\necho changed\n"), 0o755)
				os.WriteFile(filepath.Join(dir, "Notification"), []byte("#!/bin/sh\n"), 0o755)
			},
			after: func() map[string]string {
				m := map[string]string{"PreToolUse": "#!/bin/sh\necho changed\n", "Notification": "#!/bin/sh\n"}
				for k, v := range userClineHooks {
					if _, ok := m[k]; !ok {
						m[k] = v
					}
				}
				return m
			}(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			noXDG(t)
			home, cwd := t.TempDir(), t.TempDir()
			dirs := ClineHooksDirs(tc.scope, home, cwd)
			if len(dirs) != 1 {
				t.Fatalf("hooks folders %v, want one", dirs)
			}
			dir := dirs[0]
			want := filepath.Join(home, "Documents", "Cline", "Hooks")
			if tc.scope == ScopeProject {
				want = filepath.Join(cwd, ".clinerules", "hooks")
			}
			if dir != want {
				t.Fatalf("hooks folder %s, want %s", dir, want)
			}
			if tc.before != nil {
				os.MkdirAll(dir, 0o755)
				for n, s := range tc.before {
					if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			opt := InstallOptions{Scope: tc.scope, MemDir: "/m/my mem.git"}
			msg, err := Install(AgentCline, false, home, cwd, "/opt/bin/git-mem", opt)
			if err != nil || msg != "wrote cline hooks (TaskComplete, TaskCancel) to "+dir {
				t.Fatalf("install: %q, %v", msg, err)
			}
			for _, ev := range []string{"TaskComplete", "TaskCancel"} {
				p := filepath.Join(dir, ev)
				st, err := os.Stat(p)
				if err != nil || st.Mode().Perm()&0o111 != 0o111 {
					t.Fatalf("%s: %v, %v: Cline runs only executable hooks", ev, st, err)
				}
				s := readString(t, p)
				if !strings.HasPrefix(s, "#!/bin/sh\n") || !strings.HasSuffix(s, "\nexec /opt/bin/git-mem --mem-dir '/m/my mem.git' hook cline\n") {
					t.Errorf("%s:\n%s", ev, s)
				}
			}
			for n, s := range tc.before {
				if got := readString(t, filepath.Join(dir, n)); got != s {
					t.Errorf("install changed the user's %s: %q", n, got)
				}
			}
			if msg, _ := Install(AgentCline, false, home, cwd, "/opt/bin/git-mem", opt); !strings.Contains(msg, "already") {
				t.Errorf("second install: %q", msg)
			}
			// An install for another binary and memory rewrites ours.
			if msg, err := InstallCline([]string{dir}, "git-mem", InstallOptions{}); err != nil || !strings.Contains(msg, "TaskComplete, TaskCancel") {
				t.Fatalf("reinstall: %q, %v", msg, err)
			}
			if s := readString(t, filepath.Join(dir, "TaskCancel")); !strings.HasSuffix(s, "\nexec git-mem hook cline\n") {
				t.Errorf("after a reinstall: %s", s)
			}
			if tc.edit != nil {
				tc.edit(t, dir)
			}
			msg, err = Install(AgentCline, true, home, cwd, "", InstallOptions{Scope: tc.scope})
			if err != nil || msg != "removed git mem's cline hooks (TaskComplete, TaskCancel) from "+dir {
				t.Fatalf("uninstall: %q, %v", msg, err)
			}
			after := tc.after
			if after == nil && !tc.gone {
				after = tc.before
			}
			if got := clineFolder(t, dir); !sameFolder(got, after) {
				t.Errorf("after uninstall %v, want %v", keys(got), keys(after))
			}
			if after == nil {
				if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
					t.Errorf("%s left behind (%v)", filepath.Dir(dir), err)
				}
			}
			if msg, _ := UninstallCline([]string{dir}, InstallOptions{}); !strings.HasPrefix(msg, "no git mem hooks") {
				t.Errorf("second uninstall: %q", msg)
			}
		})
	}
}

func keys(m map[string]string) []string {
	if m == nil {
		return nil
	}
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestInstallClineNotOurs: Cline runs one TaskComplete per folder, so a
// user's own is never replaced, nor ours once they edited it; nothing at
// all is written then, and uninstall leaves them.
func TestInstallClineNotOurs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Cline runs .ps1 hooks on Windows")
	}
	dir := filepath.Join(t.TempDir(), "Hooks")
	os.MkdirAll(dir, 0o755)
	theirs := "#!/bin/sh\n./notify.sh\n"
	os.WriteFile(filepath.Join(dir, "TaskCancel"), []byte(theirs), 0o755)
	_, err := InstallCline([]string{dir}, "git-mem", InstallOptions{})
	if err == nil || !strings.Contains(err.Error(), "git mem did not write it") || !strings.Contains(err.Error(), "git-mem hook cline") {
		t.Fatalf("install over the user's TaskCancel: %v", err)
	}
	if got := clineFolder(t, dir); !sameFolder(got, map[string]string{"TaskCancel": theirs}) {
		t.Fatalf("a refused install wrote %v", keys(got))
	}
	if msg, err := UninstallCline([]string{dir}, InstallOptions{}); err != nil || !strings.HasPrefix(msg, "no git mem hooks") {
		t.Errorf("uninstall: %q, %v", msg, err)
	}
	os.Remove(filepath.Join(dir, "TaskCancel"))

	// Ours, then edited by the user: kept by uninstall, refused by install.
	if _, err := InstallCline([]string{dir}, "git-mem", InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "TaskComplete")
	edited := strings.Replace(readString(t, p), "git mem stores", "git mem keeps", 1)
	os.WriteFile(p, []byte(edited), 0o755)
	if _, err := InstallCline([]string{dir}, "git-mem", InstallOptions{}); err == nil || !strings.Contains(err.Error(), "edited since") {
		t.Errorf("install over our edited hook: %v", err)
	}
	msg, err := UninstallCline([]string{dir}, InstallOptions{})
	if err != nil || !strings.Contains(msg, "(TaskCancel)") || !strings.Contains(msg, "left TaskComplete alone") {
		t.Errorf("uninstall: %q, %v", msg, err)
	}
	if got := clineFolder(t, dir); !sameFolder(got, map[string]string{"TaskComplete": edited}) {
		t.Errorf("after uninstall: %v", keys(got))
	}
}

// TestClineHooksDirXDG: on Linux Cline asks xdg-user-dir for Documents
// when it is on PATH (for a server with no user-dirs.dirs that is $HOME).
func TestClineHooksDirXDG(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("xdg-user-dir is asked on Linux only")
	}
	bin := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = DOCUMENTS ] && echo \"$HOME/Dokumente\"\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-user-dir"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	// The CLI 2.x's folder, then the CLI 3's (which never asks xdg-user-dir).
	if d := ClineHooksDirs(ScopeUser, "/h/ada", "/p"); strings.Join(d, " ") != "/h/ada/Dokumente/Cline/Hooks /h/ada/Documents/Cline/Hooks" {
		t.Errorf("with xdg-user-dir: %s", d)
	}
	os.WriteFile(filepath.Join(bin, "xdg-user-dir"), []byte("#!/bin/sh\necho \"$HOME\"\n"), 0o755)
	if d := ClineHooksDirs(ScopeUser, "/h/ada", "/p"); strings.Join(d, " ") != "/h/ada/Cline/Hooks /h/ada/Documents/Cline/Hooks" {
		t.Errorf("xdg-user-dir unconfigured ($HOME): %s", d)
	}
	os.WriteFile(filepath.Join(bin, "xdg-user-dir"), []byte("#!/bin/sh\nexit 1\n"), 0o755)
	if d := ClineHooksDirs(ScopeUser, "/h/ada", "/p"); strings.Join(d, " ") != "/h/ada/Documents/Cline/Hooks" {
		t.Errorf("xdg-user-dir failing: %s", d)
	}
	if d := ClineHooksDirs(ScopeProject, "/h/ada", "/p"); strings.Join(d, " ") != "/p/.clinerules/hooks" {
		t.Errorf("project: %s", d)
	}
}

// TestInstallClineTwoFolders: both folders get the hooks; a user's hook in
// either stops the install before anything is written.
func TestInstallClineTwoFolders(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Cline runs .ps1 hooks on Windows")
	}
	home := t.TempDir()
	dirs := []string{filepath.Join(home, "Cline", "Hooks"), filepath.Join(home, "Documents", "Cline", "Hooks")}
	theirs := "#!/bin/sh\n./notify.sh\n"
	os.MkdirAll(dirs[1], 0o755)
	os.WriteFile(filepath.Join(dirs[1], "TaskComplete"), []byte(theirs), 0o755)
	if _, err := InstallCline(dirs, "git-mem", InstallOptions{}); err == nil {
		t.Fatal("installed over the user's TaskComplete")
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Fatalf("a refused install made %s (%v)", dirs[0], err)
	}
	os.Remove(filepath.Join(dirs[1], "TaskComplete"))
	msg, err := InstallCline(dirs, "git-mem", InstallOptions{})
	if err != nil || msg != "wrote cline hooks (TaskComplete, TaskCancel) to "+dirs[0]+"; wrote cline hooks (TaskComplete, TaskCancel) to "+dirs[1] {
		t.Fatalf("install: %q, %v", msg, err)
	}
	msg, err = UninstallCline(dirs, InstallOptions{})
	if err != nil || strings.Count(msg, "removed git mem's cline hooks (TaskComplete, TaskCancel)") != 2 {
		t.Fatalf("uninstall: %q, %v", msg, err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Dir(d)); !os.IsNotExist(err) {
			t.Errorf("%s left behind", filepath.Dir(d))
		}
	}
	if _, err := os.Stat(filepath.Join(home, "Documents")); err != nil {
		t.Errorf("Documents itself removed: %v", err)
	}
}

// TestParseClineHook: the real TaskComplete payload of the Cline CLI
// 2.18.0 (scripts/agent-fixtures/cline/hook-check.sh), and what a hook
// must refuse.
func TestParseClineHook(t *testing.T) {
	f, err := os.Open("testdata/cline/hook/TaskComplete-first.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := ParseClineHook(f, time.Second)
	if err != nil || in.HookName != "TaskComplete" || in.TaskID != "1796297987776" || in.ClineVersion != "3.82.0" ||
		len(in.WorkspaceRoots) != 1 || !strings.HasSuffix(in.WorkspaceRoots[0], "/project") {
		t.Fatalf("%+v %v", in, err)
	}
	for _, bad := range []string{"", "not json", `{"hookName": "TaskComplete"}`, `{"taskId": "../x"}`, `{"taskId": ".."}`} {
		if _, err := ParseClineHook(strings.NewReader(bad), time.Second); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// TestClineTaskHistory: the CLI's $CLINE_DIR first, then the usual roots.
func TestClineTaskHistory(t *testing.T) {
	home, cdir := t.TempDir(), t.TempDir()
	t.Setenv("CLINE_DIR", cdir)
	const id = "1796297987776"
	if _, err := ClineTaskHistory(home, id); err == nil {
		t.Fatal("found a task that is nowhere")
	}
	std := filepath.Join(home, ".cline", "data", "tasks", id, clineTaskFile)
	os.MkdirAll(filepath.Dir(std), 0o755)
	os.WriteFile(std, []byte("[]"), 0o644)
	if p, err := ClineTaskHistory(home, id); err != nil || p != std {
		t.Errorf("%s, %v; want %s", p, err, std)
	}
	own := filepath.Join(cdir, "data", "tasks", id, clineTaskFile)
	os.MkdirAll(filepath.Dir(own), 0o755)
	os.WriteFile(own, []byte("[]"), 0o644)
	if p, err := ClineTaskHistory(home, id); err != nil || p != own {
		t.Errorf("%s, %v; want %s", p, err, own)
	}
}

// TestClineCLI3Hook: the Cline CLI 3.0.65's TaskComplete payload
// (agent_end: taskId a conversation id, the session in sessionContext)
// and the session it names, whose prompt comes wrapped in <user_input
// mode="act">.
func TestClineCLI3Hook(t *testing.T) {
	f, err := os.Open("testdata/cline/hook3/TaskComplete.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := ParseClineHook(f, time.Second)
	if err != nil || in.HookName != "agent_end" || in.SessionContext.RootSessionID != "1796299658784_9jaig" ||
		!strings.HasPrefix(in.TaskID, "conv_") || in.Turn.Status != "completed" {
		t.Fatalf("%+v %v", in, err)
	}
	t.Setenv("CLINE_SESSION_DATA_DIR", "testdata/cline/hook3/sessions")
	p := ClineSessionMessages("/nonexistent", in.SessionContext.RootSessionID)
	if p != "testdata/cline/hook3/sessions/1796299658784_9jaig/1796299658784_9jaig.messages.json" {
		t.Fatalf("session file %q", p)
	}
	if ClineSessionMessages("/nonexistent", "other") != "" {
		t.Error("found a session that is not there")
	}
	res, err := ReadCline(p, Options{})
	if err != nil || len(res.Exchanges) != 1 {
		t.Fatalf("%d exchanges, %v", len(res.Exchanges), err)
	}
	ex := res.Exchanges[0]
	if ex.UserText() != "What does greet.js do?" || !strings.HasPrefix(ex.Turns[len(ex.Turns)-1].Text, "greet.js defines greet(name)") {
		t.Errorf("prompt %q, turns %+v", ex.UserText(), ex.Turns)
	}
	if _, err := ParseClineHook(strings.NewReader(`{"taskId": "conv_1", "sessionContext": {"rootSessionId": "../x"}}`), time.Second); err == nil {
		t.Error("a session id with a slash accepted")
	}
}
