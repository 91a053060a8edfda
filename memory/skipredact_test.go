package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkippedMessagesRedacted: a skipped record's message quotes the bad
// value ("time", "role", a transcript's record type); a secret there must not
// reach the report (stderr, --json, the worker's log) as it was. The line
// numbers and the reason stay.
func TestSkippedMessagesRedacted(t *testing.T) {
	const secret = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	m := newMemory(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, format, content string
		want                  []string // in the messages, in order
	}{
		{"exchange", "exchange",
			`{"id":"a","session":"s","time":"` + secret + `","turns":[{"role":"user","text":"x"}]}` + "\n" +
				`{"id":"b","session":"s","time":"2026-01-01T00:00:00Z","turns":[{"role":"` + secret + `","text":"x"}]}` + "\n" +
				`{"id":"c","session":"s","time":"2026-01-01T00:00:00Z","turns":[{"role":"user","text":"fine"},{"role":"assistant","text":"ok"}]}` + "\n",
			[]string{`:1: field "time": "[REDACTED:`, `:2: turn 1: unknown role "[REDACTED:`}},
		{"claude-code", "claude-code",
			`{"type":"` + secret + `","sessionId":"s1","uuid":"u0"}` + "\n" +
				`{"type":"user","sessionId":"s1","uuid":"u1","cwd":"/tmp","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}` + "\n" +
				`{"type":"assistant","sessionId":"s1","uuid":"a1","parentUuid":"u1","cwd":"/tmp","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}` + "\n",
			[]string{`:1: unknown record type "[REDACTED:`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".jsonl")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := m.AddFiles(context.Background(), []string{path}, nil, tc.format, AddOptions{NoIndex: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Added != 1 || len(rep.Skipped) != len(tc.want) {
				t.Fatalf("added %d, skipped %q; want 1 added, %d skipped", rep.Added, rep.Skipped, len(tc.want))
			}
			for i, s := range rep.Skipped {
				if strings.Contains(s, secret) || strings.Contains(s, "ghp_") {
					t.Errorf("skipped message holds the secret: %q", s)
				}
				if !strings.Contains(s, tc.want[i]) {
					t.Errorf("skipped message %q lacks %q", s, tc.want[i])
				}
			}
		})
	}
}
