package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory"
)

func init() { register(newRemoteCmd) }

func newRemoteCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remote [add NAME URL | remove NAME]",
		Short: "List the memory's remotes, add one to sync with, or remove one",
		Long: "Without arguments, lists the remotes (passwords hidden). `git mem remote add NAME URL` adds one\n" +
			"(or changes its URL) with a fetch refspec for main. URLs: a path, file://, ssh://, git@host:path,\n" +
			"https://, git://. Then run `git mem sync --remote NAME`. `git mem remote remove NAME` forgets\n" +
			"a remote and its remote-tracking refs; the exchanges already synced stay.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			rs, err := m.RemoteList()
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(rs)
			}
			for _, r := range rs {
				fmt.Fprintf(e.out, "%s\t%s\n", r.Name, r.URL)
			}
			return nil
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "add NAME URL",
		Short: "Add a remote (or change its URL)",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			if err := m.AddRemote(a[0], a[1]); err != nil {
				return err
			}
			info := memory.RemoteInfo{Name: a[0]}
			if rs, err := m.RemoteList(); err == nil {
				for _, r := range rs {
					if r.Name == a[0] {
						info = r
					}
				}
			}
			if e.JSON {
				return e.printJSON(info)
			}
			hint := "git mem sync"
			if a[0] != memory.DefaultRemote {
				hint += " --remote " + a[0]
			}
			fmt.Fprintf(e.out, "Remote %s → %s (run `%s`)\n", info.Name, info.URL, hint)
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Remove a remote (the exchanges already synced stay)",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			if err := m.RemoveRemote(a[0]); err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(map[string]string{"removed": a[0]})
			}
			fmt.Fprintf(e.out, "Removed remote %s\n", a[0])
			return nil
		},
	})
	return cmd
}
