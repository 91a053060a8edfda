package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { register(newQueueCmd) }

func newQueueCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List the background jobs that failed; retry or drop them",
		Long: "A hook's job that failed three times is parked: the exchanges of its transcript are not stored\n" +
			"yet. `git mem queue` lists them, `git mem queue retry` runs them again, `git mem queue drop`\n" +
			"gives them up. A failed job whose exchanges are all in main, or whose transcript is gone, is\n" +
			"dropped on its own and `git mem status` says so.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			jobs, err := m.FailedJobs()
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(jobs)
			}
			for _, j := range jobs {
				fmt.Fprintf(e.out, "%s  %s %s after %d attempts: %s\n", j.ID, j.Kind, j.Source, j.Attempts, j.Error)
			}
			if len(jobs) == 0 {
				fmt.Fprintln(e.errOut, "no failed jobs")
			}
			return nil
		},
	}
	verb := func(use, short string, run func(ids []string, all bool) (int, error), done string) *cobra.Command {
		var all bool
		c := &cobra.Command{
			Use:   use + " (JOB... | --all)",
			Short: short,
			RunE: func(cmd *cobra.Command, ids []string) error {
				if len(ids) == 0 && !all {
					return usagef("name the jobs (`git mem queue` lists them) or pass --all")
				}
				n, err := run(ids, all)
				if err != nil {
					return err
				}
				if e.JSON {
					return e.printJSON(map[string]int{done: n})
				}
				fmt.Fprintf(e.out, "%s %d job(s)\n", done, n)
				return nil
			},
		}
		c.Flags().BoolVar(&all, "all", false, "every failed job")
		return c
	}
	cmd.AddCommand(verb("retry", "Queue failed jobs again and run them", func(ids []string, all bool) (int, error) {
		m, err := e.open()
		if err != nil {
			return 0, err
		}
		n, err := m.RetryFailed(ids, all)
		if err != nil || n == 0 {
			return n, err
		}
		return n, m.RunQueue(e.ctx, func(string, ...any) {})
	}, "retried"))
	cmd.AddCommand(verb("drop", "Give failed jobs up (their exchanges are not stored)", func(ids []string, all bool) (int, error) {
		m, err := e.open()
		if err != nil {
			return 0, err
		}
		return m.DropFailed(ids, all)
	}, "dropped"))
	return cmd
}
