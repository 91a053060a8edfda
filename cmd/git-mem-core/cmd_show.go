package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/gitmem/git-mem/exchange"
)

func init() { register(newShowCmd) }

func newShowCmd(e *env) *cobra.Command {
	var verbatim bool
	cmd := &cobra.Command{
		Use:   "show <commit|exchange-id> [--verbatim]",
		Short: "Show one card and, with --verbatim, the exchange itself",
		Long: "Show one card. With --verbatim the stored exchange follows, rendered for a person.\n" +
			"With --verbatim --json the stored blob (canonical JSON) is printed byte for byte.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			en, blob, err := m.Show(a[0])
			if err != nil {
				return err
			}
			if e.JSON && verbatim {
				_, err := e.out.Write(blob)
				return err
			}
			if e.JSON {
				return e.printJSON(en)
			}
			printCard(e.out, en, true)
			if verbatim {
				ex, err := exchange.Parse(blob)
				if err != nil {
					return fmt.Errorf("stored exchange %s: %w", en.Exchange, err)
				}
				fmt.Fprintln(e.out)
				cli.PrintExchange(e.out, ex)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&verbatim, "verbatim", false, "also show the exchange itself")
	return cmd
}
