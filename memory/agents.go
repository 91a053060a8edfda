package memory

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

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
		LastAssistantMessage: n.LastAssistantMessage, InputDigests: promptDigests(n.InputMessages)}}, err
}

// promptDigests keeps a hook's prompts as digests: the worker only
// compares them with the transcript's, and a prompt may hold a secret.
func promptDigests(ms []string) []string {
	var out []string
	for _, m := range ms {
		out = append(out, hooks.PromptDigest(m))
	}
	return out
}

// GeminiHookJob reads Gemini CLI's hook JSON (stdin).
func GeminiHookJob(r io.Reader) (Job, error) {
	in, err := hooks.ParseGeminiHook(r)
	job := Job{Job: queue.Job{Kind: hooks.FormatGemini, Transcript: in.TranscriptPath, SessionID: in.SessionID,
		Cwd: in.Cwd, Event: in.HookEventName, LastAssistantMessage: in.PromptResponse}}
	if in.Prompt != "" {
		job.InputDigests = promptDigests([]string{in.Prompt})
	}
	return job, err
}

// QwenCodeHookJob reads Qwen Code's hook JSON (stdin; Stop, SessionEnd):
// Claude Code's shape, so Stop's final reply closes its turn.
func QwenCodeHookJob(r io.Reader) (Job, error) {
	in, err := hooks.ParseQwenHook(r, time.Second)
	return Job{Job: queue.Job{Kind: hooks.FormatQwenCode, Transcript: in.TranscriptPath, SessionID: in.SessionID,
		Cwd: in.Cwd, Event: in.HookEventName, LastAssistantMessage: in.LastAssistantMessage}}, err
}

// CopilotCLIHookJob reads Copilot CLI's hook JSON (stdin; agentStop,
// sessionEnd). agentStop comes after the turn's assistant.turn_end, which
// closes the exchange by itself (unless a background subagent still runs);
// sessionEnd closes the last one. Copilot CLI writes events.jsonl in
// batches, so the worker first waits for the hook's own run in it
// (WaitCopilotCLIHook).
func CopilotCLIHookJob(r io.Reader) (Job, error) {
	home, _ := os.UserHomeDir()
	in, err := hooks.ParseCopilotCLIHook(r, time.Second, home)
	return Job{Job: queue.Job{Kind: hooks.FormatCopilotCLI, Transcript: in.TranscriptPath, SessionID: in.SessionID,
		Cwd: in.Cwd, Event: in.Event, HookTimestamp: in.Timestamp}}, err
}

// CursorHookJob reads Cursor's hook JSON (stdin; the stop event). The
// status rides in Event: "stop" when the turn completed, "stop:<status>"
// when it was aborted or failed (the turn then stays open for the next).
func CursorHookJob(r io.Reader) (Job, error) {
	in, err := hooks.ParseCursorHook(r, time.Second)
	ev := in.HookEventName
	if ev == "" {
		ev = "stop"
	}
	if in.Status != "" && in.Status != "completed" {
		ev += ":" + in.Status
	}
	job := Job{Job: queue.Job{Kind: hooks.FormatCursor, Transcript: in.TranscriptPath, SessionID: in.ConversationID, Event: ev}}
	if len(in.WorkspaceRoots) > 0 {
		job.Cwd = in.WorkspaceRoots[0]
	}
	return job, err
}

// OpenCodeHookJob reads what git mem's OpenCode plugin passes (its last
// argument) when a session goes idle.
func OpenCodeHookJob(arg string) (Job, error) {
	in, err := hooks.ParseOpenCodeHook(arg)
	return Job{Job: queue.Job{Kind: hooks.FormatOpenCode, SessionID: in.SessionID, Cwd: in.Cwd, Event: in.HookEventName}}, err
}

// ClineHookJob reads Cline's hook JSON (stdin; TaskComplete, TaskCancel)
// and finds the task's folder, or the Cline CLI 3's session file, while
// the hook still has Cline's environment (CLINE_DIR, CLINE_DATA_DIR); the
// job stores the closed exchanges. The CLI 3's agent_end reports a
// finished turn: Event "agent_end" closes it ("agent_end:<status>" when
// its status is not completed).
func ClineHookJob(r io.Reader) (Job, error) {
	in, err := hooks.ParseClineHook(r, time.Second)
	job := Job{Job: queue.Job{Kind: hooks.FormatCline, SessionID: in.TaskID, Event: in.HookName}}
	if len(in.WorkspaceRoots) > 0 {
		job.Cwd = in.WorkspaceRoots[0]
	}
	if err != nil {
		return job, err
	}
	home, _ := os.UserHomeDir()
	if s := in.SessionContext.RootSessionID; s != "" {
		job.SessionID = s
		if in.HookName == "agent_end" && in.Turn.Status != "" && in.Turn.Status != "completed" {
			job.Event += ":" + in.Turn.Status
		}
		if job.Transcript = hooks.ClineSessionMessages(home, s); job.Transcript != "" {
			return job, nil
		}
		if !strings.HasPrefix(in.TaskID, "conv_") {
			// Not the CLI 3's conversation id: maybe a task folder.
			if p, err := hooks.ClineTaskHistory(home, in.TaskID); err == nil {
				job.Transcript = p
				return job, nil
			}
		}
		return job, fmt.Errorf("cline session %s: no %s%s under %s", s, s, ".messages.json", strings.Join(hooks.ClineSessionRoots(home), ", "))
	}
	job.Transcript, err = hooks.ClineTaskHistory(home, in.TaskID)
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
	msg, err := hooks.Install(agent, uninstall, home, cwd, gitMemCommand(), ho)
	if errors.Is(err, hooks.ErrUnknownHookAgent) || errors.Is(err, hooks.ErrScope) {
		return "", invalid(err)
	}
	return msg, err
}

// HookAgents are the agents `git mem hook install` knows.
var HookAgents = hooks.HookAgents()

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
		return frontBeside(exe, func(p string) bool {
			fi, err := os.Stat(p)
			return err == nil && fi.Mode().IsRegular()
		})
	}
	return "git-mem"
}

// frontBeside is the front binary beside exe when exe is git-mem-core
// (git-mem-core.exe on Windows, in any case, as Windows names are) and the
// front is a file there; else exe itself.
func frontBeside(exe string, isFile func(string) bool) string {
	base := filepath.Base(exe)
	ext := ""
	if e := filepath.Ext(base); strings.EqualFold(e, ".exe") {
		ext = e
	}
	name := strings.TrimSuffix(base, ext)
	if name != "git-mem-core" && (ext == "" || !strings.EqualFold(name, "git-mem-core")) {
		return exe
	}
	if front := filepath.Join(filepath.Dir(exe), "git-mem"+ext); isFile(front) {
		return front
	}
	return exe
}
