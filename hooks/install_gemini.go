package hooks

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Gemini CLI reads hooks from settings.json in the same event → groups →
// handlers shape as Claude Code, with timeouts in milliseconds. git mem
// installs AfterAgent (once per turn, after the final reply: it closes that
// turn) and SessionEnd (closes the last one).

// geminiHookTimeoutMs is generous: the command only queues a job.
const geminiHookTimeoutMs = 5000

// GeminiSettingsPath is ~/.gemini/settings.json (user) or
// <cwd>/.gemini/settings.json (project).
func GeminiSettingsPath(scope, home, cwd string) string {
	return scopedPath(scope, home, cwd, ".gemini", "settings.json")
}

func isOurGeminiCommand(cmd string) bool { return isOurCommand(cmd, " hook gemini") }

// InstallGemini adds git mem's AfterAgent and SessionEnd hooks to a Gemini
// CLI settings file, keeping every other key; twice changes nothing.
func InstallGemini(settingsPath, gitMemCmd string, opt InstallOptions) (string, error) {
	if err := checkScope(opt.Scope); err != nil {
		return "", fmt.Errorf("install gemini hooks: %w", err)
	}
	jf, err := loadJSON(settingsPath)
	if err != nil {
		return "", fmt.Errorf("install gemini hooks: %w", err)
	}
	hooks, err := hooksObject(jf, true)
	if err != nil {
		return "", fmt.Errorf("install gemini hooks: %w", err)
	}
	c := opt.commandFor(gitMemCmd) + " hook gemini"
	events := []string{"AfterAgent", "SessionEnd"}
	for _, ev := range events {
		if err := ensureClaudeHook(hooks, claudeHook{event: ev, command: c, timeout: geminiHookTimeoutMs, ours: isOurGeminiCommand}); err != nil {
			return "", fmt.Errorf("install gemini hooks in %s: %w", settingsPath, err)
		}
	}
	changed, err := jf.save()
	if err != nil {
		return "", fmt.Errorf("install gemini hooks: %w", err)
	}
	if !changed {
		return fmt.Sprintf("gemini hooks (%s) already in %s", strings.Join(events, ", "), settingsPath), nil
	}
	return fmt.Sprintf("wrote gemini hooks (%s) to %s", strings.Join(events, ", "), settingsPath), nil
}

// UninstallGemini removes git mem's handlers and nothing else.
func UninstallGemini(settingsPath string, opt InstallOptions) (string, error) {
	jf, err := loadJSON(settingsPath)
	if err != nil {
		return "", fmt.Errorf("uninstall gemini hooks: %w", err)
	}
	if !jf.exists {
		return "no git mem hooks in " + settingsPath, nil
	}
	hooks, err := hooksObject(jf, false)
	if err != nil || hooks == nil {
		return "no git mem hooks in " + settingsPath, err
	}
	n := removeClaudeHooks(hooks, isOurGeminiCommand)
	cleanHooks(jf.root, hooks)
	if n == 0 {
		return "no git mem hooks in " + settingsPath, nil
	}
	msg, err := jf.saveUninstalled(fmt.Sprintf("removed %d git mem hook(s)", n), settingsPath)
	if err != nil {
		return "", fmt.Errorf("uninstall gemini hooks: %w", err)
	}
	return msg, nil
}

// GeminiHook is the JSON Gemini CLI gives a hook on stdin.
type GeminiHook struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Prompt         string `json:"prompt"`
	PromptResponse string `json:"prompt_response"`
}

// ParseGeminiHook reads the hook's stdin JSON.
func ParseGeminiHook(r io.Reader) (GeminiHook, error) {
	var in GeminiHook
	b, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return in, fmt.Errorf("read gemini hook input: %w", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return in, fmt.Errorf("read gemini hook input: stdin is empty (Gemini CLI passes the hook's JSON on stdin)")
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("read gemini hook input: not JSON: %w", err)
	}
	if in.TranscriptPath == "" {
		return in, fmt.Errorf("gemini hook input has no transcript_path")
	}
	return in, nil
}
