package hooks

import (
	"fmt"
	"io"
	"time"
)

// ReadHookInput reads the hook's JSON (at most 1 MiB). A stdin that is
// never closed (a hook run by hand, a broken caller) must not hang the
// session: past the timeout the hook gives up.
func ReadHookInput(r io.Reader, timeout time.Duration) ([]byte, error) {
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
