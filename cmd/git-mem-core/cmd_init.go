package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory"
)

func init() { register(newInitCmd) }

func newInitCmd(e *env) *cobra.Command {
	var remote string
	cmd := &cobra.Command{
		Use:   "init [--remote URL]",
		Short: "Create the memory repo (harmless when it exists)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := e.resolveMemDir()
			m, created, err := memory.Init(dir)
			if err != nil {
				return err
			}
			if remote != "" {
				if err := m.AddRemote("origin", remote); err != nil {
					return err
				}
			}
			if e.JSON {
				return e.printJSON(map[string]any{"mem_dir": m.Repo.Dir(), "created": created, "remote": remote})
			}
			if created {
				fmt.Fprintf(e.out, "Initialized empty memory in %s\n", m.Repo.Dir())
			} else {
				fmt.Fprintf(e.out, "Memory already exists in %s\n", m.Repo.Dir())
			}
			if remote != "" {
				fmt.Fprintf(e.out, "Remote origin → %s (run `git mem sync`)\n", remote)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&remote, "remote", "", "add this URL as remote origin")
	return cmd
}
