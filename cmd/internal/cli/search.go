package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory/reader"
	"github.com/gitmem/git-mem/search"
)

// Globals are the root's flags, which every command reads.
type Globals struct {
	MemDir string
	JSON   bool
}

// AddGlobalFlags defines --mem-dir and --json on the root.
func AddGlobalFlags(root *cobra.Command, g *Globals) {
	root.PersistentFlags().StringVar(&g.MemDir, "mem-dir", "", "memory repo (default $GIT_MEM_DIR, then ~/.git-mem)")
	root.PersistentFlags().BoolVar(&g.JSON, "json", false, "print JSON (errors too)")
}

// MemDirOf applies --mem-dir, then GIT_MEM_DIR, then ~/.git-mem.
func (g *Globals) MemDirOf() string {
	if g.MemDir != "" {
		return g.MemDir
	}
	if d := os.Getenv("GIT_MEM_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".git-mem"
	}
	return filepath.Join(home, ".git-mem")
}

// SearchFunc runs a checked query for the search command: its hits, a
// note for stderr, and what to run once they are printed (nil for
// nothing).
type SearchFunc func(q reader.SearchQuery) (results []reader.Result, note string, after func(), err error)

// NewSearch is the `search` command of both binaries: run is where they
// differ (git-mem-core's catches the index up; git-mem-search's hands the
// command over when it would have to).
func NewSearch(g *Globals, out, errOut io.Writer, run SearchFunc, complete Completer) *cobra.Command {
	var k int
	var mode string
	var verbatim bool
	var ff Filters
	cmd := &cobra.Command{
		Use:   "search <query> [-k N] [--mode M] [FILTERS] [--verbatim]",
		Short: "Find exchanges: BM25 over the verbatim exchanges and vectors of the cards",
		Long: "Find exchanges. Modes: " + strings.Join(search.Modes, ", ") + " (default " + search.DefaultMode + ").\n" +
			"Identical and near-identical exchanges take one slot. The index catches up with new\n" +
			"commits (add, sync, a plain git fetch) on first use.",
		Args: Args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			// Unset, -k is 0 and search reads search.k from the config.
			if cmd.Flags().Changed("k") && k < 1 {
				return Usagef("-k %d: give 1 or more results (default: search.k of the config, else 10)", k)
			}
			f, err := ff.Filter()
			if err != nil {
				return err
			}
			q := reader.SearchQuery{Text: strings.Join(a, " "), K: k, Mode: mode, Filter: f, Verbatim: verbatim}
			if err := reader.CheckQuery(q); err != nil {
				return err
			}
			results, note, after, err := run(q)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(errOut, "git mem: note: "+note)
			}
			err = PrintResults(out, errOut, g.JSON, results, verbatim)
			if err == nil && after != nil {
				after()
			}
			return err
		},
	}
	cmd.Flags().IntVarP(&k, "k", "k", 0, "number of results (default: search.k of the config, else 10)")
	cmd.Flags().StringVar(&mode, "mode", "", strings.Join(search.Modes, " | ")+" (default "+search.DefaultMode+")")
	cmd.Flags().BoolVar(&verbatim, "verbatim", false, "show each exchange itself")
	ff.Add(cmd, complete)
	return cmd
}
