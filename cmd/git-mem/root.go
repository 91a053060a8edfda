package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/memory"
)

// Exit codes (docs/CONTRACT.md).
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitPartial = 3
	exitNoRepo  = 4
	exitLocked  = 5
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// env is what every command shares: streams, global flags, the memory.
type env struct {
	in       io.Reader
	out      io.Writer
	errOut   io.Writer
	memDir   string
	json     bool
	ctx      context.Context
	exitCode int // set by commands that finish with a non-error, non-zero code (partly done)
}

// resolveMemDir applies --mem-dir, then GIT_MEM_DIR, then ~/.git-mem.
func (e *env) resolveMemDir() string {
	if e.memDir != "" {
		return e.memDir
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

// open opens the memory for commands that need one.
func (e *env) open() (*memory.Memory, error) {
	return memory.Open(e.resolveMemDir())
}

// usageError marks a bad invocation (exit 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// partialError marks a run that stored what it could but skipped records (exit 3).
type partialError struct{ msg string }

func (p partialError) Error() string { return p.msg }

// Main runs the CLI and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{in: stdin, out: stdout, errOut: stderr, ctx: context.Background()}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(e.ctx)
	if err == nil {
		return e.exitCode
	}
	code := exitCodeOf(err)
	msg := err.Error()
	if e.json {
		b, _ := json.Marshal(map[string]any{"error": msg, "code": code})
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintln(stderr, "git mem: "+msg)
	}
	return code
}

func exitCodeOf(err error) int {
	var u usageError
	var p partialError
	switch {
	case errors.As(err, &u):
		return exitUsage
	case errors.As(err, &p):
		return exitPartial
	case errors.Is(err, gitstore.ErrNotFound):
		return exitNoRepo
	case errors.Is(err, gitstore.ErrLocked):
		return exitLocked
	case isCobraUsage(err):
		return exitUsage
	}
	return exitError
}

// isCobraUsage recognises cobra's own flag and argument errors.
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires at most", "requires exactly"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "git-mem",
		Short:         "Long-term memory for coding agents, stored in git",
		Long:          "git mem stores every exchange between you and your coding agent as a commit in a dedicated\nmemory repo (default ~/.git-mem) and finds it again with BM25 and vector search, offline.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		// Help reads "git mem log", as the user types it.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "git mem"},
	}
	root.PersistentFlags().StringVar(&e.memDir, "mem-dir", "", "memory repo (default $GIT_MEM_DIR, then ~/.git-mem)")
	root.PersistentFlags().BoolVar(&e.json, "json", false, "print JSON (errors too)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, add := range commands {
		root.AddCommand(add(e))
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if e.json {
				return e.printJSON(map[string]string{"version": version})
			}
			fmt.Fprintln(e.out, "git mem "+version)
			return nil
		},
	})
	return root
}

// commands is filled by each cmd_*.go file's init, so adding a command
// touches one file.
var commands []func(*env) *cobra.Command

func register(f func(*env) *cobra.Command) { commands = append(commands, f) }

func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// args wraps cobra's argument checks so their errors are usage errors.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usageError{err}
		}
		return nil
	}
}
