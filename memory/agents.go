package memory

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/gitmem/git-mem/hooks"
	"github.com/gitmem/git-mem/memory/queue"
	"github.com/gitmem/git-mem/search"
)

// Search modes, for the CLI's help and checks.
var Modes = search.Modes

// DefaultMode is the search mode without --mode or search.mode.
const DefaultMode = search.DefaultMode

// Scopes of a hook installation.
const (
	ScopeUser    = hooks.ScopeUser
	ScopeProject = hooks.ScopeProject
)

// ProjectFromCwd names the project of a folder: its git remote origin's
// repo name without credentials, else the folder's name.
func ProjectFromCwd(cwd string) string { return hooks.ProjectFromCwd(cwd) }

// ClaudeHookJob reads a Claude Code hook's JSON (SessionEnd, PreCompact,
// Stop) and makes the job that stores its transcript.
//
// A stdin never closed must not hang the session (Claude Code gives the
// SessionEnd hooks 1.5 s in all): past a second it gives up, like
// SessionStart's.
func ClaudeHookJob(r io.Reader) (Job, error) {
	j, err := queue.ClaudeJob(r)
	return Job{Job: j}, err
}

// CodexHookJob reads Codex's notify JSON (its last argument).
func CodexHookJob(arg string) (Job, error) {
	n, err := hooks.ParseCodexNotify(arg)
	return Job{Job: queue.Job{Kind: hooks.FormatCodex, ThreadID: n.ThreadID, Cwd: n.Cwd, Event: n.Type,
		LastAssistantMessage: n.LastAssistantMessage, InputMessages: n.InputMessages}}, err
}

// GeminiHookJob reads Gemini CLI's hook JSON (stdin).
func GeminiHookJob(r io.Reader) (Job, error) {
	in, err := hooks.ParseGeminiHook(r)
	job := Job{Job: queue.Job{Kind: hooks.FormatGemini, Transcript: in.TranscriptPath, SessionID: in.SessionID,
		Cwd: in.Cwd, Event: in.HookEventName, LastAssistantMessage: in.PromptResponse}}
	if in.Prompt != "" {
		job.InputMessages = []string{in.Prompt}
	}
	return job, err
}

// ImportAgents lists the agents `git mem import AGENT` reads.
func ImportAgents() []string { return hooks.ImportAgents() }

// InstallOptions say what an installation writes.
type InstallOptions struct {
	Scope     string // ScopeUser (default) or ScopeProject
	NoContext bool   // no SessionStart recall
	NoMCP     bool   // do not register the MCP server
	MemDir    string // the memory the commands name ("" = the default)
}

// InstallHooks installs (or, with uninstall, removes) git mem's hooks and
// MCP server in an agent's settings and says what it changed.
func InstallHooks(agent string, uninstall bool, opt InstallOptions) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	cwd, _ := os.Getwd()
	if opt.Scope == "" {
		opt.Scope = ScopeUser
	}
	ho := hooks.InstallOptions{Scope: opt.Scope, NoContext: opt.NoContext, MCP: !opt.NoMCP, MemDir: opt.MemDir}
	switch agent {
	case hooks.FormatClaudeCode:
		path := hooks.ClaudeSettingsPath(opt.Scope, home, cwd)
		if uninstall {
			return hooks.UninstallClaudeCode(path, ho)
		}
		return hooks.InstallClaudeCode(path, gitMemCommand(), ho)
	case hooks.FormatCodex:
		if opt.Scope == ScopeProject {
			return "", invalid(errors.New("codex reads notify only from ~/.codex/config.toml: use --scope user"))
		}
		path := hooks.CodexConfigPath(home)
		if uninstall {
			return hooks.UninstallCodex(path, ho)
		}
		return hooks.InstallCodex(path, gitMemCommand(), ho)
	case hooks.FormatGemini:
		path := hooks.GeminiSettingsPath(opt.Scope, home, cwd)
		if uninstall {
			return hooks.UninstallGemini(path, ho)
		}
		return hooks.InstallGemini(path, gitMemCommand(), ho)
	}
	return "", invalid(fmt.Errorf("unknown agent %q: use claude-code, codex or gemini", agent))
}

// gitMemCommand is what hooks run: git-mem from PATH when it is there (so
// upgrades apply), else the absolute path of this binary (of the front
// beside it, when this is git-mem-core).
func gitMemCommand() string {
	if p, err := exec.LookPath("git-mem"); err == nil && filepath.IsAbs(p) {
		return "git-mem"
	}
	if exe, err := os.Executable(); err == nil {
		// Run as git-mem-core (the front binary hands commands over):
		// hooks should start the front beside it, whose start is cheap.
		if front := filepath.Join(filepath.Dir(exe), "git-mem"); filepath.Base(exe) == "git-mem-core" {
			if fi, err := os.Stat(front); err == nil && fi.Mode().IsRegular() {
				return front
			}
		}
		return exe
	}
	return "git-mem"
}
