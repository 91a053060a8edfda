package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory"
)

func init() { register(newAddCmd) }

func newAddCmd(e *env) *cobra.Command {
	var format, project, agent string
	var noIndex bool
	cmd := &cobra.Command{
		Use:   "add [FILE…|-]",
		Short: "Store exchanges (JSON Lines, or agent transcripts) as commits",
		Long: "Store each exchange of each FILE (or of standard input, -) as one commit on main.\n" +
			"Exchanges already stored are skipped, so adding the same file twice adds nothing. Bad\n" +
			"records are reported as file:line and skipped; the good ones are stored and the exit\n" +
			"code is 3. A UTF-8 BOM is ignored; an empty file adds nothing.",
		RunE: func(cmd *cobra.Command, a []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			rep, err := m.AddFiles(e.ctx, a, e.in, format, memory.AddOptions{Project: project, Agent: agent, NoIndex: noIndex})
			if err != nil {
				return err
			}
			return e.reportAdd(rep)
		},
	}
	cmd.Flags().StringVar(&format, "format", "auto", "input format: auto|exchange|claude-code|codex|aider")
	cmd.Flags().StringVar(&project, "project", "", "set the project of every exchange")
	cmd.Flags().StringVar(&agent, "agent", "", "set the agent of every exchange")
	cmd.Flags().BoolVar(&noIndex, "no-index", false, "do not update the search index now (the next search catches up)")
	return cmd
}

// reportAdd prints the outcome and sets exit code 3 when records were skipped.
func (e *env) reportAdd(rep memory.AddReport) error {
	skipped := rep.Skipped
	if e.JSON {
		if err := e.printJSON(rep); err != nil {
			return err
		}
	} else {
		for _, s := range skipped {
			fmt.Fprintf(e.errOut, "git mem: %s (skipped)\n", s)
		}
		fmt.Fprintf(e.out, "added %d, already present %d", rep.Added, rep.Present)
		if len(skipped) > 0 {
			fmt.Fprintf(e.out, ", skipped %d", len(skipped))
		}
		if rep.Redacted > 0 {
			fmt.Fprintf(e.out, ", %d secrets redacted", rep.Redacted)
		}
		if rep.Reused > 0 {
			fmt.Fprintf(e.out, ", %d of them under a derived id (their id, from a position in a rewritten history, held another exchange)", rep.Reused)
		}
		if rep.HeldBack > 0 {
			fmt.Fprintf(e.out, ", held back %d open exchange(s): their transcript changed in the last %d minutes, so the session may still be running (its hook or a later add stores them)", rep.HeldBack, int(memory.LiveSession.Minutes()))
		}
		fmt.Fprintln(e.out)
		if rep.IndexErr != "" {
			fmt.Fprintf(e.errOut, "git mem: stored, but the index was not updated: %s\n", rep.IndexErr)
		}
	}
	if len(skipped) > 0 {
		return errPartial
	}
	return nil
}
