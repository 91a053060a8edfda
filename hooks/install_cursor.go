package hooks

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Cursor reads hooks from ~/.cursor/hooks.json (user) or
// <project>/.cursor/hooks.json: {"version": 1, "hooks": {"<event>":
// [{"command": …}, …]}}, a flat list of handlers per event (no matcher
// groups, unlike Claude Code). git mem installs one handler on "stop",
// which fires when the agent loop ends (status completed, aborted or
// error) with the conversation on stdin.

// CursorHooksPath is the hooks.json of a scope.
func CursorHooksPath(scope, home, cwd string) string {
	return scopedPath(scope, home, cwd, ".cursor", "hooks.json")
}

func isOurCursorCommand(cmd string) bool { return isOurCommand(cmd, " hook cursor") }

// InstallCursor adds git mem's stop handler to a Cursor hooks.json, keeping
// every other key and handler; twice changes nothing.
func InstallCursor(hooksPath, gitMemCmd string, opt InstallOptions) (string, error) {
	jf, hooks, err := openVersionedHooks(hooksPath, opt)
	if err != nil {
		return "", fmt.Errorf("install cursor hooks: %w", err)
	}
	if err := ensureFlatHook(hooks, "stop", opt.commandFor(gitMemCmd)+" hook cursor", isOurCursorCommand); err != nil {
		return "", fmt.Errorf("install cursor hooks in %s: %w", hooksPath, err)
	}
	changed, err := jf.save()
	if err != nil {
		return "", fmt.Errorf("install cursor hooks: %w", err)
	}
	if !changed {
		return "cursor hook (stop) already in " + hooksPath, nil
	}
	return "wrote cursor hook (stop) to " + hooksPath, nil
}

// UninstallCursor removes git mem's handlers and nothing else (a file left
// empty goes: saveUninstalled).
func UninstallCursor(hooksPath string, opt InstallOptions) (string, error) {
	jf, err := loadJSON(hooksPath)
	if err != nil {
		return "", fmt.Errorf("uninstall cursor hooks: %w", err)
	}
	none := "no git mem hooks in " + hooksPath
	if !jf.exists {
		return none, nil
	}
	hooks, err := hooksObject(jf, false)
	if err != nil || hooks == nil {
		return none, err
	}
	n := removeFlatHooks(hooks, isOurCursorCommand)
	if n == 0 {
		return none, nil
	}
	cleanHooks(jf.root, hooks)
	msg, err := jf.saveUninstalled(fmt.Sprintf("removed %d git mem hook(s)", n), hooksPath)
	if err != nil {
		return "", fmt.Errorf("uninstall cursor hooks: %w", err)
	}
	return msg, nil
}

// ensureFlatHook makes sure exactly one of our handlers for event exists
// with command, updating an older git mem handler in place.
func ensureFlatHook(hooks *jobj, event, command string, ours func(string) bool) error {
	var list []any
	if v, ok := hooks.get(event); ok && v != nil {
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("hooks.%s is not a list; fix it by hand", event)
		}
		list = l
	}
	for _, h := range list {
		if handler, ok := h.(*jobj); ok {
			if cmd, _ := handler.vals["command"].(string); ours(cmd) {
				if cmd != command {
					handler.set("command", command)
				}
				return nil
			}
		}
	}
	handler := newObj()
	handler.set("command", command)
	hooks.set(event, append(list, handler))
	return nil
}

// removeFlatHooks drops matching handlers, and events left empty by that;
// it returns how many handlers went.
func removeFlatHooks(hooks *jobj, ours func(string) bool) int {
	n := 0
	for _, event := range append([]string(nil), hooks.keys...) {
		list, ok := hooks.vals[event].([]any)
		if !ok {
			continue
		}
		var kept []any
		for _, h := range list {
			if handler, ok := h.(*jobj); ok {
				if cmd, _ := handler.vals["command"].(string); ours(cmd) {
					n++
					continue
				}
			}
			kept = append(kept, h)
		}
		switch {
		case len(kept) == len(list):
		case len(kept) == 0:
			hooks.del(event)
		default:
			hooks.set(event, kept)
		}
	}
	return n
}

// CursorHook is the JSON Cursor gives a hook on stdin (the fields git mem
// uses; stop adds status and loop_count).
type CursorHook struct {
	ConversationID string   `json:"conversation_id"`
	HookEventName  string   `json:"hook_event_name"`
	Status         string   `json:"status"`
	WorkspaceRoots []string `json:"workspace_roots"`
	TranscriptPath string   `json:"transcript_path"`
}

// ParseCursorHook reads the hook's stdin JSON (giving up after wait, so a
// stdin never closed cannot hold the agent).
func ParseCursorHook(r io.Reader, wait time.Duration) (CursorHook, error) {
	var in CursorHook
	b, err := ReadHookInput(r, wait)
	if err != nil {
		return in, fmt.Errorf("read cursor hook input: %w", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return in, fmt.Errorf("read cursor hook input: stdin is empty (Cursor passes the hook's JSON on stdin)")
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("read cursor hook input: not JSON: %w", err)
	}
	if in.ConversationID == "" {
		return in, fmt.Errorf("cursor hook input has no conversation_id")
	}
	return in, nil
}
