package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/gitmem/git-mem/eval"
)

// Exit codes (docs/CONTRACT.md; package cli, shared with git-mem-search).
const (
	exitOK      = cli.ExitOK
	exitError   = cli.ExitError
	exitUsage   = cli.ExitUsage
	exitPartial = cli.ExitPartial
	exitNoRepo  = cli.ExitNoRepo
	exitLocked  = cli.ExitLocked
)

// usageError marks a bad invocation (exit 2): cobra's flag and argument
// errors and the CLI's own flag checks.
type usageError = cli.UsageError

var (
	usagef    = cli.Usagef
	args      = cli.Args
	wantsJSON = cli.WantsJSON
)

// errPartial ends a run that printed its report and skipped some records
// (exit 3). It prints nothing more: the report said what was skipped.
var errPartial = errors.New("some records were skipped")

// errReported ends a run that printed its (JSON) report of problems: exit
// 1, and nothing more is printed.
var errReported = errors.New("problems reported")

// exitCodeOf decides the exit code from the error's type and class alone
// (cli.ExitCode, and the classes of git-mem-core's own commands).
func exitCodeOf(err error) int {
	if code, ok := cli.ExitCode(err); ok {
		return code
	}
	switch {
	case errors.Is(err, eval.ErrNoSet):
		return exitUsage
	case errors.Is(err, errPartial):
		return exitPartial
	}
	return exitError
}

// printError prints err as cli.PrintError does, except the ends of a run
// that printed its report.
func printError(stdout, stderr io.Writer, err error, code int, asJSON bool) {
	if errors.Is(err, errPartial) || errors.Is(err, errReported) {
		return
	}
	cli.PrintError(stdout, stderr, err, code, asJSON)
}

// rootArgs refuses an unknown command as a usage error (cobra's own check
// returns an untyped error), with cobra's suggestions.
func rootArgs(cmd *cobra.Command, a []string) error {
	if len(a) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", a[0], "git mem")
	if s := cmd.SuggestionsFor(a[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return usageError{Err: errors.New(msg + ": run `git mem help`")}
}
