package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
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
		Short: "Agent hooks: store sessions automatically (install, uninstall, " + strings.Join(memory.HookAgents, ", ") + ")",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("name a hook: install, uninstall or an agent (%s)", strings.Join(memory.HookAgents, ", "))
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
			job, err := memory.ClaudeHookJob(e.in)
			return e.queueHook(job, err)
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "codex JSON",
		Short: "Codex notify hook: its JSON as the last argument",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			job, err := memory.CodexHookJob(a[len(a)-1])
			return e.queueHook(job, err)
		},
	})
	// Gemini CLI, Qwen Code, Copilot CLI, Cline and Cursor read a hook's stdout as JSON: they get {}.
	cmd.AddCommand(e.jsonStdinHook("gemini", "Gemini CLI hook (AfterAgent, SessionEnd): the hook's JSON on stdin", memory.GeminiHookJob))
	cmd.AddCommand(e.jsonStdinHook("qwen-code", "Qwen Code hook (Stop, SessionEnd): the hook's JSON on stdin", memory.QwenCodeHookJob))
	cmd.AddCommand(e.jsonStdinHook("copilot-cli", "GitHub Copilot CLI hook (agentStop, sessionEnd): the hook's JSON on stdin", memory.CopilotCLIHookJob))
	cmd.AddCommand(e.jsonStdinHook("cline", "Cline hook (TaskComplete, TaskCancel): the hook's JSON on stdin", memory.ClineHookJob))
	cmd.AddCommand(e.jsonStdinHook("cursor", "Cursor hook (stop): the hook's JSON on stdin", memory.CursorHookJob))
	cmd.AddCommand(&cobra.Command{
		Use:   "opencode JSON",
		Short: "OpenCode hook: git mem's plugin passes its JSON as the last argument when a session goes idle",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			job, err := memory.OpenCodeHookJob(a[len(a)-1])
			return e.queueHook(job, err)
		},
	})
	for _, action := range []string{"install", "uninstall"} {
		cmd.AddCommand(newHookInstallCmd(e, action))
	}
	return cmd
}

// jsonStdinHook is a hook command whose agent passes JSON on stdin and
// parses the hook's stdout as JSON: it says nothing, as JSON ({}).
func (e *env) jsonStdinHook(agent, short string, job func(io.Reader) (memory.Job, error)) *cobra.Command {
	return &cobra.Command{
		Use:   agent,
		Short: short,
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			j, err := job(e.in)
			err = e.queueHook(j, err)
			fmt.Fprintln(e.out, "{}")
			return err
		},
	}
}

// queueHook queues the job and starts a worker. A hook never fails the
// agent: every problem is logged (memory.QueueHook), noted on stderr, and
// the exit code stays 0.
func (e *env) queueHook(job memory.Job, parseErr error) error {
	if memory.CaptureDisabled() {
		return nil // capture is off for this session: touch nothing
	}
	m, err := e.open()
	if err == nil {
		err = m.QueueHook(job, parseErr)
	}
	if err != nil {
		fmt.Fprintf(e.errOut, "git mem: hook: %v\n", err)
	}
	return nil
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
		Use:   action + " " + strings.Join(memory.HookAgents, "|") + " [--scope user|project]",
		Short: map[string]string{"install": "Install git mem's hooks (and MCP server) into an agent's settings", "uninstall": "Remove git mem's hooks and MCP server from an agent's settings"}[action],
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			msg, err := memory.InstallHooks(a[0], action == "uninstall", memory.InstallOptions{Scope: scope, NoContext: noContext, NoMCP: noMCP, MemDir: e.explicitMemDir()})
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(map[string]string{"message": msg})
			}
			fmt.Fprintln(e.out, msg)
			return nil
		},
	}
	cmd.Flags().StringVar(&scope, "scope", memory.ScopeUser, "user or project settings")
	if action == "install" {
		cmd.Flags().BoolVar(&noContext, "no-context", false, "do not inject recalled memories at session start")
		cmd.Flags().BoolVar(&noMCP, "no-mcp", false, "do not register the MCP server")
	}
	return cmd
}

func newImportCmd(e *env) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "import [AGENT [DIR]] [--dry-run]",
		Short: "Backfill agent histories: one agent (" + strings.Join(memory.ImportAgents(), ", ") + "), or every agent found on this machine",
		Long: "With no AGENT, finds every known agent's sessions under $HOME, says what it found (per agent\n" +
			"and project) and stores them; on a terminal it asks first. --dry-run only lists the counts.",
		Args: args(cobra.RangeArgs(0, 2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			var agents []string
			root := ""
			if len(a) > 0 {
				if !slices.Contains(memory.ImportAgents(), a[0]) {
					return usagef("unknown agent %q: use %s", a[0], strings.Join(memory.ImportAgents(), ", "))
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
				if !e.JSON && isTerminal(e.in) && !confirm(e.in, e.errOut, "store them? [Y/n] ") {
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
				if isTerminal(e.errOut) && !e.JSON {
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
				total.Excluded += rep.Excluded
				total.Skipped = append(total.Skipped, rep.Skipped...)
			}
			rep := total
			if e.JSON {
				if err := e.printJSON(rep); err != nil {
					return err
				}
			} else {
				for _, s := range rep.Skipped {
					fmt.Fprintf(e.errOut, "git mem: %s (skipped)\n", s)
				}
				fmt.Fprintf(e.out, "imported %d sessions: added %d, already present %d", rep.Sessions, rep.Added, rep.Present)
				if rep.Excluded > 0 {
					fmt.Fprintf(e.out, ", excluded %d", rep.Excluded)
				}
				if len(rep.Skipped) > 0 {
					fmt.Fprintf(e.out, ", skipped %d", len(rep.Skipped))
				}
				if rep.HeldBack > 0 {
					fmt.Fprintf(e.out, ", held back %d open exchange(s): their transcript changed in the last %d minutes, so the session may still be running (its hook or a later import stores them)", rep.HeldBack, int(memory.LiveSession.Minutes()))
				}
				fmt.Fprintln(e.out)
			}
			if len(rep.Skipped) > 0 {
				return errPartial
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be imported (sessions and exchanges per agent and project); store nothing")
	return cmd
}

// printScan prints what import found: a table, or with --json the scan.
func (e *env) printScan(s memory.ScanReport, dryRun bool) error {
	if e.JSON {
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

// explicitMemDir is the memory named by --mem-dir or GIT_MEM_DIR, made
// absolute (hooks run in other directories), or "" for the default.
func (e *env) explicitMemDir() string {
	d := e.MemDir
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

// isTerminal reports whether w is a terminal (a hook's stdin often is
// /dev/null, which is not).
func isTerminal(w any) bool { return cli.IsTerminal(w) }
