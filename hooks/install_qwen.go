package hooks

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Qwen Code reads hooks from settings.json in Claude Code's event → groups
// → handlers shape (its events are Claude Code's too: Stop, SessionEnd, …)
// and passes each hook Claude Code's JSON on stdin (session_id,
// transcript_path, cwd, hook_event_name; Stop adds last_assistant_message).
// git mem installs Stop (after each turn: its final reply closes that turn)
// and SessionEnd (closes the last one).
//
// Its timeouts are seconds since 0.2x, but a value of 1000 or more keeps
// the older millisecond meaning: 5000 is five seconds for every version.
const qwenHookTimeoutMs = 5000

// QwenSettingsPath is Qwen Code's user settings (~/.qwen/settings.json, or
// $QWEN_HOME/settings.json) or the project's (<cwd>/.qwen/settings.json).
func QwenSettingsPath(scope, home, cwd string) string {
	if d := os.Getenv("QWEN_HOME"); d != "" && scope != ScopeProject {
		return filepath.Join(qwenHome(home, d), "settings.json")
	}
	return scopedPath(scope, home, cwd, ".qwen", "settings.json")
}

// qwenHome expands a leading ~/ in $QWEN_HOME or $QWEN_RUNTIME_DIR, as
// Qwen Code does.
func qwenHome(home, d string) string {
	if rest, ok := strings.CutPrefix(d, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return d
}

func isOurQwenCommand(cmd string) bool { return isOurCommand(cmd, " hook qwen-code") }

var qwenEvents = []string{"Stop", "SessionEnd"}

// InstallQwenCode adds git mem's Stop and SessionEnd hooks to a Qwen Code
// settings file, keeping every other key; twice changes nothing.
func InstallQwenCode(settingsPath, gitMemCmd string, opt InstallOptions) (string, error) {
	if err := checkScope(opt.Scope); err != nil {
		return "", fmt.Errorf("install qwen-code hooks: %w", err)
	}
	jf, err := loadJSON(settingsPath)
	if err != nil {
		return "", fmt.Errorf("install qwen-code hooks: %w", err)
	}
	hooks, err := hooksObject(jf, true)
	if err != nil {
		return "", fmt.Errorf("install qwen-code hooks: %w", err)
	}
	c := opt.commandFor(gitMemCmd) + " hook qwen-code"
	for _, ev := range qwenEvents {
		if err := ensureClaudeHook(hooks, claudeHook{event: ev, command: c, timeout: qwenHookTimeoutMs, ours: isOurQwenCommand}); err != nil {
			return "", fmt.Errorf("install qwen-code hooks in %s: %w", settingsPath, err)
		}
	}
	changed, err := jf.save()
	if err != nil {
		return "", fmt.Errorf("install qwen-code hooks: %w", err)
	}
	if !changed {
		return fmt.Sprintf("qwen-code hooks (%s) already in %s", strings.Join(qwenEvents, ", "), settingsPath), nil
	}
	return fmt.Sprintf("wrote qwen-code hooks (%s) to %s", strings.Join(qwenEvents, ", "), settingsPath), nil
}

// UninstallQwenCode removes git mem's handlers and nothing else.
func UninstallQwenCode(settingsPath string, opt InstallOptions) (string, error) {
	jf, err := loadJSON(settingsPath)
	if err != nil {
		return "", fmt.Errorf("uninstall qwen-code hooks: %w", err)
	}
	if !jf.exists {
		return "no git mem hooks in " + settingsPath, nil
	}
	hooks, err := hooksObject(jf, false)
	if err != nil || hooks == nil {
		return "no git mem hooks in " + settingsPath, err
	}
	n := removeClaudeHooks(hooks, isOurQwenCommand)
	cleanHooks(jf.root, hooks)
	if n == 0 {
		return "no git mem hooks in " + settingsPath, nil
	}
	msg, err := jf.saveUninstalled(fmt.Sprintf("removed %d git mem hook(s)", n), settingsPath)
	if err != nil {
		return "", fmt.Errorf("uninstall qwen-code hooks: %w", err)
	}
	return msg, nil
}

// QwenHook is the JSON Qwen Code gives a hook on stdin.
type QwenHook struct {
	SessionID            string `json:"session_id"`
	TranscriptPath       string `json:"transcript_path"`
	Cwd                  string `json:"cwd"`
	HookEventName        string `json:"hook_event_name"`
	LastAssistantMessage string `json:"last_assistant_message"`
}

// ParseQwenHook reads the hook's stdin JSON; a stdin never closed is given
// up on after wait.
func ParseQwenHook(r io.Reader, wait time.Duration) (QwenHook, error) {
	var in QwenHook
	b, err := ReadHookInput(r, wait)
	if err != nil {
		return in, fmt.Errorf("read qwen-code hook input: %w", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return in, fmt.Errorf("read qwen-code hook input: stdin is empty (Qwen Code passes the hook's JSON on stdin)")
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("read qwen-code hook input: not JSON: %w", err)
	}
	if in.TranscriptPath == "" {
		return in, fmt.Errorf("qwen-code hook input has no transcript_path")
	}
	return in, nil
}
