package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/hooks"
	"github.com/gitmem/git-mem/memory"
)

func init() {
	register(newHookCmd)
	register(newWorkerCmd)
	register(newImportCmd)
}

func newHookCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Agent hooks: store sessions automatically (install, uninstall, claude-code, codex)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("name a hook: install, uninstall, claude-code or codex")
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "claude-code",
		Short: "Claude Code hook (SessionEnd, PreCompact, Stop): the hook's JSON on stdin",
		Long: "Queues the session's transcript and returns at once; a detached worker stores the closed\n" +
			"exchanges. It never fails the agent's session: problems go to <gitdir>/mem/log/ and\n" +
			"`git mem status`.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := hooks.ParseClaudeHook(e.in)
			if err == nil && in.TranscriptPath == "" {
				err = fmt.Errorf("claude-code hook input has no transcript_path")
			}
			job := memory.Job{Kind: "claude-code", Transcript: in.TranscriptPath, SessionID: in.SessionID,
				Cwd: in.Cwd, Event: in.HookEventName, LastAssistantMessage: in.LastAssistantMessage}
			return e.queueHook(job, err)
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "codex JSON",
		Short: "Codex notify hook: its JSON as the last argument",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			n, err := hooks.ParseCodexNotify(a[len(a)-1])
			job := memory.Job{Kind: "codex", ThreadID: n.ThreadID, Cwd: n.Cwd, Event: n.Type,
				LastAssistantMessage: n.LastAssistantMessage, InputMessages: n.InputMessages}
			return e.queueHook(job, err)
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "gemini",
		Short: "Gemini CLI hook (AfterAgent, SessionEnd): the hook's JSON on stdin",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := hooks.ParseGeminiHook(e.in)
			job := memory.Job{Kind: hooks.FormatGemini, Transcript: in.TranscriptPath, SessionID: in.SessionID,
				Cwd: in.Cwd, Event: in.HookEventName, LastAssistantMessage: in.PromptResponse}
			if in.Prompt != "" {
				job.InputMessages = []string{in.Prompt}
			}
			err = e.queueHook(job, err)
			// Gemini CLI parses a hook's stdout as JSON: say nothing, as JSON.
			fmt.Fprintln(e.out, "{}")
			return err
		},
	})
	for _, action := range []string{"install", "uninstall"} {
		cmd.AddCommand(newHookInstallCmd(e, action))
	}
	return cmd
}

// queueHook queues the job and starts a worker. A hook never fails the
// agent: every problem is logged and the exit code stays 0.
func (e *env) queueHook(job memory.Job, parseErr error) error {
	m, err := e.open()
	if err != nil {
		fmt.Fprintf(e.errOut, "git mem: hook: %v\n", err)
		return nil
	}
	logf := hookLogger(m, "hook.log")
	if parseErr != nil {
		logf("error: %v", parseErr)
		fmt.Fprintf(e.errOut, "git mem: hook: %v\n", parseErr)
		return nil
	}
	if err := m.Enqueue(job); err != nil {
		logf("error: queue %s: %v", job.Kind, err)
		fmt.Fprintf(e.errOut, "git mem: hook: %v\n", err)
		return nil
	}
	if err := startWorker(m); err != nil {
		logf("error: start worker: %v", err)
	}
	return nil
}

// hookLogger appends to a log file under <gitdir>/mem/log/.
func hookLogger(m *memory.Memory, name string) func(string, ...any) {
	if err := os.MkdirAll(m.LogDir(), 0o755); err != nil {
		return func(string, ...any) {}
	}
	f, err := os.OpenFile(filepath.Join(m.LogDir(), name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return func(string, ...any) {}
	}
	l := log.New(f, "", log.LstdFlags)
	return func(format string, a ...any) { l.Printf(format, a...) }
}

// startWorker starts `git-mem worker` detached: its own session (setsid),
// output to <gitdir>/mem/log/worker.log, not waited for.
func startWorker(m *memory.Memory) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.LogDir(), 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(m.LogDir(), "worker.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	// argv[0] stays "git-mem" whatever the binary is called (a test
	// harness dispatches on it).
	cmd := &exec.Cmd{Path: exe, Args: []string{"git-mem", "--mem-dir", m.Repo.Dir(), "worker"}}
	cmd.Stdin = nil
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

func newWorkerCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "worker",
		Short:  "Run queued background work (started by hooks; safe to kill)",
		Hidden: true,
		Args:   args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			l := log.New(e.out, "", log.LstdFlags)
			ctx, cancel := context.WithTimeout(e.ctx, 30*time.Minute)
			defer cancel()
			if err := m.RunQueue(ctx, l.Printf); err != nil {
				return err
			}
			// Keep the card cache warm for the next SessionStart hook.
			_, err = m.Entries()
			return err
		},
	}
}

func newHookInstallCmd(e *env, action string) *cobra.Command {
	var scope string
	var noContext, noMCP bool
	cmd := &cobra.Command{
		Use:   action + " claude-code|codex|gemini [--scope user|project]",
		Short: map[string]string{"install": "Install git mem's hooks (and MCP server) into an agent's settings", "uninstall": "Remove git mem's hooks and MCP server from an agent's settings"}[action],
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			home, err := os.UserHomeDir()
			if err != nil {
				return err
			}
			cwd, _ := os.Getwd()
			opt := hooks.InstallOptions{Scope: scope, NoContext: noContext, MCP: !noMCP, MemDir: e.explicitMemDir()}
			var msg string
			switch a[0] {
			case "claude-code":
				path := hooks.ClaudeSettingsPath(scope, home, cwd)
				if action == "install" {
					msg, err = hooks.InstallClaudeCode(path, gitMemCommand(), opt)
				} else {
					msg, err = hooks.UninstallClaudeCode(path, opt)
				}
			case "codex":
				if scope == hooks.ScopeProject {
					return usagef("codex reads notify only from ~/.codex/config.toml: use --scope user")
				}
				path := hooks.CodexConfigPath(home)
				if action == "install" {
					msg, err = hooks.InstallCodex(path, gitMemCommand(), opt)
				} else {
					msg, err = hooks.UninstallCodex(path, opt)
				}
			case hooks.FormatGemini:
				path := hooks.GeminiSettingsPath(scope, home, cwd)
				if action == "install" {
					msg, err = hooks.InstallGemini(path, gitMemCommand(), opt)
				} else {
					msg, err = hooks.UninstallGemini(path, opt)
				}
			default:
				return usagef("unknown agent %q: use claude-code, codex or gemini", a[0])
			}
			if err != nil {
				return err
			}
			if e.json {
				return e.printJSON(map[string]string{"message": msg})
			}
			fmt.Fprintln(e.out, msg)
			return nil
		},
	}
	cmd.Flags().StringVar(&scope, "scope", hooks.ScopeUser, "user or project settings")
	if action == "install" {
		cmd.Flags().BoolVar(&noContext, "no-context", false, "do not inject recalled memories at session start")
		cmd.Flags().BoolVar(&noMCP, "no-mcp", false, "do not register the MCP server")
	}
	return cmd
}

// explicitMemDir is the memory named by --mem-dir or GIT_MEM_DIR, made
// absolute (hooks run in other directories), or "" for the default.
func (e *env) explicitMemDir() string {
	d := e.memDir
	if d == "" {
		d = os.Getenv("GIT_MEM_DIR")
	}
	if d == "" {
		return ""
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// gitMemCommand is what hooks run: git-mem from PATH when it is there (so
// upgrades apply), else this binary's absolute path.
func gitMemCommand() string {
	if p, err := exec.LookPath("git-mem"); err == nil && filepath.IsAbs(p) {
		return "git-mem"
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return "git-mem"
}

func newImportCmd(e *env) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "import [AGENT [DIR]] [--dry-run]",
		Short: "Backfill agent histories: one agent (" + strings.Join(hooks.ImportAgents(), ", ") + "), or every agent found on this machine",
		Long: "With no AGENT, finds every known agent's sessions under $HOME, says what it found (per agent\n" +
			"and project) and stores them; on a terminal it asks first. --dry-run only lists the counts.",
		Args: args(cobra.RangeArgs(0, 2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			var agents []string
			root := ""
			if len(a) > 0 {
				if !slices.Contains(hooks.ImportAgents(), a[0]) {
					return usagef("unknown agent %q: use %s", a[0], strings.Join(hooks.ImportAgents(), ", "))
				}
				agents = a[:1]
			}
			if len(a) == 2 {
				root = a[1]
			}
			if len(agents) == 0 || dryRun {
				scan, err := memory.ScanAgents(e.ctx, agents, root)
				if err != nil {
					return err
				}
				if err := e.printScan(scan, dryRun); err != nil || dryRun {
					return err
				}
				agents = scan.Agents()
				if len(agents) == 0 {
					return nil
				}
				if !e.json && isTerminal(e.in) && !confirm(e.in, e.errOut, "store them? [Y/n] ") {
					return nil
				}
			}
			m, err := e.open()
			if err != nil {
				return err
			}
			total := memory.ImportReport{Skipped: []string{}}
			for _, kind := range agents {
				progress := func(done, total int) {}
				if isTerminal(e.errOut) && !e.json {
					progress = func(done, total int) {
						fmt.Fprintf(e.errOut, "\rimporting %s sessions: %d/%d", kind, done, total)
						if done == total {
							fmt.Fprintln(e.errOut)
						}
					}
				}
				rep, err := m.Import(e.ctx, kind, root, progress)
				if err != nil {
					return err
				}
				total.Sessions += rep.Sessions
				total.Added += rep.Added
				total.Present += rep.Present
				total.HeldBack += rep.HeldBack
				total.Skipped = append(total.Skipped, rep.Skipped...)
			}
			rep := total
			if e.json {
				if err := e.printJSON(rep); err != nil {
					return err
				}
			} else {
				for _, s := range rep.Skipped {
					fmt.Fprintf(e.errOut, "git mem: %s (skipped)\n", s)
				}
				fmt.Fprintf(e.out, "imported %d sessions: added %d, already present %d", rep.Sessions, rep.Added, rep.Present)
				if len(rep.Skipped) > 0 {
					fmt.Fprintf(e.out, ", skipped %d", len(rep.Skipped))
				}
				if rep.HeldBack > 0 {
					fmt.Fprintf(e.out, ", held back %d open exchange(s): their transcript changed in the last %d minutes, so the session may still be running (its hook or a later import stores them)", rep.HeldBack, int(memory.LiveSession.Minutes()))
				}
				fmt.Fprintln(e.out)
			}
			if len(rep.Skipped) > 0 {
				e.exitCode = exitPartial
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be imported (sessions and exchanges per agent and project); store nothing")
	return cmd
}

// printScan prints what import found: a table, or with --json the scan.
func (e *env) printScan(s memory.ScanReport, dryRun bool) error {
	if e.json {
		if dryRun {
			return e.printJSON(s)
		}
		return nil
	}
	if len(s.Found) == 0 {
		fmt.Fprintln(e.out, "found no agent sessions")
		return nil
	}
	fmt.Fprintln(e.out, "found:")
	for _, f := range s.Found {
		project := f.Project
		if project == "" {
			project = "(no project)"
		}
		fmt.Fprintf(e.out, "  %-12s %-30s %4d sessions %6d exchanges\n", f.Agent, project, f.Sessions, f.Exchanges)
	}
	if s.HeldBack > 0 {
		fmt.Fprintf(e.out, "  (%d open exchange(s) of sessions changed in the last %d minutes held back)\n", s.HeldBack, int(memory.LiveSession.Minutes()))
	}
	return nil
}

// confirm asks a yes/no question on a terminal; Enter means yes.
func confirm(in io.Reader, out io.Writer, q string) bool {
	fmt.Fprint(out, q)
	var answer string
	_, _ = fmt.Fscanln(in, &answer)
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "" || answer == "y" || answer == "yes"
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
