package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/gitmem/git-mem/memory"
)

func init() {
	register(newSearchCmd)
	register(newReindexCmd)
}

func newSearchCmd(e *env) *cobra.Command {
	return cli.NewSearch(&e.Globals, e.out, e.errOut, e.search, e.completeFilter)
}

// search runs a `git mem search`: for a warm search process's request its
// answer, or none; else over the index caught up with main, then starts
// the warm process.
func (e *env) search(q memory.SearchQuery) ([]memory.Result, string, func(), error) {
	if e.warm != nil {
		results, err := e.warm.search(e, q)
		return results, "", nil, err
	}
	m, err := e.open()
	if err != nil {
		return nil, "", nil, err
	}
	p := e.startProgress("searching (the index catches up with new commits)")
	m.Progress = p.Report
	m.OneShot = true
	results, note, err := m.Search(e.ctx, q)
	p.End()
	return results, note, func() { startSearchServer(m) }, err
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
			m.Progress = p.Report
			rep, err := m.Reindex(e.ctx)
			p.End()
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(rep)
			}
			fmt.Fprintf(e.out, "indexed %d exchanges\n", rep.Docs)
			return nil
		},
	}
}
