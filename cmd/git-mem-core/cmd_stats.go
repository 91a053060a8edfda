package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/spf13/cobra"
)

func init() {
	register(newStatsCmd)
	register(newRoomsCmd)
}

func newStatsCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Exchanges, sessions, verbatim vs distilled tokens, compression",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			st, err := m.Stats()
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(st)
			}
			fmt.Fprintf(e.out, "exchanges         %d\n", st.Exchanges)
			fmt.Fprintf(e.out, "sessions          %d\n", st.Sessions)
			fmt.Fprintf(e.out, "projects          %d\n", st.Projects)
			fmt.Fprintf(e.out, "rooms             %d\n", st.Rooms)
			fmt.Fprintf(e.out, "verbatim tokens   %d\n", st.VerbatimTokens)
			fmt.Fprintf(e.out, "distilled tokens  %d\n", st.DistilledTokens)
			fmt.Fprintf(e.out, "compression       %.1fx\n", st.Compression)
			fmt.Fprintf(e.out, "secrets redacted  %d\n", st.Redactions)
			fmt.Fprintf(e.out, "distillers        %s\n", countList(st.Distillers))
			if len(st.Agents) > 0 {
				fmt.Fprintf(e.out, "agents            %s\n", countList(st.Agents))
			}
			if st.First != nil && st.Last != nil {
				fmt.Fprintf(e.out, "first             %s\n", st.First.Format("2006-01-02 15:04 -0700"))
				fmt.Fprintf(e.out, "last              %s\n", st.Last.Format("2006-01-02 15:04 -0700"))
			}
			return nil
		},
	}
}

func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d)", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func newRoomsCmd(e *env) *cobra.Command {
	var ff cli.Filters
	cmd := &cobra.Command{
		Use:   "rooms",
		Short: "The memory palace: every room with its count and last use",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := ff.Filter()
			if err != nil {
				return err
			}
			m, err := e.open()
			if err != nil {
				return err
			}
			rooms, err := m.Rooms(f)
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(rooms)
			}
			for _, r := range rooms {
				fmt.Fprintf(e.out, "%5d  %s  %s\n", r.Count, r.LastUsed.Format("2006-01-02"), r.Room)
			}
			return nil
		},
	}
	ff.Add(cmd, e.completeFilter)
	return cmd
}
