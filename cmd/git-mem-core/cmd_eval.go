package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/eval"
	"github.com/gitmem/git-mem/memory"
)

func init() { register(newEvalCmd) }

func newEvalCmd(e *env) *cobra.Command {
	var modes []string
	var k int
	var pooled bool
	cmd := &cobra.Command{
		Use:   "eval DIR [--mode M ...] [-k N] [--pooled] [--json]",
		Short: "Measure search quality on an eval set (builds its own temporary memories)",
		Long: "Measure retrieval quality. DIR holds exchanges.jsonl and queries.jsonl, or subfolders that\n" +
			"each do (folders without queries.jsonl are skipped). Each folder's exchanges are stored in a\n" +
			"fresh temporary memory through the real add path (your memory is not touched), then every\n" +
			"query runs in each mode (default: all of " + strings.Join(memory.Modes, ", ") + ").\n\n" +
			"Reported per mode, overall and per query category: MRR, Recall@5, Recall@10, nDCG@10 and\n" +
			"all-evidence Recall@10, averaged over all queries of all folders. Queries marked\n" +
			"\"adversarial\": true are scored apart and left out of the headline. A result slot that\n" +
			"collapses near-duplicate exchanges counts as relevant when any of its members is.\n" +
			"Each mode's MRR difference from the default comes with a 95% paired-bootstrap interval\n" +
			"over queries (fixed seed): an interval holding 0 is noise.\n\n" +
			"--pooled stores every subfolder in one memory (ids namespaced \"<folder>/\") and ranks each\n" +
			"query against all of it, as one memory across projects would; its relevant exchanges stay\n" +
			"those of its own folder, and each folder is also reported apart.\n\n" +
			"queries.jsonl: {\"qid\", \"query\", \"category\" (number or word), \"relevant\": [exchange ids],\n" +
			"\"adversarial\" (optional)}.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if k <= 0 {
				return usagef("-k must be positive")
			}
			var ms []string
			for _, m := range modes {
				for _, x := range strings.Split(m, ",") {
					if x = strings.TrimSpace(x); x != "" {
						ms = append(ms, x)
					}
				}
			}
			if err := eval.CheckModes(ms); err != nil {
				return usageError{Err: err}
			}
			sets, skipped, err := eval.Load(a[0])
			if err != nil {
				if errors.Is(err, eval.ErrNoSet) {
					return usageError{Err: err}
				}
				return err
			}
			progress := func(format string, args ...any) {
				fmt.Fprintf(e.errOut, "git mem eval: "+format+"\n", args...)
			}
			// An interrupt cancels the run, which then removes its
			// temporary memories.
			ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := eval.Run(ctx, sets, eval.Options{Modes: ms, K: k, Pooled: pooled, Progress: progress})
			if err != nil {
				return err
			}
			rep.Skipped = skipped
			if e.JSON {
				return e.printJSON(rep.Modes)
			}
			return eval.WriteTable(e.out, rep)
		},
	}
	cmd.Flags().StringSliceVar(&modes, "mode", nil, "mode to measure (repeat, or comma-separate; default all)")
	cmd.Flags().BoolVar(&pooled, "pooled", false, "one memory of all subfolders; every query ranked against all of it")
	cmd.Flags().IntVarP(&k, "k", "k", 10, "results per query (metrics cut off at 5, 10 or k)")
	return cmd
}
