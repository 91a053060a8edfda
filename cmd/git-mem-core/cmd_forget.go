package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/gitmem/git-mem/memory"
)

func init() { register(newForgetCmd) }

func newForgetCmd(e *env) *cobra.Command {
	var ff cli.Filters
	var query, reason string
	var k int
	var yes, dryRun bool
	cmd := &cobra.Command{
		Use:   "forget [COMMIT|EXCHANGE-ID...] [FILTERS] [--query Q [-k N]] [--reason R] [--dry-run] [--yes]",
		Short: "Remove exchanges for good: rewrite main without them, purge their objects, keep a tombstone",
		Long: "forget removes the exchanges it is given (commits or exchange ids), those matching the\n" +
			"filters, or a search's top results, for good: main is rewritten without them (every other\n" +
			"exchange keeps its id), a tombstone (id, blob id, time, reason — never the content) is recorded\n" +
			"on refs/mem/tombstones, reflogs and unreachable objects are purged, and the index follows. The\n" +
			"same exchange is never stored again by add, import or a hook. It lists what it would remove and\n" +
			"asks; --yes skips the question (needed off a terminal), --dry-run only lists.",
		RunE: func(cmd *cobra.Command, refs []string) error {
			f, err := ff.Filter()
			if err != nil {
				return err
			}
			m, err := e.open()
			if err != nil {
				return err
			}
			plan, err := m.ForgetPlan(e.ctx, memory.ForgetSelect{Refs: refs, Filter: f, Query: query, K: k})
			if errors.Is(err, memory.ErrNothingSelected) {
				return usageError{Err: err}
			}
			if err != nil {
				return err
			}
			if dryRun || len(plan) == 0 {
				if e.JSON {
					return e.printJSON(memory.ForgetReport{Forgotten: []string{}, DryRun: dryRun, Plan: nonNilEntries(plan)})
				}
				printPlan(e, plan)
				if len(plan) == 0 {
					fmt.Fprintln(e.errOut, "nothing to forget")
				}
				return nil
			}
			if !yes {
				if !isTerminal(e.errOut) || e.JSON {
					return usagef("forget removes %d exchange(s) for good: pass --yes to do it without asking (or --dry-run to list them)", len(plan))
				}
				printPlan(e, plan)
				fmt.Fprintf(e.errOut, "Forget these %d exchange(s) for good? [y/N] ", len(plan))
				ans, _ := bufio.NewReader(e.in).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(ans)); a != "y" && a != "yes" {
					fmt.Fprintln(e.errOut, "nothing forgotten")
					return nil
				}
			}
			rep, err := m.Forget(e.ctx, plan, reason)
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(rep)
			}
			fmt.Fprintf(e.out, "forgot %d exchange(s); main %s → %s; purged %d pack(s) and %d loose object(s)\n",
				len(rep.Forgotten), short(rep.Before), orNone(short(rep.After)), rep.Purged.PacksRemoved, rep.Purged.LooseRemoved)
			fmt.Fprintln(e.errOut, "note: copies on a remote stay until the next `git mem sync` replaces its main, and on a hosted remote until its own garbage collection")
			return nil
		},
	}
	ff.Add(cmd, e.completeFilter)
	cmd.Flags().StringVar(&query, "query", "", "forget the top results of this search")
	cmd.Flags().IntVarP(&k, "k", "k", 10, "with --query: how many results")
	cmd.Flags().StringVar(&reason, "reason", "", "why (kept in the tombstone)")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only list what would be forgotten")
	return cmd
}

func printPlan(e *env, plan []*memory.Entry) {
	for _, en := range plan {
		fmt.Fprintf(e.out, "%s %s %s\n", en.Short, en.Time.Format("2006-01-02"), en.Core)
	}
}

func nonNilEntries(es []*memory.Entry) []*memory.Entry {
	if es == nil {
		return []*memory.Entry{}
	}
	return es
}

func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}
