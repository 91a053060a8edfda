package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Cline (the VS Code extension and the Cline CLI 2.x, whose npm package
// runs the extension's task loop in node) runs hook scripts: an executable
// file named after the event, with no extension, in a hooks folder, one
// file per event and folder. The folders are the global one,
// <Documents>/Cline/Hooks/ (on Linux <Documents> is `xdg-user-dir
// DOCUMENTS` when that program is on PATH, which is $HOME itself unless
// ~/.config/user-dirs.dirs says otherwise; else ~/Documents), each
// workspace root's .clinerules/hooks/, and the CLI's --hooks-dir (Cline CLI
// 2.18.0 dist/cli.mjs: HookFactory.findHookScripts over getAllHooksDirs;
// hooksEnabled defaults to true, and the CLI runs hooks with -y too). A hook
// gets one JSON object on stdin: {clineVersion, hookName, timestamp, taskId,
// workspaceRoots, userId, model, <event>: {...}} and may print JSON
// ({cancel, contextModification, errorMessage}); Cline waits for it (30 s
// at most) and runs it with the workspace as its cwd.
//
// git mem installs TaskComplete (run after attempt_completion, which is
// then in the task's api_conversation_history.json: the exchange is closed)
// and TaskCancel (the task was stopped; the CLI fires it when it exits,
// too). The hook stores the task's closed exchanges.
//
// The Cline CLI 3 (a compiled binary on the SDK, @cline/core) runs the same
// file names (any case, also with .sh, .js, .py, … extensions) from
// ~/Documents/Cline/Hooks (no xdg-user-dir), ~/.cline/hooks and a
// workspace's .clinerules/hooks and .cline/hooks, as its own events:
// TaskComplete is agent_end, after every turn ({"hookName": "agent_end",
// "taskId": "conv_…", "sessionContext": {"rootSessionId": "<session>"},
// "turn": {"outputText", "status": "completed"}}), TaskCancel agent_abort.
// The hook then stores the session's messages file, its turn closed.

// clineHookMark is the hook script's second line: what tells our file
// from one the user wrote.
const clineHookMark = "# git-mem-hook: written by `git mem hook install cline`; `git mem hook uninstall cline` removes it."

// clineEvents are the hook files git mem writes.
var clineEvents = []string{"TaskComplete", "TaskCancel"}

// clineHookScript is the script for an event; the command runs git mem
// (with --mem-dir when the install named a memory).
func clineHookScript(event, command string) []byte {
	return []byte("#!/bin/sh\n" + clineHookMark + "\n" +
		"# Cline runs it on " + event + " with the hook's JSON on stdin; git mem stores the task's finished exchanges.\n" +
		"exec " + command + " hook cline\n")
}

// clineHookCommand is the command of a hook script of ours as install
// wrote it, or ok false when the file is not exactly such a script (the
// user's own, or ours edited since).
func clineHookCommand(event string, b []byte) (string, bool) {
	lines := strings.Split(string(b), "\n")
	if len(lines) != 5 {
		return "", false
	}
	c, ok := strings.CutPrefix(lines[3], "exec ")
	if !ok {
		return "", false
	}
	c, ok = strings.CutSuffix(c, " hook cline")
	if !ok || !bytes.Equal(b, clineHookScript(event, c)) {
		return "", false
	}
	return c, true
}

// ClineHooksDirs are the hooks folders git mem installs into for a scope.
// User: the global folder of the Cline CLI 2.x and the extension
// (<Documents>/Cline/Hooks, <Documents> as clineDocumentsDir finds it) and
// the Cline CLI 3's (~/Documents/Cline/Hooks whatever xdg-user-dir says; it
// also reads ~/.cline/hooks, left alone): one folder when they agree, so
// no Cline runs git mem's hook twice. Project: <cwd>/.clinerules/hooks,
// which both read.
func ClineHooksDirs(scope, home, cwd string) []string {
	if scope == ScopeProject {
		return []string{filepath.Join(cwd, ".clinerules", "hooks")}
	}
	v2 := filepath.Join(clineDocumentsDir(home), "Cline", "Hooks")
	v3 := filepath.Join(home, "Documents", "Cline", "Hooks")
	if filepath.Clean(v2) == filepath.Clean(v3) {
		return []string{v3}
	}
	return []string{v2, v3}
}

// clineDocumentsDir is where Cline 2.x puts its Documents folder: on
// Linux what `xdg-user-dir DOCUMENTS` prints (for this home), when it is
// on PATH.
func clineDocumentsDir(home string) string {
	if runtime.GOOS == "linux" {
		if p, err := exec.LookPath("xdg-user-dir"); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, p, "DOCUMENTS")
			cmd.Env = append(os.Environ(), "HOME="+home)
			if out, err := cmd.Output(); err == nil {
				if d := strings.TrimSpace(string(out)); d != "" {
					return d
				}
			}
		}
	}
	return filepath.Join(home, "Documents")
}

// InstallCline writes git mem's TaskComplete and TaskCancel hooks into
// Cline hooks folders. Scripts of ours are rewritten (another command or
// memory); if any of the files is the user's, or ours edited since,
// nothing is written anywhere.
func InstallCline(dirs []string, gitMemCmd string, opt InstallOptions) (string, error) {
	if err := checkScope(opt.Scope); err != nil {
		return "", fmt.Errorf("install cline hooks: %w", err)
	}
	if runtime.GOOS == "windows" {
		return "", errors.New("install cline hooks: Cline on Windows runs PowerShell hooks (<event>.ps1); git mem writes only the sh hooks of Linux and macOS")
	}
	command := opt.commandFor(gitMemCmd)
	var write []string // paths
	var msgs []string
	for _, dir := range dirs {
		var evs []string
		for _, ev := range clineEvents {
			p := filepath.Join(dir, ev)
			old, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				evs = append(evs, ev)
				continue
			}
			if err != nil {
				return "", fmt.Errorf("install cline hooks: %w", err)
			}
			if _, ours := clineHookCommand(ev, old); !ours {
				why := "git mem did not write it"
				if bytes.Contains(old, []byte(clineHookMark)) {
					why = "it was edited since git mem wrote it"
				}
				return "", fmt.Errorf("install cline hooks: %s exists and %s (Cline runs one %s hook per folder): move it, or add `%s hook cline` to it, then run the install again; nothing was changed", p, why, ev, command)
			}
			if !bytes.Equal(old, clineHookScript(ev, command)) {
				evs = append(evs, ev)
			}
		}
		for _, ev := range evs {
			write = append(write, filepath.Join(dir, ev))
		}
		if len(evs) == 0 {
			msgs = append(msgs, fmt.Sprintf("cline hooks (%s) already in %s", strings.Join(clineEvents, ", "), dir))
		} else {
			msgs = append(msgs, fmt.Sprintf("wrote cline hooks (%s) to %s", strings.Join(evs, ", "), dir))
		}
	}
	for _, p := range write {
		if err := atomicWrite(p, clineHookScript(filepath.Base(p), command), 0o755); err != nil {
			return "", fmt.Errorf("install cline hooks: %w", err)
		}
	}
	return strings.Join(msgs, "; "), nil
}

// UninstallCline removes the hook scripts git mem wrote, unedited, and
// each hooks folder that leaves empty; the user's hooks, and ours they
// edited, stay.
func UninstallCline(dirs []string, opt InstallOptions) (string, error) {
	var msgs []string
	for _, dir := range dirs {
		var removed, kept []string
		for _, ev := range clineEvents {
			p := filepath.Join(dir, ev)
			old, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return "", fmt.Errorf("uninstall cline hooks: %w", err)
			}
			if _, ours := clineHookCommand(ev, old); !ours {
				if bytes.Contains(old, []byte(clineHookMark)) {
					kept = append(kept, ev)
				}
				continue
			}
			if err := os.Remove(p); err != nil {
				return "", fmt.Errorf("uninstall cline hooks: %w", err)
			}
			removed = append(removed, ev)
		}
		if len(removed) > 0 {
			// Only when empty: the folder, then the Cline (or .clinerules)
			// folder holding it.
			if os.Remove(dir) == nil {
				_ = os.Remove(filepath.Dir(dir))
			}
		}
		msg := "no git mem hooks in " + dir
		if len(removed) > 0 {
			msg = fmt.Sprintf("removed git mem's cline hooks (%s) from %s", strings.Join(removed, ", "), dir)
		}
		if len(kept) > 0 {
			msg += fmt.Sprintf("; left %s alone: edited since git mem wrote it", strings.Join(kept, ", "))
		}
		msgs = append(msgs, msg)
	}
	return strings.Join(msgs, "; "), nil
}

// ClineHook is the JSON Cline gives a hook on stdin (the fields git mem
// reads).
// The Cline CLI 3 names its session in sessionContext.rootSessionId
// (taskId is then a conversation id, no folder) and reports the turn.
type ClineHook struct {
	ClineVersion   string   `json:"clineVersion"`
	HookName       string   `json:"hookName"`
	TaskID         string   `json:"taskId"`
	WorkspaceRoots []string `json:"workspaceRoots"`
	SessionContext struct {
		RootSessionID string `json:"rootSessionId"`
	} `json:"sessionContext"`
	Turn struct {
		Status string `json:"status"`
	} `json:"turn"`
}

// clineID is a task or session id that can name a folder.
func clineID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`)
}

// ParseClineHook reads the hook's stdin JSON; a stdin never closed is
// given up on after wait.
func ParseClineHook(r io.Reader, wait time.Duration) (ClineHook, error) {
	var in ClineHook
	b, err := ReadHookInput(r, wait)
	if err != nil {
		return in, fmt.Errorf("read cline hook input: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return in, errors.New("read cline hook input: stdin is empty (Cline passes the hook's JSON on stdin)")
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("read cline hook input: not JSON: %w", err)
	}
	if s := in.SessionContext.RootSessionID; s != "" && !clineID(s) {
		return in, fmt.Errorf("cline hook input: unusable sessionContext.rootSessionId %q", s)
	}
	if in.SessionContext.RootSessionID == "" && !clineID(in.TaskID) {
		return in, fmt.Errorf("cline hook input has no usable taskId (%q)", in.TaskID)
	}
	return in, nil
}

// ClineSessionMessages finds a Cline SDK session's messages file
// (<session>/<session>.messages.json under ClineSessionRoots), or "".
func ClineSessionMessages(home, session string) string {
	for _, r := range ClineSessionRoots(home) {
		p := filepath.Join(r, session, session+clineSessionSuffix)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// ClineTaskHistory finds a task's api_conversation_history.json: in the
// CLI's data folder ($CLINE_DIR/data, as the CLI that runs the hook has
// it), else in any folder ClineTaskRoots knows.
func ClineTaskHistory(home, task string) (string, error) {
	var roots []string
	if d := os.Getenv("CLINE_DIR"); d != "" {
		roots = append(roots, filepath.Join(d, "data", "tasks"))
	}
	roots = append(roots, ClineTaskRoots(home, false)...)
	for _, r := range roots {
		p := filepath.Join(r, task, clineTaskFile)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("cline task %s: no %s under %s", task, clineTaskFile, strings.Join(roots, ", "))
}
