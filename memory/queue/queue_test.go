package queue

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWriteKeepsNoText(t *testing.T) {
	dir := t.TempDir()
	j := Job{Kind: "codex", ThreadID: "t1", LastAssistantMessage: "reply with sk-secret", InputMessages: []string{"my token is hunter2"}}
	if err := Write(filepath.Join(dir, "a.json"), j, nil); !errors.Is(err, ErrNeedsRedaction) {
		t.Errorf("Write of prompts with no redactor = %v, want ErrNeedsRedaction", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.json")); !os.IsNotExist(err) {
		t.Errorf("a refused job was written (%v)", err)
	}
	if err := Write(filepath.Join(dir, "b.json"), j, func(string) string { return "[redacted]" }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "b.json"))
	if strings.Contains(string(b), "sk-secret") || strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), `"last_assistant_digest":"`) || !strings.Contains(string(b), "[redacted]") {
		t.Errorf("job file = %s", b)
	}
}

func TestClaudeJob(t *testing.T) {
	j, err := ClaudeJob(strings.NewReader(`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"SessionEnd"}`))
	if want := (Job{Kind: FormatClaudeCode, Transcript: "/t.jsonl", SessionID: "s", Cwd: "/w", Event: "SessionEnd"}); err != nil || !reflect.DeepEqual(j, want) {
		t.Errorf("ClaudeJob = %+v, %v", j, err)
	}
	for _, bad := range []string{"", "{", `{"session_id":"s"}`} {
		if _, err := ClaudeJob(strings.NewReader(bad)); err == nil {
			t.Errorf("ClaudeJob(%q) gave no error", bad)
		}
	}
}
