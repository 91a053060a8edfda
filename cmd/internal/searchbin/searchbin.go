// Package searchbin is git-mem-search, the binary the front (git-mem)
// replaces itself with for a `git mem search` that no warm search process
// answered. It links the read path alone (memory/reader, search, gitstore,
// cobra without cobra/doc): no distiller, gitleaks, SQLite, MCP, UI nor
// openai-go, whose package initialisers made a cold search start ~11 ms
// later in git-mem-core (docs/BENCHMARKS.md, sessions 23 and 24). It runs
// the search command of package cli, which git-mem-core runs too, so what
// it prints is git-mem-core's, and it answers only a search that needs no
// index work. Anything else it hands over, before printing anything, by
// replacing itself with git-mem-core and the same arguments: an index
// behind main (a catch-up or rebuild writes it), its lock held by another
// process, no memory, a config naming an LLM distiller or a remote
// embedder, a profile asked for, --help, a flag it does not know, an error
// of the search.
package searchbin

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/gitmem/git-mem/cmd/internal/front"
	"github.com/gitmem/git-mem/cmd/internal/warm"
	"github.com/gitmem/git-mem/memory/reader"
)

// errHandOver ends a run that git-mem-core must do instead.
var errHandOver = errors.New("hand over to " + front.CoreName)

// Main runs git-mem-search and returns the exit code; it does not return
// when it hands the command over to git-mem-core.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if _, ok := front.SearchCall(args); !ok || profiled() {
		return front.ExecCore(args, cli.WantsJSON(args), stdout, stderr)
	}
	g := &cli.Globals{}
	s := &searcher{g: g, errOut: stderr}
	root := &cobra.Command{Use: "git-mem", SilenceUsage: true, SilenceErrors: true}
	cli.AddGlobalFlags(root, g)
	root.SetFlagErrorFunc(func(*cobra.Command, error) error { return errHandOver })
	helped := false
	root.SetHelpFunc(func(*cobra.Command, []string) { helped = true })
	root.AddCommand(cli.NewSearch(g, stdout, stderr, s.run, nil))
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(context.Background())
	if helped || errors.Is(err, errHandOver) {
		return front.ExecCore(args, g.JSON || cli.WantsJSON(args), stdout, stderr)
	}
	code, _ := cli.ExitCode(err)
	if err != nil {
		cli.PrintError(stdout, stderr, err, code, g.JSON || cli.WantsJSON(args))
	}
	return code
}

// profiled reports whether a profile or trace of the search process is
// asked for: git-mem-core writes those.
func profiled() bool {
	for _, k := range warm.ColdEnvNames {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

// searcher runs the search command's query.
type searcher struct {
	g      *cli.Globals
	errOut io.Writer
}

// run opens the memory as memory.Open does and searches it when that
// needs no index work (reader.SearchIfCurrent); anything else hands over.
// It starts the warm search process afterwards as git-mem-core does.
func (s *searcher) run(q reader.SearchQuery) ([]reader.Result, string, func(), error) {
	r, err := reader.Open(s.g.MemDirOf())
	if err != nil {
		return nil, "", nil, errHandOver
	}
	p := cli.StartProgress(s.errOut, s.g.JSON, "searching (the index catches up with new commits)")
	results, err := r.SearchIfCurrent(q)
	p.End()
	if err != nil {
		return nil, "", nil, errHandOver
	}
	after := func() {
		if core, err := front.CorePath(); err == nil {
			cli.StartSearchServer(r, core)
		}
	}
	return results, "", after, nil
}
