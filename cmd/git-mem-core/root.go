package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/gitmem/git-mem/cmd/internal/front"
	"github.com/gitmem/git-mem/memory"
)

// version is set at build time with -ldflags "-X main.version=…"; else the
// build info's module version and VCS revision name it.
var version = ""

// env is what every command shares: streams, global flags, the memory.
type env struct {
	in     io.Reader
	out    io.Writer
	errOut io.Writer
	// Globals: --mem-dir and --json.
	cli.Globals
	ctx context.Context
	// warm is the request a warm search process runs this command for
	// (cmd_searchd.go); nil in a process of its own.
	warm *warmCall
}

// resolveMemDir applies --mem-dir, then GIT_MEM_DIR, then ~/.git-mem.
func (e *env) resolveMemDir() string { return e.MemDirOf() }

// open opens the memory for commands that need one.
func (e *env) open() (*memory.Memory, error) {
	return memory.Open(e.resolveMemDir())
}

// Main runs the CLI and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainWith(args, stdin, stdout, stderr, nil)
}

// mainWith is Main for a warm search process's request (w), nil for a
// process of its own.
func mainWith(args []string, stdin io.Reader, stdout, stderr io.Writer, w *warmCall) int {
	e := &env{in: stdin, out: stdout, errOut: stderr, ctx: context.Background(), warm: w}
	root := newRoot(e)
	if w != nil {
		// A warm search process runs searches, nothing else.
		root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
			if cmd.Name() != "search" || cmd.Parent() != root {
				return errFallback
			}
			return nil
		}
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(e.ctx)
	code := exitCodeOf(err)
	if err != nil {
		printError(stdout, stderr, err, code, e.JSON || wantsJSON(args))
	}
	return code
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "git-mem",
		Short:         "Long-term memory for coding agents, stored in git",
		Long:          "git mem stores every exchange between you and your coding agent as a commit in a dedicated\nmemory repo (default ~/.git-mem) and finds it again with BM25 and vector search, offline.",
		Args:          rootArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
		// Help reads "git mem log", as the user types it.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "git mem"},
	}
	root.SuggestionsMinimumDistance = 2 // "serach" → did you mean "search"?
	cli.AddGlobalFlags(root, &e.Globals)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{Err: err} })
	for _, add := range commands {
		root.AddCommand(add(e))
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if e.JSON {
				return e.printJSON(map[string]string{"version": versionString()})
			}
			fmt.Fprintln(e.out, "git mem "+versionString())
			return nil
		},
	})
	return root
}

// commands is filled by each cmd_*.go file's init, so adding a command
// touches one file.
var commands []func(*env) *cobra.Command

func register(f func(*env) *cobra.Command) { commands = append(commands, f) }

func (e *env) printJSON(v any) error { return cli.PrintJSON(e.out, v) }

// versionString is what `version` prints; the front binary prints the same.
func versionString() string { return front.Version(version) }

// startProgress starts the progress line (cli.StartProgress).
func (e *env) startProgress(what string) *cli.Progress {
	return cli.StartProgress(e.errOut, e.JSON, what)
}
