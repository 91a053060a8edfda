package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gitmem/git-mem/memory"
)

// The exit code comes from the error's type, never its text.
func TestExitCodeOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"OS EINVAL is an error, not a usage error", &os.PathError{Op: "read", Path: "x", Err: syscall.EINVAL}, exitError},
		{"text that looks like cobra's is not usage", errors.New("unknown flag: requires at least one arg"), exitError},
		{"usage", usagef("-k must be 1 or more"), exitUsage},
		{"bad query", fmt.Errorf("search: %w", memory.ErrBadQuery), exitUsage},
		{"invalid", fmt.Errorf("x: %w", memory.ErrInvalid), exitUsage},
		{"partial", errPartial, exitPartial},
		{"no memory", fmt.Errorf("open: %w", memory.ErrNoMemory), exitNoRepo},
		{"locked", fmt.Errorf("append: %w", memory.ErrLocked), exitLocked},
		{"not found", fmt.Errorf("%w: x", memory.ErrNoSuchExchange), exitError},
	} {
		if got := exitCodeOf(tc.err); got != tc.want {
			t.Errorf("%s: exitCodeOf(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

// Cobra's own usage errors are exit 2 and, with --json, a JSON object,
// wherever --json is on the line.
func TestUsageErrorsJSON(t *testing.T) {
	mem := filepath.Join(t.TempDir(), "mem.git")
	for _, args := range [][]string{
		{"--json", "nosuchcommand"},
		{"nosuchcommand", "--json"},
		{"log", "--json", "--bogus"},
		{"log", "-n", "abc", "--json"},
		{"--json", "show"},
		{"--json", "search", "x", "-k", "0"},
	} {
		var out, errOut bytes.Buffer
		code := Main(append([]string{"--mem-dir", mem}, args...), nil, &out, &errOut)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", args, code, exitUsage, errOut.String())
		}
		var v struct {
			Error string `json:"error"`
			Code  int    `json:"code"`
		}
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Code != exitUsage || v.Error == "" {
			t.Errorf("%q: stdout %q is not {\"error\", \"code\": 2} (%v)", args, out.String(), err)
		}
		if errOut.Len() != 0 {
			t.Errorf("%q: with --json stderr should be empty, got %q", args, errOut.String())
		}
	}
}

func TestUnknownCommandSuggests(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"serach", "x"}, nil, &out, &errOut); code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
	if want := `unknown command "serach" for "git mem" (did you mean "search"?)`; !bytes.Contains(errOut.Bytes(), []byte(want)) {
		t.Errorf("stderr %q lacks %q", errOut.String(), want)
	}
}
