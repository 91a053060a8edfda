package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// OpenCode has no command hooks: it loads plugins, JS or TS modules in
// <config>/opencode/plugins/ (user; <config> is $XDG_CONFIG_HOME or
// ~/.config) or <project>/.opencode/plugins/, whose exported functions
// return hooks; the event hook sees every bus event (sst/opencode
// packages/opencode/src/plugin/index.ts, config.ts's
// "{plugin,plugins}/*.{ts,js}" glob). git mem's plugin runs `git mem hook
// opencode JSON` when a session goes idle (the agent answered and waits),
// detached, so the session never waits on it.

// openCodePluginMark is the plugin's second line: what tells our file
// from one the user wrote.
const openCodePluginMark = "// git-mem-plugin: written by `git mem hook install opencode`; `git mem hook uninstall opencode` removes it."

// openCodePlugin is the plugin's source; %s is the command as a JSON array.
const openCodePlugin = `// git mem: stores each OpenCode session in git mem's memory when it goes idle.
` + openCodePluginMark + `
import { spawn } from "node:child_process"

const COMMAND = %s

// session.idle (older builds) and session.status idle (newer) can both
// report one pause: the same session within a second is reported once.
const last = new Map()

export const GitMemPlugin = async ({ directory }) => ({
  event: async ({ event }) => {
    const p = event?.properties ?? {}
    const idle = event?.type === "session.idle" || (event?.type === "session.status" && p.status?.type === "idle")
    if (!idle || typeof p.sessionID !== "string") return
    const now = Date.now()
    if (now - (last.get(p.sessionID) ?? 0) < 1000) return
    last.set(p.sessionID, now)
    const input = JSON.stringify({ hook_event_name: "session.idle", session_id: p.sessionID, cwd: directory })
    try {
      const child = spawn(COMMAND[0], [...COMMAND.slice(1), "hook", "opencode", input], { stdio: "ignore", detached: true })
      child.on("error", () => {})
      child.unref()
    } catch {}
  },
})
`

// OpenCodePluginPath is where git mem's plugin goes for a scope.
func OpenCodePluginPath(scope, home, cwd string) string {
	if scope == ScopeProject {
		return filepath.Join(cwd, ".opencode", "plugins", "git-mem.js")
	}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = filepath.Join(home, ".config")
	}
	return filepath.Join(cfg, "opencode", "plugins", "git-mem.js")
}

// InstallOpenCode writes git mem's plugin; an older one of ours is
// replaced, a file of the same name we did not write is left alone.
func InstallOpenCode(pluginPath, gitMemCmd string, opt InstallOptions) (string, error) {
	if err := checkScope(opt.Scope); err != nil {
		return "", fmt.Errorf("install opencode plugin: %w", err)
	}
	argv, err := json.Marshal(opt.argvFor(gitMemCmd))
	if err != nil {
		return "", fmt.Errorf("install opencode plugin: %w", err)
	}
	data := []byte(fmt.Sprintf(openCodePlugin, argv))
	old, err := os.ReadFile(pluginPath)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("install opencode plugin: %w", err)
	}
	if exists && !isOurOpenCodePlugin(old) {
		return "", fmt.Errorf("install opencode plugin: %s exists and git mem did not write it: move it, then run the install again; it was not changed", pluginPath)
	}
	if exists && bytes.Equal(old, data) {
		return "opencode plugin already in " + pluginPath, nil
	}
	if err := atomicWrite(pluginPath, data, 0o644); err != nil {
		return "", fmt.Errorf("install opencode plugin: %w", err)
	}
	return "wrote opencode plugin (session idle) to " + pluginPath, nil
}

// UninstallOpenCode removes git mem's plugin (and the plugins folder when
// that leaves it empty), nothing else.
func UninstallOpenCode(pluginPath string, opt InstallOptions) (string, error) {
	old, err := os.ReadFile(pluginPath)
	if errors.Is(err, fs.ErrNotExist) {
		return "no git mem plugin in " + filepath.Dir(pluginPath), nil
	}
	if err != nil {
		return "", fmt.Errorf("uninstall opencode plugin: %w", err)
	}
	if !isOurOpenCodePlugin(old) {
		return "", fmt.Errorf("uninstall opencode plugin: %s was not written by git mem; it was left alone", pluginPath)
	}
	if err := os.Remove(pluginPath); err != nil {
		return "", fmt.Errorf("uninstall opencode plugin: %w", err)
	}
	_ = os.Remove(filepath.Dir(pluginPath)) // only when empty
	return "removed the git mem plugin " + pluginPath, nil
}

func isOurOpenCodePlugin(b []byte) bool {
	return bytes.Contains(b, []byte(openCodePluginMark))
}

// OpenCodeHook is what git mem's plugin passes (its only argument).
type OpenCodeHook struct {
	HookEventName string `json:"hook_event_name"`
	SessionID     string `json:"session_id"`
	Cwd           string `json:"cwd"`
}

// ParseOpenCodeHook reads the plugin's JSON.
func ParseOpenCodeHook(arg string) (OpenCodeHook, error) {
	var in OpenCodeHook
	if err := json.Unmarshal([]byte(arg), &in); err != nil {
		return in, fmt.Errorf("read opencode hook input: not JSON: %w", err)
	}
	if in.SessionID == "" {
		return in, errors.New("opencode hook input has no session_id")
	}
	return in, nil
}

// OpenCodeSessionStore finds where OpenCode keeps a session: the
// opencode*.db holding it, else its file in the older JSON storage.
func OpenCodeSessionStore(home, session string) (string, error) {
	for _, dir := range OpenCodeDataDirs(home) {
		m, _ := filepath.Glob(filepath.Join(dir, "opencode*.db"))
		for _, p := range m {
			db, err := openOpenCodeDB(p)
			if err != nil {
				continue
			}
			var n int
			err = db.QueryRow(`SELECT count(*) FROM session WHERE id = ?`, session).Scan(&n)
			db.Close()
			if err == nil && n > 0 {
				return p, nil
			}
		}
	}
	if p := openCodeStorageSession(home, session); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("opencode session %s: neither an opencode database nor the JSON storage under %s holds it", session, strings.Join(OpenCodeDataDirs(home), ", "))
}
