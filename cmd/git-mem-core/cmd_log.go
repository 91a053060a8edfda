package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/gitmem/git-mem/memory"
)

func init() { register(newLogCmd) }

func newLogCmd(e *env) *cobra.Command {
	var n int
	var oneline bool
	var ff cli.Filters
	cmd := &cobra.Command{
		Use:   "log [-n N] [FILTERS] [--oneline]",
		Short: "List stored exchanges as cards, newest first",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 0 {
				return usagef("-n must be 0 or more")
			}
			f, err := ff.Filter()
			if err != nil {
				return err
			}
			m, err := e.open()
			if err != nil {
				return err
			}
			entries, err := m.Log(f, n)
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(entries)
			}
			if len(entries) == 0 {
				// Like git log on an empty history, stdout stays empty; a
				// note says why, for a person.
				fmt.Fprintln(e.errOut, "git mem: "+emptyLogNote(f))
				return nil
			}
			for i, en := range entries {
				if oneline {
					fmt.Fprintf(e.out, "%s %s %s%s\n", en.Short, en.Time.Format("2006-01-02"), en.Core, cli.LinkMark(en))
					continue
				}
				if i > 0 {
					fmt.Fprintln(e.out)
				}
				printCard(e.out, en, false)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&n, "max-count", "n", 0, "show at most N exchanges (0 = all)")
	cmd.Flags().BoolVar(&oneline, "oneline", false, "one line per exchange")
	ff.Add(cmd, e.completeFilter)
	return cmd
}

// printCard prints a card the way git log prints a commit.
func printCard(w io.Writer, en *memory.Entry, full bool) {
	fmt.Fprintf(w, "commit %s\n", en.Commit)
	fmt.Fprintf(w, "Date:    %s\n", en.Time.Format("Mon Jan 2 15:04:05 2006 -0700"))
	if en.Project != "" {
		fmt.Fprintf(w, "Project: %s\n", en.Project)
	}
	if len(en.Rooms) > 0 {
		fmt.Fprintf(w, "Rooms:   %s\n", strings.Join(en.Rooms, ", "))
	}
	if full {
		fmt.Fprintf(w, "Exchange: %s\n", en.Exchange)
		if en.Session != "" {
			fmt.Fprintf(w, "Session: %s\n", en.Session)
		}
		if en.Agent != "" {
			fmt.Fprintf(w, "Agent:   %s\n", en.Agent)
		}
		if len(en.Files) > 0 {
			fmt.Fprintf(w, "Files:   %s\n", strings.Join(en.Files, ", "))
		}
	}
	printLinks(w, en)
	fmt.Fprintf(w, "\n    %s\n", en.Core)
	if en.Context != "" {
		fmt.Fprintf(w, "\n    %s\n", en.Context)
	}
}

// printLinks prints what replaced a card, what it replaced, and its pin.
func printLinks(w io.Writer, en *memory.Entry) {
	if len(en.SupersededBy) > 0 {
		fmt.Fprintf(w, "Superseded-By: %s\n", strings.Join(en.SupersededBy, ", "))
	}
	if len(en.Supersedes) > 0 {
		fmt.Fprintf(w, "Supersedes: %s\n", strings.Join(en.Supersedes, ", "))
	}
	if en.Pinned {
		fmt.Fprintln(w, "Pinned:  yes")
	}
}

func emptyLogNote(f memory.Filter) string {
	if f.IsZero() {
		return "no exchanges yet: `git mem add FILE`, `git mem import claude-code` or `git mem hook install claude-code`"
	}
	return "no exchange matches the filters"
}
