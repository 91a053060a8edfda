package memory

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestImportCorruptSession: an agent's folder holding one good session and
// one corrupt file imports the good one whole and reports the corrupt one
// as file:line (which the CLI prints and exits 3 on); again, nothing new.
func TestImportCorruptSession(t *testing.T) {
	const bad = "}}} not json {{{\n"
	vs := ".config/Code/User/"
	tests := []struct {
		agent   string
		good    map[string]string // HOME-relative path → fixture (under ../hooks/testdata)
		corrupt string            // HOME-relative path of the corrupt file
		added   int               // exchanges of the good session (hooks agentCases)
	}{
		{"gemini", map[string]string{".gemini/tmp/helium-fix/chats/session-2025-12-30T07-44-a1c91f1a.json": "gemini/session-2025-12-30T07-44-a1c91f1a.json"},
			".gemini/tmp/helium-fix/chats/session-2026-01-01T00-00-deadbeef.json", 2},
		{"gemini", map[string]string{".gemini/tmp/csv-tool/chats/session-2026-03-01T10-00-7c1e0d2a.jsonl": "gemini/session-2026-03-01T10-00-7c1e0d2a.jsonl"},
			".gemini/tmp/csv-tool/chats/session-2026-01-01T00-00-deadbeef.jsonl", 3},
		{"qwen-code", map[string]string{".qwen/projects/-p/chats/0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl": "qwen-code/generated/projects/-tmp-git-mem-fixture-qwen-code-project/chats/0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl"},
			".qwen/projects/-p/chats/0b6f3c2a-0000-4f1a-9b8c-7d6e5f4a3b21.jsonl", 3},
		{"cline", map[string]string{vs + "globalStorage/saoudrizwan.claude-dev/tasks/1767080000000/api_conversation_history.json": "cline/1767080000000/api_conversation_history.json"},
			vs + "globalStorage/saoudrizwan.claude-dev/tasks/1767090000000/api_conversation_history.json", 3},
		{"roo-code", map[string]string{vs + "globalStorage/rooveterinaryinc.roo-cline/tasks/0199e0c1-7a2b-7c3d-8e4f-5a6b7c8d9e0f/api_conversation_history.json": "roo-code/0199e0c1-7a2b-7c3d-8e4f-5a6b7c8d9e0f/api_conversation_history.json"},
			vs + "globalStorage/rooveterinaryinc.roo-cline/tasks/0199e0c1-0000-7c3d-8e4f-5a6b7c8d9e0f/api_conversation_history.json", 2},
		{"continue", map[string]string{".continue/sessions/3b0f6c1e-2d4a-4e8b-9c7d-1a2b3c4d5e6f.json": "continue/sessions/3b0f6c1e-2d4a-4e8b-9c7d-1a2b3c4d5e6f.json"},
			".continue/sessions/3b0f6c1e-0000-4e8b-9c7d-1a2b3c4d5e6f.json", 3},
		{"copilot", map[string]string{
			vs + "workspaceStorage/ab12cd/chatSessions/c0ffee00-1234-4abc-9def-0123456789ab.json": "copilot/workspaceStorage/ab12cd/chatSessions/c0ffee00-1234-4abc-9def-0123456789ab.json",
			vs + "workspaceStorage/ab12cd/workspace.json":                                         "copilot/workspaceStorage/ab12cd/workspace.json"},
			vs + "workspaceStorage/ab12cd/chatSessions/c0ffee00-0000-4abc-9def-0123456789ab.json", 3},
		{"copilot", map[string]string{
			vs + "workspaceStorage/ef34gh/chatSessions/5f1e2d3c-4b5a-4c6d-8e7f-90a1b2c3d4e5.jsonl": "copilot/workspaceStorage/ef34gh/chatSessions/5f1e2d3c-4b5a-4c6d-8e7f-90a1b2c3d4e5.jsonl",
			vs + "workspaceStorage/ef34gh/workspace.json":                                          "copilot/workspaceStorage/ef34gh/workspace.json"},
			vs + "workspaceStorage/ef34gh/chatSessions/5f1e2d3c-0000-4c6d-8e7f-90a1b2c3d4e5.jsonl", 4},
		{"copilot-cli", map[string]string{
			".copilot/session-state/5e7a3c1d-8b2f-4d6a-9c0e-1f2a3b4c5d6e/events.jsonl":   "copilot-cli/session-state/5e7a3c1d-8b2f-4d6a-9c0e-1f2a3b4c5d6e/events.jsonl",
			".copilot/session-state/5e7a3c1d-8b2f-4d6a-9c0e-1f2a3b4c5d6e/workspace.yaml": "copilot-cli/session-state/5e7a3c1d-8b2f-4d6a-9c0e-1f2a3b4c5d6e/workspace.yaml"},
			".copilot/session-state/5e7a3c1d-0000-4d6a-9c0e-1f2a3b4c5d6e/events.jsonl", 4},
		{"cursor", map[string]string{".cursor/projects/home-dev-src-notes/agent-transcripts/3f2e1d0c-aaaa-4bbb-8ccc-0123456789ab/3f2e1d0c-aaaa-4bbb-8ccc-0123456789ab.jsonl": "cursor/projects/home-dev-src-notes/agent-transcripts/3f2e1d0c-aaaa-4bbb-8ccc-0123456789ab/3f2e1d0c-aaaa-4bbb-8ccc-0123456789ab.jsonl"},
			".cursor/projects/home-dev-src-notes/agent-transcripts/3f2e1d0c-0000-4bbb-8ccc-0123456789ab/3f2e1d0c-0000-4bbb-8ccc-0123456789ab.jsonl", 3},
	}
	for _, tt := range tests {
		t.Run(tt.agent+"/"+filepath.Ext(tt.corrupt), func(t *testing.T) {
			m := newMemory(t) // sets HOME
			t.Setenv("COPILOT_HOME", "")
			home := os.Getenv("HOME")
			old := time.Now().Add(-time.Hour)
			write := func(rel string, b []byte) { writeAged(t, filepath.Join(home, rel), b, old) }
			for dst, src := range tt.good {
				b, err := os.ReadFile(filepath.Join("..", "hooks", "testdata", src))
				if err != nil {
					t.Fatal(err)
				}
				write(dst, b)
			}
			write(tt.corrupt, []byte(bad))
			ctx := context.Background()
			rep, err := m.Import(ctx, tt.agent, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			where := regexp.MustCompile(`^` + regexp.QuoteMeta(filepath.Join(home, tt.corrupt)) + `:1: `)
			if len(rep.Skipped) != 1 || !where.MatchString(rep.Skipped[0]) {
				t.Errorf("skipped %q, want one problem at %s:1", rep.Skipped, tt.corrupt)
			}
			if rep.Sessions != 2 || rep.Added != tt.added {
				t.Errorf("imported %d sessions, added %d; want 2 sessions, %d added (the good one whole)", rep.Sessions, rep.Added, tt.added)
			}
			if again, _ := m.Import(ctx, tt.agent, "", nil); again.Added != 0 || again.Present != tt.added {
				t.Errorf("again: added %d, present %d; want 0, %d", again.Added, again.Present, tt.added)
			}
		})
	}
}
