package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/recall"
)

func init() { register(newContextCmd) }

func newContextCmd(e *env) *cobra.Command {
	var budget int
	var mode, hook string
	var warm bool
	var ff cli.Filters
	cmd := &cobra.Command{
		Use:   "context [QUERY] [--budget N] [FILTERS] [--hook claude-code]",
		Short: "Print recalled cards for a query, or the current project's recent work, within a token budget",
		Long: "Print a fenced block of cards that fits in --budget BPE tokens (cl100k, fence included):\n" +
			"the best cards for QUERY, or with no query the recent work and most used rooms of the\n" +
			"current project (from --project, else the git remote origin's repo name, else the folder).\n" +
			"Each card names its short commit id: `git mem show <id> --verbatim` gives the exchange.\n" +
			"The block is wrapped in <git-mem-context ...>...</git-mem-context>; git mem never stores it again.\n\n" +
			"--hook claude-code reads a SessionStart hook's JSON on stdin and prints Claude Code's\n" +
			"hookSpecificOutput.additionalContext. It always exits 0 and prints nothing on error\n" +
			"(errors go to <mem-dir>/mem/log/context.log), so it never blocks a session.",
		RunE: func(cmd *cobra.Command, a []string) error {
			if warm {
				return warmCardCache(e)
			}
			if hook != "" {
				runContextHook(e, hook, budget)
				return nil
			}
			if budget < recall.MinBudget || budget > recall.MaxBudget {
				return usagef("--budget %d: give %d..%d tokens (%d is the fence and one card; default %d)", budget, recall.MinBudget, recall.MaxBudget, recall.MinBudget, recall.DefaultBudget)
			}
			f, err := ff.Filter()
			if err != nil {
				return err
			}
			req := recall.Request{Query: strings.Join(a, " "), Budget: budget, Mode: mode, Filter: f}
			if strings.TrimSpace(req.Query) != "" {
				q := memory.SearchQuery{Text: req.Query, Mode: mode}
				if err := memory.CheckQuery(q); err != nil {
					return err
				}
			} else if f.Project == "" {
				if cwd, err := os.Getwd(); err == nil {
					req.Project = memory.ProjectFromCwd(cwd)
				}
			}
			m, err := e.open()
			if err != nil {
				return err
			}
			res, err := recall.Recall(e.ctx, m, req)
			if err != nil {
				return err
			}
			if res.Note != "" {
				fmt.Fprintln(e.errOut, "git mem: note: "+res.Note)
			}
			if e.JSON {
				return e.printJSON(res)
			}
			if res.Text == "" {
				what := "the project " + res.Project
				if req.Query != "" {
					what = "the query"
				} else if res.Project == "" {
					what = "the filters"
				}
				fmt.Fprintf(e.errOut, "git mem: nothing recalled for %s (no matching exchange, or --budget %d is too small)\n", what, budget)
				return nil
			}
			fmt.Fprintln(e.out, res.Text)
			return nil
		},
	}
	cmd.Flags().IntVar(&budget, "budget", recall.DefaultBudget, "at most N BPE tokens (cl100k), fence included; at least 100")
	cmd.Flags().StringVar(&mode, "mode", "", "search mode for QUERY (see git mem search)")
	cmd.Flags().StringVar(&hook, "hook", "", "answer an agent's hook: claude-code (SessionStart JSON on stdin)")
	cmd.Flags().BoolVar(&warm, "warm", false, "only bring the card cache up to date (the hook starts this in the background)")
	_ = cmd.Flags().MarkHidden("warm")
	ff.Add(cmd, e.completeFilter)
	return cmd
}

// runContextHook answers a SessionStart hook: it never fails the session
// (recall.SessionStartHook logs every problem and prints nothing).
func runContextHook(e *env, hook string, budget int) {
	if out := recall.SessionStartHook(e.ctx, e.resolveMemDir(), hook, e.in, budget); out != nil {
		_, _ = e.out.Write(out)
	}
}

// warmCardCache brings the card cache up to date with main.
func warmCardCache(e *env) error {
	m, err := e.open()
	if err != nil {
		return err
	}
	start := time.Now()
	all, note, err := recall.Entries(e.ctx, m)
	if err != nil {
		return fmt.Errorf("build the card cache: %w", err)
	}
	if note != "" {
		return errors.New(note)
	}
	fmt.Fprintf(e.out, "%s card cache: %d cards in %s\n", time.Now().UTC().Format(time.RFC3339), len(all), time.Since(start).Round(time.Millisecond))
	return nil
}
