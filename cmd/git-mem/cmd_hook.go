package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/spf13/cobra"

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
	for _, action := range []string{"install", "uninstall"} {
		cmd.AddCommand(newHookInstallCmd(e, action))
	}
	return cmd
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
		Use:   action + " claude-code|codex [--scope user|project]",
		Short: map[string]string{"install": "Install git mem's hooks (and MCP server) into an agent's settings", "uninstall": "Remove git mem's hooks and MCP server from an agent's settings"}[action],
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			msg, err := memory.InstallHooks(a[0], action == "uninstall", memory.InstallOptions{Scope: scope, NoContext: noContext, NoMCP: noMCP})
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
	cmd.Flags().StringVar(&scope, "scope", memory.ScopeUser, "user or project settings")
	if action == "install" {
		cmd.Flags().BoolVar(&noContext, "no-context", false, "do not inject recalled memories at session start")
		cmd.Flags().BoolVar(&noMCP, "no-mcp", false, "do not register the MCP server")
	}
	return cmd
}

func newImportCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "import claude-code|codex [DIR]",
		Short: "Backfill whole agent histories (default ~/.claude/projects, ~/.codex/sessions)",
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			kind := a[0]
			if kind != "claude-code" && kind != "codex" {
				return usagef("unknown agent %q: use claude-code or codex", kind)
			}
			root := ""
			if len(a) == 2 {
				root = a[1]
			}
			m, err := e.open()
			if err != nil {
				return err
			}
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
			if e.json {
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
				fmt.Fprintln(e.out)
			}
			if len(rep.Skipped) > 0 {
				return errPartial
			}
			return nil
		},
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
