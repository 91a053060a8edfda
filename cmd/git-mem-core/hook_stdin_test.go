package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A SessionEnd hook whose stdin is never closed gives up after its
// timeout instead of hanging the agent's session, and still exits 0.
func TestHookStdinNeverClosedReturns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem.git")
	if code := Main([]string{"--mem-dir", dir, "init"}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
		t.Fatalf("init: %d", code)
	}
	r, w := io.Pipe()
	defer w.Close()
	done := make(chan int, 1)
	var errOut bytes.Buffer
	go func() { done <- Main([]string{"--mem-dir", dir, "hook", "claude-code"}, r, io.Discard, &errOut) }()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		if !strings.Contains(errOut.String(), "stdin not closed") {
			t.Fatalf("stderr %q", errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the hook hung on an open stdin")
	}
}
