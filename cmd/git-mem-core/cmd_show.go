package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

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
			if e.json && verbatim {
				_, err := e.out.Write(blob)
				return err
			}
			if e.json {
				return e.printJSON(en)
			}
			printCard(e.out, en, true)
			if verbatim {
				ex, err := exchange.Parse(blob)
				if err != nil {
					return fmt.Errorf("stored exchange %s: %w", en.Exchange, err)
				}
				fmt.Fprintln(e.out)
				printExchange(e.out, ex)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&verbatim, "verbatim", false, "also show the exchange itself")
	return cmd
}

// printExchange renders an exchange for a person: one block per turn.
func printExchange(w io.Writer, ex *exchange.Exchange) {
	for _, t := range ex.Turns {
		head := t.Role
		if t.Role == exchange.RoleTool && t.Name != "" {
			head += " " + t.Name
		}
		if sp, ok := t.Extra["speaker"].(string); ok && sp != "" {
			head += " (" + sp + ")"
		}
		fmt.Fprintf(w, "── %s ──\n", head)
		if t.Input != nil {
			c, _ := exchange.Canonical(t.Input)
			fmt.Fprintf(w, "%s\n", c)
		}
		if t.Text != "" {
			fmt.Fprintln(w, strings.TrimRight(t.Text, "\n"))
		}
		fmt.Fprintln(w)
	}
}
