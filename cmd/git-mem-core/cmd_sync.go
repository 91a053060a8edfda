package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory"
)

func init() { register(newSyncCmd) }

func newSyncCmd(e *env) *cobra.Command {
	var remote string
	cmd := &cobra.Command{
		Use:   "sync [--remote NAME]",
		Short: "Fetch, union-merge and push the memory (default remote: origin)",
		Long: "Fetches the remote's main, merges it into main (a fast-forward, or a merge commit whose tree is\n" +
			"the union of both: no conflicts), pushes main back (never forced; retried when another machine\n" +
			"pushed in between) and brings the search index up to date. A remote whose history was rewritten,\n" +
			"or that is not a git mem memory, is refused and nothing changes.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			rep, err := m.Sync(e.ctx, remote)
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(rep)
			}
			fmt.Fprintln(e.out, syncSummary(rep))
			if rep.IndexErr != "" {
				fmt.Fprintf(e.errOut, "git mem: warning: the search index did not catch up (%s): run `git mem reindex`\n", rep.IndexErr)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&remote, "remote", memory.DefaultRemote, "the remote to sync with")
	return cmd
}

func syncSummary(r memory.SyncReport) string {
	if r.UpToDate {
		return fmt.Sprintf("Already up to date with %s (%s)", r.Remote, r.URL)
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("fetched %d", r.Fetched))
	how := ""
	switch {
	case r.MergeCommit != "":
		how = fmt.Sprintf(" (merge %s)", r.MergeCommit[:7])
	case r.FastForward:
		how = " (fast-forward)"
	}
	parts = append(parts, fmt.Sprintf("merged %d%s", r.Merged, how))
	parts = append(parts, fmt.Sprintf("pushed %d", r.Pushed))
	return fmt.Sprintf("Synced with %s (%s): %s", r.Remote, r.URL, strings.Join(parts, ", "))
}
