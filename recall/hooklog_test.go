package recall

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/memory"
)

// TestHookLogHoldsNoInput: stdin that is not JSON (here a prompt hook's
// input cut short, holding a token) is logged to mem/log/context.log by its
// length and the parser's reason, never by its text.
func TestHookLogHoldsNoInput(t *testing.T) {
	const secret = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	t.Setenv("HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "mem.git")
	if _, _, err := memory.Init(dir); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		`{"hook_event_name":"UserPromptSubmit","prompt":"deploy with ` + secret,
		secret + "\n",
		`{"session_id": "` + secret + `", oops}`,
	} {
		out := SessionStartHook(context.Background(), dir, "claude-code", strings.NewReader(in), 0)
		if out != nil {
			t.Errorf("%q: printed %q, want nothing", in, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "mem", "log", "context.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if n := strings.Count(log, "hook input is not JSON"); n != 3 {
		t.Errorf("log has %d lines about bad input, want 3:\n%s", n, log)
	}
	if strings.Contains(log, "ghp_") || strings.Contains(log, "deploy with") {
		t.Errorf("the log holds the hook's input:\n%s", log)
	}
}
