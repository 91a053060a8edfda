package memory

import (
	"testing"

	"github.com/gitmem/git-mem/hooks"
	"github.com/gitmem/git-mem/memory/queue"
)

// The front binary writes Claude Code jobs through memory/queue without
// importing hooks: its kind must be the one the worker reads.
func TestQueueKindIsTheReadersFormat(t *testing.T) {
	if queue.FormatClaudeCode != hooks.FormatClaudeCode {
		t.Errorf("queue.FormatClaudeCode %q, hooks.FormatClaudeCode %q", queue.FormatClaudeCode, hooks.FormatClaudeCode)
	}
}
