// Package cli is what git-mem-core and git-mem-search share: the search
// command (its flags, checks and printing), the global flags, the errors
// and exit codes, the progress line and the start of the warm search
// process. It links cobra but not cobra/doc, and memory/reader but not
// memory, so that git-mem-search starts fast (docs/CONTRACT.md, "Three
// binaries").
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory/reader"
)

// Exit codes (docs/CONTRACT.md).
const (
	ExitOK      = 0
	ExitError   = 1
	ExitUsage   = 2
	ExitPartial = 3
	ExitNoRepo  = 4
	ExitLocked  = 5
)

// UsageError marks a bad invocation (exit 2): cobra's flag and argument
// errors and the CLI's own flag checks.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usagef is a UsageError with a message.
func Usagef(format string, a ...any) error { return UsageError{fmt.Errorf(format, a...)} }

// ExitCode decides the exit code from the error's type and class alone,
// never from its text (an OS "invalid argument" is an error, not a usage
// error); ok is false for an error of no class here (exit 1, unless the
// caller knows it).
func ExitCode(err error) (code int, ok bool) {
	var u UsageError
	switch {
	case err == nil:
		return ExitOK, true
	case errors.As(err, &u), errors.Is(err, reader.ErrInvalid):
		return ExitUsage, true
	case errors.Is(err, reader.ErrNoMemory):
		return ExitNoRepo, true
	case errors.Is(err, reader.ErrLocked):
		return ExitLocked, true
	}
	return ExitError, false
}

// PrintError is the one place errors reach the user: one line on stderr,
// or {"error", "code"} on stdout with --json.
func PrintError(stdout, stderr io.Writer, err error, code int, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(map[string]any{"error": err.Error(), "code": code})
		fmt.Fprintln(stdout, string(b))
		return
	}
	fmt.Fprintln(stderr, "git mem: "+err.Error())
}

// WantsJSON reports whether --json is among the arguments (before "--"): a
// usage error can stop flag parsing before --json is read.
func WantsJSON(args []string) bool {
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

// Args wraps cobra's argument checks so their errors are usage errors.
func Args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return UsageError{err}
		}
		return nil
	}
}
