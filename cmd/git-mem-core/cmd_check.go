package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory"
)

func init() { register(newCheckCmd) }

func newCheckCmd(e *env) *cobra.Command {
	var repair bool
	cmd := &cobra.Command{
		Use:   "check [--repair]",
		Short: "Verify the memory, its indexes, caches and queue against each other",
		Long: "check reads every commit and blob of main (and runs git fsck --strict), checks that the search\n" +
			"index holds exactly main's exchanges with their current cards and that its files pass their\n" +
			"checksums, that the card cache agrees, and reports failed background jobs and leftovers of\n" +
			"killed writers. It prints one line per problem and exits 1 when there is any. --repair rebuilds\n" +
			"the index and the cache and removes leftovers; it never changes a commit.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			rep, err := m.Check(e.ctx, repair)
			if rep == nil {
				return err
			}
			if e.JSON {
				if perr := e.printJSON(rep); perr != nil {
					return perr
				}
				if errors.Is(err, memory.ErrCheckFailed) {
					return errReported
				}
				return err
			}
			for _, p := range rep.Problems {
				fix := ""
				if p.Repairable && !repair {
					fix = " (git mem check --repair)"
				}
				fmt.Fprintf(e.out, "%s: %s%s\n", p.Area, p.What, fix)
			}
			for _, r := range rep.Repaired {
				fmt.Fprintf(e.out, "repaired: %s\n", r)
			}
			fmt.Fprintf(e.errOut, "checked %d commits, %d exchanges, %d indexed, %d pending job(s): %d problem(s)\n",
				rep.Commits, rep.Exchanges, rep.IndexDocs, rep.Pending, len(rep.Problems))
			return err
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "rebuild the index and caches, remove leftovers (never touches commits)")
	return cmd
}
