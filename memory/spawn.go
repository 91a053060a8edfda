package memory

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
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
	if err := os.MkdirAll(m.LogDir(), 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(m.LogDir(), logName), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	// argv[0] stays "git-mem" whatever the binary is called (a test
	// harness dispatches on it).
	cmd := &exec.Cmd{Path: exe, Args: append([]string{"git-mem", "--mem-dir", m.Repo.Dir()}, args...)}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s %v: %w", exe, args, err)
	}
	return cmd.Process.Release()
}
