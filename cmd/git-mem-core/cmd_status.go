package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { register(newStatusCmd) }

func newStatusCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Index state, pending and failed background work",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			st, err := m.Status()
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(st)
			}
			fmt.Fprintf(e.out, "memory   %s\n", st.MemDir)
			fmt.Fprintf(e.out, "main     %s\n", orNone(st.Head))
			fmt.Fprintf(e.out, "index    %s\n", st.Index)
			fmt.Fprintf(e.out, "pending  %d job(s)\n", st.Pending)
			if len(st.Failed) == 0 {
				fmt.Fprintln(e.out, "failed   none")
			}
			for _, f := range st.Failed {
				fmt.Fprintf(e.out, "failed   %s: %s %s after %d attempts: %s (git mem queue retry %s)\n", f.ID, f.Kind, f.Source, f.Attempts, f.Error, f.ID)
			}
			for _, d := range st.Dropped {
				fmt.Fprintf(e.out, "dropped  %s: %s on %s: %s\n", d.ID, d.Source, d.Time.Format("2006-01-02"), d.Reason)
			}
			return nil
		},
	}
}

func orNone(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}
