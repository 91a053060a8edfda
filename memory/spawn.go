package memory

import (
	"fmt"
	"os"

	"github.com/gitmem/git-mem/memory/queue"
)

// StartDetached runs this binary as `git-mem --mem-dir <memory> ARGS…` in
// its own session (setsid: it outlives the hook that started it and gets
// no terminal signals), output appended to <gitdir>/mem/log/<logName>, not
// waited for. Hooks use it for the worker and the card-cache warm-up: they
// must return at once.
func (m *Memory) StartDetached(logName string, args ...string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("start git-mem %s: %w", args, err)
	}
	// argv[0] stays "git-mem" whatever the binary is called (a test
	// harness dispatches on it).
	return queue.StartDetached(exe, "git-mem", m.Repo.Dir(), m.LogDir(), logName, args...)
}

// QueueHook is what an agent's hook does: queue the job (parseErr, the
// hook input's problem, is logged instead) and start a detached worker.
// Problems go to <gitdir>/mem/log/hook.log; the error returned is for the
// hook to note on stderr, never to fail the agent with.
func (m *Memory) QueueHook(job Job, parseErr error) error {
	logf := m.Logger("hook.log")
	if parseErr != nil {
		logf("error: %v", parseErr)
		return parseErr
	}
	if why := m.Config.Excluded(job.Kind, job.Cwd); why != "" {
		logf("skipped %s session %s: %s", job.Kind, job.SessionID+job.ThreadID, why)
		return nil
	}
	if err := m.Enqueue(job); err != nil {
		logf("error: queue %s: %v", job.Kind, err)
		return err
	}
	if err := m.StartDetached("worker.log", "worker"); err != nil {
		logf("error: start worker: %v", err)
	}
	return nil
}

// Logger appends timestamped lines to <gitdir>/mem/log/<name>; when the log
// cannot be opened, lines are dropped (a hook must not fail over its log).
func (m *Memory) Logger(name string) func(string, ...any) { return queue.Logger(m.LogDir(), name) }
