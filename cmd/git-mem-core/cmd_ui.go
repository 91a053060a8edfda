package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/ui"
)

func init() { register(newUICmd) }

func newUICmd(e *env) *cobra.Command {
	var port int
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "ui [--port N] [--no-browser]",
		Short: "Browse the memory in a local web page (127.0.0.1 only)",
		Long: "Serve a web page over the memory on 127.0.0.1 (never another address): search as you\n" +
			"type, each exchange verbatim, a timeline, the memory palace, files and stats. It prints\n" +
			"the address with a random token and opens it in $BROWSER (else xdg-open) unless\n" +
			"--no-browser. Ctrl-C stops it. New commits (hooks, add, sync) show without a restart.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return usagef("--port must be between 0 and 65535")
			}
			m, err := e.open()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return ui.Run(ctx, m, ui.Options{Port: port, NoBrowser: noBrowser, Ready: func(url string) {
				if e.JSON {
					_ = e.printJSON(map[string]string{"url": url})
					return
				}
				fmt.Fprintf(e.out, "git mem ui: %s  (Ctrl-C stops it)\n", url)
			}}, e.errOut)
		},
	}
	cmd.Flags().IntVar(&port, "port", 0, "port on 127.0.0.1 (default: a free one)")
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the address; do not open a browser")
	return cmd
}
