package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/recall"
)

func init() { register(newContextCmd) }

func newContextCmd(e *env) *cobra.Command {
	var budget int
	var mode, hook string
	var warm bool
	var ff filterFlags
	cmd := &cobra.Command{
		Use:   "context [QUERY] [--budget N] [FILTERS] [--hook claude-code]",
		Short: "Print recalled cards for a query, or the current project's recent work, within a token budget",
		Long: "Print a fenced block of cards that fits in --budget BPE tokens (cl100k, fence included):\n" +
			"the best cards for QUERY, or with no query the recent work and most used rooms of the\n" +
			"current project (from --project, else the git remote origin's repo name, else the folder).\n" +
			"Each card names its short commit id: `git mem show <id> --verbatim` gives the exchange.\n" +
			"The block is wrapped in <git-mem-context ...>...</git-mem-context>; git mem never stores it again.\n\n" +
			"--hook claude-code reads a SessionStart hook's JSON on stdin and prints Claude Code's\n" +
			"hookSpecificOutput.additionalContext. It always exits 0 and prints nothing on error\n" +
			"(errors go to <mem-dir>/mem/log/context.log), so it never blocks a session.",
		RunE: func(cmd *cobra.Command, a []string) error {
			if warm {
				return warmCardCache(e)
			}
			if hook != "" {
				runContextHook(e, hook, budget)
				return nil
			}
			if budget < recall.MinBudget || budget > recall.MaxBudget {
				return usagef("--budget %d: give %d..%d tokens (%d is the fence and one card; default %d)", budget, recall.MinBudget, recall.MaxBudget, recall.MinBudget, recall.DefaultBudget)
			}
			f, err := ff.filter()
			if err != nil {
				return err
			}
			req := recall.Request{Query: strings.Join(a, " "), Budget: budget, Mode: mode, Filter: f}
			if strings.TrimSpace(req.Query) != "" {
				q := memory.SearchQuery{Text: req.Query, Mode: mode}
				if err := memory.CheckQuery(q); err != nil {
					return err
				}
			} else if f.Project == "" {
				if cwd, err := os.Getwd(); err == nil {
					req.Project = memory.ProjectFromCwd(cwd)
				}
			}
			m, err := e.open()
			if err != nil {
				return err
			}
			res, err := recall.Recall(e.ctx, m, req)
			if err != nil {
				return err
			}
			if res.Note != "" {
				fmt.Fprintln(e.errOut, "git mem: note: "+res.Note)
			}
			if e.json {
				return e.printJSON(res)
			}
			if res.Text == "" {
				what := "the project " + res.Project
				if req.Query != "" {
					what = "the query"
				} else if res.Project == "" {
					what = "the filters"
				}
				fmt.Fprintf(e.errOut, "git mem: nothing recalled for %s (no matching exchange, or --budget %d is too small)\n", what, budget)
				return nil
			}
			fmt.Fprintln(e.out, res.Text)
			return nil
		},
	}
	cmd.Flags().IntVar(&budget, "budget", recall.DefaultBudget, "at most N BPE tokens (cl100k), fence included; at least 100")
	cmd.Flags().StringVar(&mode, "mode", "", "search mode for QUERY (see git mem search)")
	cmd.Flags().StringVar(&hook, "hook", "", "answer an agent's hook: claude-code (SessionStart JSON on stdin)")
	cmd.Flags().BoolVar(&warm, "warm", false, "only bring the card cache up to date (the hook starts this in the background)")
	_ = cmd.Flags().MarkHidden("warm")
	ff.add(cmd, e)
	return cmd
}

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

// runContextHook answers a SessionStart hook. It never fails the session:
// any error (or panic) is logged to <mem-dir>/mem/log/context.log and
// nothing is printed, so the session starts without recalled context.
func runContextHook(e *env, hook string, budget int) {
	memDir := e.resolveMemDir()
	start := time.Now()
	logf := func(format string, a ...any) { logContext(memDir, start, format, a...) }
	defer func() {
		if r := recover(); r != nil {
			logf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	out, err := contextHookOutput(e, memDir, hook, budget)
	if err != nil {
		logf("%v", err)
		return
	}
	if out != nil {
		if _, err := e.out.Write(out); err != nil {
			logf("write hook output: %v", err)
		}
	}
}

// contextHookOutput builds the hook's stdout; nil means "print nothing"
// (nothing recalled for this project).
func contextHookOutput(e *env, memDir, hook string, budget int) ([]byte, error) {
	if hook != "claude-code" {
		return nil, fmt.Errorf("--hook %q: only claude-code is supported", hook)
	}
	if budget <= 0 || budget > recall.MaxBudget {
		budget = recall.DefaultBudget
	}
	raw, err := readHookInput(e.in, hookDeadline)
	if err != nil {
		return nil, err
	}
	var in claudeSessionStart
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("hook input is not JSON (%.80q): %w", raw, err)
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
	ctx, cancel := context.WithTimeout(e.ctx, hookDeadline)
	defer cancel()
	project := memory.ProjectFromCwd(cwd)
	res, err := recall.Recall(ctx, m, recall.Request{Budget: budget, Project: project})
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
	return recall.ClaudeSessionStart(res.Text)
}

// readHookInput reads the hook's JSON (at most 1 MiB). A stdin that is
// never closed (a hook run by hand, a broken caller) must not hang the
// session: past the timeout the hook gives up.
func readHookInput(r io.Reader, timeout time.Duration) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, 1<<20))
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, fmt.Errorf("read hook input: %w", res.err)
		}
		return res.b, nil
	case <-time.After(timeout):
		return nil, fmt.Errorf("read hook input: stdin not closed after %s (Claude Code passes the hook's JSON on stdin)", timeout)
	}
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

// warmCardCache brings the card cache up to date with main.
func warmCardCache(e *env) error {
	m, err := e.open()
	if err != nil {
		return err
	}
	start := time.Now()
	all, note, err := recall.Entries(e.ctx, m)
	if err != nil {
		return fmt.Errorf("build the card cache: %w", err)
	}
	if note != "" {
		return errors.New(note)
	}
	fmt.Fprintf(e.out, "%s card cache: %d cards in %s\n", time.Now().UTC().Format(time.RFC3339), len(all), time.Since(start).Round(time.Millisecond))
	return nil
}
