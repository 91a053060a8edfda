package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/eval"
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

// usageError marks a bad invocation (exit 2): cobra's flag and argument
// errors and the CLI's own flag checks.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// errPartial ends a run that printed its report and skipped some records
// (exit 3). It prints nothing more: the report said what was skipped.
var errPartial = errors.New("some records were skipped")

// errReported ends a run that printed its (JSON) report of problems: exit
// 1, and nothing more is printed.
var errReported = errors.New("problems reported")

// exitCodeOf decides the exit code from the error's type and class alone,
// never from its text (an OS "invalid argument" is an error, not a usage
// error).
func exitCodeOf(err error) int {
	var u usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &u), errors.Is(err, memory.ErrInvalid), errors.Is(err, eval.ErrNoSet):
		return exitUsage
	case errors.Is(err, errPartial):
		return exitPartial
	case errors.Is(err, memory.ErrNoMemory):
		return exitNoRepo
	case errors.Is(err, memory.ErrLocked):
		return exitLocked
	}
	return exitError
}

// printError is the one place errors reach the user: one line on stderr,
// or {"error", "code"} on stdout with --json.
func printError(stdout, stderr io.Writer, err error, code int, asJSON bool) {
	if errors.Is(err, errPartial) || errors.Is(err, errReported) {
		return
	}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"error": err.Error(), "code": code})
		fmt.Fprintln(stdout, string(b))
		return
	}
	fmt.Fprintln(stderr, "git mem: "+err.Error())
}

// wantsJSON reports whether --json is among the arguments (before "--"): a
// usage error can stop flag parsing before --json is read.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
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
	return usageError{errors.New(msg + ": run `git mem help`")}
}
