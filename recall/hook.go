package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/gitmem/git-mem/hooks"
	"github.com/gitmem/git-mem/memory"
)

// hookDeadline bounds the hook's work: past it (a cold card cache on a big
// memory) the session starts without recalled context rather than waiting,
// and a detached `git mem context --warm` builds the cache for the next one.
const hookDeadline = 1 * time.Second

// claudeSessionStart is the part of Claude Code's SessionStart input we use.
type claudeSessionStart struct {
	SessionID     string `json:"session_id"`
	Cwd           string `json:"cwd"`
	HookEventName string `json:"hook_event_name"`
	Source        string `json:"source"` // startup | resume | clear | compact
}

// SessionStartHook answers an agent's SessionStart hook (hook: claude-code,
// its JSON on in) with what to print, nil for nothing. It never fails the
// session: any error (or panic) is logged to <mem-dir>/mem/log/context.log
// and nothing is printed, so the session starts without recalled context.
func SessionStartHook(ctx context.Context, memDir, hook string, in io.Reader, budget int) (out []byte) {
	start := time.Now()
	logf := func(format string, a ...any) { logContext(memDir, start, format, a...) }
	defer func() {
		if r := recover(); r != nil {
			logf("panic: %v\n%s", r, debug.Stack())
			out = nil
		}
	}()
	out, err := sessionStartOutput(ctx, memDir, hook, in, budget)
	if err != nil {
		logf("%v", err)
		return nil
	}
	return out
}

// sessionStartOutput builds the hook's stdout; nil means "print nothing"
// (nothing recalled for this project).
func sessionStartOutput(ctx context.Context, memDir, hook string, stdin io.Reader, budget int) ([]byte, error) {
	if hook != "claude-code" {
		return nil, fmt.Errorf("--hook %q: only claude-code is supported", hook)
	}
	if budget <= 0 || budget > MaxBudget {
		budget = DefaultBudget
	}
	raw, err := hooks.ReadHookInput(stdin, hookDeadline)
	if err != nil {
		return nil, err
	}
	var in claudeSessionStart
	if err := json.Unmarshal(raw, &in); err != nil {
		// Only its length: the input may be another event's (a prompt) cut short,
		// and the log is plain text.
		return nil, fmt.Errorf("hook input is not JSON (%d bytes): %w", len(raw), err)
	}
	if in.HookEventName != "" && in.HookEventName != "SessionStart" {
		return nil, fmt.Errorf("hook event %q: git mem context answers SessionStart only", in.HookEventName)
	}
	cwd := in.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("hook input has no cwd: %w", err)
		}
	}
	m, err := memory.Open(memDir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, hookDeadline)
	defer cancel()
	project := memory.ProjectFromCwd(cwd)
	res, err := Recall(ctx, m, Request{Budget: budget, Project: project, NoIndexWork: true})
	if errors.Is(err, context.DeadlineExceeded) {
		if werr := m.StartDetached("context.log", "context", "--warm"); werr != nil {
			return nil, fmt.Errorf("session %s: the card cache is cold and could not be built in the background: %w", in.SessionID, werr)
		}
		return nil, fmt.Errorf("session %s: the card cache is cold: it is being built in the background for the next session", in.SessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s, project %q: %w", in.SessionID, project, err)
	}
	if res.Note != "" {
		logContext(memDir, time.Now(), "note: %s", res.Note)
	}
	if res.Text == "" {
		return nil, nil
	}
	return ClaudeSessionStart(res.Text)
}

// logContext appends one line to <mem-dir>/mem/log/context.log. Without a
// memory repo there is nowhere to log, and nothing to recall: it is quiet.
func logContext(memDir string, start time.Time, format string, a ...any) {
	if st, err := os.Stat(filepath.Join(memDir, "mem")); err != nil || !st.IsDir() {
		return
	}
	dir := filepath.Join(memDir, "mem", "log")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "context.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s context --hook (%s): %s\n", start.UTC().Format(time.RFC3339), time.Since(start).Round(time.Millisecond), fmt.Sprintf(format, a...))
}
