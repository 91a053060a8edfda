// Package hookinput reads what an agent hands its hook: the JSON on stdin
// and the digest of the final reply that a queued job keeps. It imports
// only the standard library, so the small git-mem front binary (which
// serves hook calls without linking the transcript readers, Bleve or
// gitleaks) parses payloads with the same code as package hooks.
package hookinput

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Read reads the hook's JSON (at most 1 MiB). A stdin that is never closed
// (a hook run by hand, a broken caller) must not hang the session: past
// the timeout the hook gives up.
func Read(r io.Reader, timeout time.Duration) ([]byte, error) {
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

// Claude is what Claude Code writes on a hook's stdin.
type Claude struct {
	SessionID            string `json:"session_id"`
	TranscriptPath       string `json:"transcript_path"`
	Cwd                  string `json:"cwd"`
	HookEventName        string `json:"hook_event_name"`
	LastAssistantMessage string `json:"last_assistant_message"`
}

// ParseClaude decodes a hook's stdin (at most 16 MiB).
func ParseClaude(r io.Reader) (Claude, error) {
	var in Claude
	b, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return in, fmt.Errorf("read claude-code hook input: %w", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return in, fmt.Errorf("read claude-code hook input: stdin is empty (Claude Code passes the hook's JSON on stdin)")
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("read claude-code hook input: not JSON: %w", err)
	}
	return in, nil
}

// Digest is the hex SHA-256 of a final reply with its white space
// squashed ("" for an empty reply): what a queued job keeps instead of the
// text, and what the reader compares the transcript's last reply with.
func Digest(s string) string {
	w := strings.Join(strings.Fields(s), " ")
	if w == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(w))
	return hex.EncodeToString(sum[:])
}
