package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
)

func init() {
	register(newSearchCmd)
	register(newReindexCmd)
}

func newSearchCmd(e *env) *cobra.Command {
	var k int
	var mode string
	var verbatim bool
	var ff filterFlags
	cmd := &cobra.Command{
		Use:   "search <query> [-k N] [--mode M] [FILTERS] [--verbatim]",
		Short: "Find exchanges: BM25 over the verbatim exchanges and vectors of the cards",
		Long: "Find exchanges. Modes: " + strings.Join(memory.Modes, ", ") + " (default " + memory.DefaultMode + ").\n" +
			"Identical and near-identical exchanges take one slot. The index catches up with new\n" +
			"commits (add, sync, a plain git fetch) on first use.",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			// Unset, -k is 0 and search reads search.k from the config.
			if cmd.Flags().Changed("k") && k < 1 {
				return usagef("-k %d: give 1 or more results (default: search.k of the config, else 10)", k)
			}
			f, err := ff.filter()
			if err != nil {
				return err
			}
			q := memory.SearchQuery{Text: strings.Join(a, " "), K: k, Mode: mode, Filter: f, Verbatim: verbatim}
			if err := memory.CheckQuery(q); err != nil {
				return err
			}
			if e.warm != nil {
				// A warm search process's request: its answer, or none.
				results, err := e.warm.search(e, q)
				if err != nil {
					return err
				}
				return printResults(e, results, verbatim)
			}
			m, err := e.open()
			if err != nil {
				return err
			}
			p := e.startProgress("searching (the index catches up with new commits)")
			m.Progress = p.report
			m.OneShot = true
			results, note, err := m.Search(e.ctx, q)
			p.end()
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(e.errOut, "git mem: note: "+note)
			}
			err = printResults(e, results, verbatim)
			if err == nil {
				startSearchServer(m)
			}
			return err
		},
	}
	cmd.Flags().IntVarP(&k, "k", "k", 0, "number of results (default: search.k of the config, else 10)")
	cmd.Flags().StringVar(&mode, "mode", "", strings.Join(memory.Modes, " | ")+" (default "+memory.DefaultMode+")")
	cmd.Flags().BoolVar(&verbatim, "verbatim", false, "show each exchange itself")
	ff.add(cmd, e)
	return cmd
}

// printResults prints a search's hits as `git mem search` does.
func printResults(e *env, results []memory.Result, verbatim bool) error {
	if e.json {
		return e.printJSON(results)
	}
	if len(results) == 0 {
		fmt.Fprintln(e.errOut, "git mem: no exchange matches (try fewer words, or drop a filter)")
		return nil
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(e.out)
		}
		fmt.Fprintf(e.out, "%s %s  %.3f", r.Short, r.Time.Format("2006-01-02"), r.Score)
		if len(r.Rooms) > 0 {
			fmt.Fprintf(e.out, "  [%s]", strings.Join(r.Rooms, ", "))
		}
		if len(r.Collapsed) > 0 {
			fmt.Fprintf(e.out, "  (+%d similar)", len(r.Collapsed))
		}
		fmt.Fprint(e.out, linkMark(&r.Entry))
		fmt.Fprintf(e.out, "\n    %s\n", r.Core)
		if r.Context != "" {
			fmt.Fprintf(e.out, "    %s\n", r.Context)
		}
		if verbatim && r.Verbatim != "" {
			ex, err := exchange.Parse([]byte(r.Verbatim))
			if err == nil {
				fmt.Fprintln(e.out)
				printExchange(e.out, ex)
			}
		}
	}
	return nil
}

func newReindexCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the search indexes from the commits alone",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			p := e.startProgress("rebuilding the search index")
			m.Progress = p.report
			rep, err := m.Reindex(e.ctx)
			p.end()
			if err != nil {
				return err
			}
			if e.json {
				return e.printJSON(rep)
			}
			fmt.Fprintf(e.out, "indexed %d exchanges\n", rep.Docs)
			return nil
		},
	}
}
