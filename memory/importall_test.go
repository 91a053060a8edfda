package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gitmem/git-mem/internal/shared"
)

// TestImportAllAgents: a HOME holding one real session of each agent, in
// each agent's own folder, is found whole by a scan, per agent and project,
// and imported with the same counts. Counts: Claude Code 7acd37a8 has 6
// prompts with replies (hooks TestSharedClaudeCode), Codex 20-12-23 has 2
// user_message events, the Gemini chat 2 user messages; Cline, Roo Code,
// Continue, Copilot Chat (its .json and its .jsonl log), Copilot CLI and
// Cursor's transcript (no project: it names none) as counted in hooks
// agentCases; the Cline SDK session (real: cline/cline's own fixture) has 5
// prompts, project from its manifest's cwd; the Cursor CLI's store.db as counted in hooks TestCursorCLI
// (its workspace is not on this machine: no project); OpenCode's JSON storage
// has user messages msg_001, msg_004 and msg_007, each with a text part,
// the last closed by the session's end (an old file): 3. Those fixtures
// are synthetic (no real public one was found). Qwen Code's three sessions
// (real, generated) have 3, 1 and 1 prompts, all closed by the session's end.
func TestImportAllAgents(t *testing.T) {
	fixtures := filepath.Join(shared.Dir(), "fixtures")
	claude := filepath.Join(fixtures, "claude-code", "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl")
	codex := filepath.Join(fixtures, "codex", "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl")
	for _, p := range []string{claude, codex} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("shared fixture %s not present", p)
		}
	}
	m := newMemory(t) // sets HOME
	// Copilot CLI's sessions are under ~/.copilot only without COPILOT_HOME.
	t.Setenv("COPILOT_HOME", "")
	home := os.Getenv("HOME")
	old := time.Now().Add(-time.Hour)
	place := func(src, dst string) {
		t.Helper()
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeAged(t, filepath.Join(home, dst), b, old)
	}
	place(claude, ".claude/projects/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl")
	place(codex, ".codex/sessions/2025/09/24/"+filepath.Base(codex))
	place("../hooks/testdata/gemini/session-2025-12-30T07-44-a1c91f1a.json", ".gemini/tmp/helium-fix/chats/session-2025-12-30T07-44-a1c91f1a.json")
	if err := os.WriteFile(filepath.Join(home, ".gemini/tmp/helium-fix/.project_root"), []byte("/nonexistent/helium-fix\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	qw := "../hooks/testdata/qwen-code/generated/projects/-tmp-git-mem-fixture-qwen-code-project/chats/"
	for _, id := range []string{"0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21", "7e1d9c4b-2a3f-4e5d-8c6b-1f0a9e8d7c65", "3c9a7f2e-6b1d-4e8a-9f5c-2d4b6a8c0e13"} {
		place(qw+id+".jsonl", ".qwen/projects/-tmp-git-mem-fixture-qwen-code-project/chats/"+id+".jsonl")
	}
	place("../hooks/testdata/cline/1767080000000/api_conversation_history.json", ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1767080000000/api_conversation_history.json")
	cs := "../hooks/testdata/cline/sessions/1784094124598_rruoq/"
	place(cs+"1784094124598_rruoq.messages.json", ".cline/data/sessions/1784094124598_rruoq/1784094124598_rruoq.messages.json")
	place(cs+"1784094124598_rruoq.json", ".cline/data/sessions/1784094124598_rruoq/1784094124598_rruoq.json")
	place("../hooks/testdata/roo-code/0199e0c1-7a2b-7c3d-8e4f-5a6b7c8d9e0f/api_conversation_history.json", ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/0199e0c1-7a2b-7c3d-8e4f-5a6b7c8d9e0f/api_conversation_history.json")
	place("../hooks/testdata/continue/sessions/3b0f6c1e-2d4a-4e8b-9c7d-1a2b3c4d5e6f.json", ".continue/sessions/3b0f6c1e-2d4a-4e8b-9c7d-1a2b3c4d5e6f.json")
	place("../hooks/testdata/copilot/workspaceStorage/ab12cd/chatSessions/c0ffee00-1234-4abc-9def-0123456789ab.json", ".config/Code/User/workspaceStorage/ab12cd/chatSessions/c0ffee00-1234-4abc-9def-0123456789ab.json")
	place("../hooks/testdata/copilot/workspaceStorage/ab12cd/workspace.json", ".config/Code/User/workspaceStorage/ab12cd/workspace.json")
	cl := "../hooks/testdata/copilot/workspaceStorage/ef34gh/"
	place(cl+"chatSessions/5f1e2d3c-4b5a-4c6d-8e7f-90a1b2c3d4e5.jsonl", ".config/Code/User/workspaceStorage/ef34gh/chatSessions/5f1e2d3c-4b5a-4c6d-8e7f-90a1b2c3d4e5.jsonl")
	place(cl+"workspace.json", ".config/Code/User/workspaceStorage/ef34gh/workspace.json")
	cc := "../hooks/testdata/copilot-cli/session-state/5e7a3c1d-8b2f-4d6a-9c0e-1f2a3b4c5d6e/"
	place(cc+"events.jsonl", ".copilot/session-state/5e7a3c1d-8b2f-4d6a-9c0e-1f2a3b4c5d6e/events.jsonl")
	place(cc+"workspace.yaml", ".copilot/session-state/5e7a3c1d-8b2f-4d6a-9c0e-1f2a3b4c5d6e/workspace.yaml")
	ct := "3f2e1d0c-aaaa-4bbb-8ccc-0123456789ab"
	place("../hooks/testdata/cursor/projects/home-dev-src-notes/agent-transcripts/"+ct+"/"+ct+".jsonl", ".cursor/projects/home-dev-src-notes/agent-transcripts/"+ct+"/"+ct+".jsonl")
	writeCursorCLIStore(t, "../hooks/testdata/cursor/chats/f4520d91ce8bf93fd444e6083fe96312/7b9c2e4f-1a3d-4c5e-8f60-718293a4b5c6/store.db.json",
		filepath.Join(home, ".cursor/chats/f4520d91ce8bf93fd444e6083fe96312/7b9c2e4f-1a3d-4c5e-8f60-718293a4b5c6/store.db"), old)
	ocFiles, _ := filepath.Glob("../hooks/testdata/opencode/storage/*/*/*.json")
	for _, f := range ocFiles {
		rel, _ := filepath.Rel("../hooks/testdata/opencode/storage", f)
		place(f, ".local/share/opencode/storage/"+rel)
	}
	ctx := context.Background()
	scan, err := ScanAgents(ctx, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Found{
		{Agent: "claude-code", Project: "JSSoundRecorder", Sessions: 1, Exchanges: 6},
		{Agent: "cline", Project: "blog-engine", Sessions: 1, Exchanges: 3},
		{Agent: "cline", Project: "cline", Sessions: 1, Exchanges: 5},
		{Agent: "codex", Project: "spectora-labs-monorepo-v2", Sessions: 1, Exchanges: 2},
		{Agent: "continue", Project: "http-client", Sessions: 1, Exchanges: 3},
		{Agent: "copilot", Project: "calendar", Sessions: 1, Exchanges: 3},
		{Agent: "copilot", Project: "todo-api", Sessions: 1, Exchanges: 4},
		{Agent: "copilot-cli", Project: "ledger-api", Sessions: 1, Exchanges: 4},
		{Agent: "cursor", Project: "", Sessions: 2, Exchanges: 6},
		{Agent: "gemini", Project: "helium-fix", Sessions: 1, Exchanges: 2},
		{Agent: "opencode", Project: "todo-api", Sessions: 1, Exchanges: 3},
		{Agent: "qwen-code", Project: "project", Sessions: 3, Exchanges: 5},
		{Agent: "roo-code", Project: "stats-cli", Sessions: 1, Exchanges: 2},
	}
	if !reflect.DeepEqual(scan.Found, want) || len(scan.Skipped) != 0 || scan.HeldBack != 0 {
		t.Fatalf("scan found %+v skipped %v held back %d\nwant %+v", scan.Found, scan.Skipped, scan.HeldBack, want)
	}
	added := 0
	for _, agent := range scan.Agents() {
		rep, err := m.Import(ctx, agent, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		counted := 0
		for _, f := range want {
			if f.Agent == agent {
				counted += f.Exchanges
			}
		}
		if rep.Added != counted {
			t.Errorf("%s: imported %d, scan counted %d", agent, rep.Added, counted)
		}
		added += rep.Added
	}
	if added != 48 {
		t.Errorf("added %d, want 48", added)
	}
	// Again: nothing new.
	for _, agent := range scan.Agents() {
		if rep, _ := m.Import(ctx, agent, "", nil); rep.Added != 0 {
			t.Errorf("%s: second import added %d", agent, rep.Added)
		}
	}
}

// TestImportAllAgentsGenerated is TestImportAllAgents over the sessions the
// agents wrote themselves (generated by the agent against a scripted local
// model, or copied from public repositories; see each PROVENANCE.json), one
// folder of each where the fixtures have one: the counts per agent are the
// ones each reader's own test checks by hand (hooks/agents_test.go and
// the generated_*_test.go cases).
func TestImportAllAgentsGenerated(t *testing.T) {
	m := newMemory(t)
	t.Setenv("COPILOT_HOME", "")
	home := os.Getenv("HOME")
	old := time.Now().Add(-time.Hour)
	place := func(src, dst string) {
		t.Helper()
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeAged(t, filepath.Join(home, dst), b, old)
	}
	tree := func(src, dst string) {
		t.Helper()
		err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == "PROVENANCE.json" {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			place(p, filepath.Join(dst, rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	td := "../hooks/testdata/"
	tree(td+"cline/generated/1796285010444", ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1796285010444")
	tree(td+"roo-code/generated/019ae1c0-0001-7000-8000-000000000001", ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/019ae1c0-0001-7000-8000-000000000001")
	tree(td+"continue/real/sessions", ".continue/sessions")
	place(td+"copilot/real/gitai01/chatSessions/331fed7f-cfd6-409c-8502-06a56322b636.json", ".config/Code/User/workspaceStorage/gitai01/chatSessions/331fed7f-cfd6-409c-8502-06a56322b636.json")
	tree(td+"copilot-cli/generated/session-state/7c0f1e2d-3b4a-4c5d-8e6f-0a1b2c3d4e5f", ".copilot/session-state/7c0f1e2d-3b4a-4c5d-8e6f-0a1b2c3d4e5f")
	tree(td+"opencode/generated/1.1.65/storage", ".local/share/opencode/storage")
	tree(td+"gemini/generated/tmp/project", ".gemini/tmp/project")
	ctx := context.Background()
	scan, err := ScanAgents(ctx, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	// The counts of each reader's own test (hooks): cline generated_cline
	// (tasks[1]) 1; continue agents_test (the real IDE session) 2; copilot
	// agents_test (real gitai01 .json) 3; copilot-cli generated_copilotcli
	// 4; gemini generated_gemini 4 + 2 + 2 over three sessions; opencode
	// generated_opencode (1.1.65's storage) 3 + 1; roo-code generated_roo
	// (task 1) 2.
	want := []Found{
		{Agent: "cline", Project: "project", Sessions: 1, Exchanges: 1},
		{Agent: "continue", Project: "workspace", Sessions: 1, Exchanges: 2},
		{Agent: "copilot", Project: "", Sessions: 1, Exchanges: 3},
		{Agent: "copilot-cli", Project: "project", Sessions: 1, Exchanges: 4},
		{Agent: "gemini", Project: "project", Sessions: 3, Exchanges: 8},
		{Agent: "opencode", Project: "project", Sessions: 2, Exchanges: 4},
		{Agent: "roo-code", Project: "project", Sessions: 1, Exchanges: 2},
	}
	if !reflect.DeepEqual(scan.Found, want) || len(scan.Skipped) != 0 || scan.HeldBack != 0 {
		t.Fatalf("scan found %+v skipped %v held back %d\nwant %+v", scan.Found, scan.Skipped, scan.HeldBack, want)
	}
	for _, agent := range scan.Agents() {
		rep, err := m.Import(ctx, agent, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		counted := 0
		for _, f := range want {
			if f.Agent == agent {
				counted += f.Exchanges
			}
		}
		if rep.Added != counted {
			t.Errorf("%s: imported %d, want %d", agent, rep.Added, counted)
		}
		if again, _ := m.Import(ctx, agent, "", nil); again.Added != 0 {
			t.Errorf("%s: second import added %d", agent, again.Added)
		}
	}
}

// writeAged writes b to path (making its folders) with mtime: the import
// tests' agent files, old enough that their last exchange counts as closed.
func writeAged(t *testing.T, path string, b []byte, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// writeCursorCLIStore builds a Cursor CLI store.db from the hooks fixture's
// rows (as hooks writeCursorCLIDB does): message blobs keyed by their
// SHA-256, a root linking them (0x0A 0x20 + id), meta 0 as hex JSON.
func writeCursorCLIStore(t *testing.T, fixture, path string, mtime time.Time) {
	t.Helper()
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Meta     map[string]any    `json:"meta"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)`, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	put := func(data []byte) []byte {
		sum := sha256.Sum256(data)
		if _, err := db.Exec(`INSERT OR IGNORE INTO blobs VALUES (?, ?)`, hex.EncodeToString(sum[:]), data); err != nil {
			t.Fatal(err)
		}
		return sum[:]
	}
	var root []byte
	for _, m := range f.Messages {
		var c bytes.Buffer
		if err := json.Compact(&c, m); err != nil {
			t.Fatal(err)
		}
		root = append(append(root, 0x0A, 0x20), put(c.Bytes())...)
	}
	f.Meta["latestRootBlobId"] = hex.EncodeToString(put(root))
	mj, _ := json.Marshal(f.Meta)
	if _, err := db.Exec(`INSERT INTO meta VALUES ('0', ?)`, hex.EncodeToString(mj)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestImportCopilotCLIHome: Copilot CLI keeps its sessions in
// $COPILOT_HOME/session-state when COPILOT_HOME is set, else in
// ~/.copilot/session-state. A scan and `import copilot-cli` read the one
// folder Copilot CLI uses: with COPILOT_HOME set, a session left under
// ~/.copilot (another profile, or a copy) is not imported.
func TestImportCopilotCLIHome(t *testing.T) {
	const (
		ledger = "5e7a3c1d-8b2f-4d6a-9c0e-1f2a3b4c5d6e" // project ledger-api, 4 exchanges
		gen    = "7c0f1e2d-3b4a-4c5d-8e6f-0a1b2c3d4e5f" // generated by Copilot CLI 1.0.102: project "project", 4
	)
	src := map[string]string{
		ledger: "../hooks/testdata/copilot-cli/session-state/" + ledger + "/",
		gen:    "../hooks/testdata/copilot-cli/generated/session-state/" + gen + "/",
	}
	tests := []struct {
		name        string
		copilotHome bool   // COPILOT_HOME set to a folder of its own
		inHome      string // the session under ~/.copilot ("" none)
		inCopilot   string // the session under $COPILOT_HOME ("" none)
		want        []Found
	}{
		{name: "unset: ~/.copilot", inHome: ledger,
			want: []Found{{Agent: "copilot-cli", Project: "ledger-api", Sessions: 1, Exchanges: 4}}},
		{name: "set: its folder, not ~/.copilot", copilotHome: true, inHome: ledger, inCopilot: gen,
			want: []Found{{Agent: "copilot-cli", Project: "project", Sessions: 1, Exchanges: 4}}},
		{name: "set, holding none: nothing, not ~/.copilot", copilotHome: true, inHome: ledger, want: []Found{}},
	}
	old := time.Now().Add(-time.Hour)
	place := func(t *testing.T, session, dir string) {
		t.Helper()
		for _, f := range []string{"events.jsonl", "workspace.yaml"} {
			b, err := os.ReadFile(src[session] + f)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, "session-state", session, f)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(dst, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemory(t) // sets HOME
			home := os.Getenv("HOME")
			t.Setenv("COPILOT_HOME", "")
			ch := filepath.Join(home, ".copilot")
			if tc.copilotHome {
				ch = filepath.Join(t.TempDir(), "copilot-home")
				if err := os.MkdirAll(ch, 0o755); err != nil {
					t.Fatal(err)
				}
				t.Setenv("COPILOT_HOME", ch)
			}
			if tc.inHome != "" {
				place(t, tc.inHome, filepath.Join(home, ".copilot"))
			}
			if tc.inCopilot != "" {
				place(t, tc.inCopilot, ch)
			}
			ctx := context.Background()
			scan, err := ScanAgents(ctx, []string{"copilot-cli"}, "")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(scan.Found, tc.want) || len(scan.Skipped) != 0 {
				t.Fatalf("scan found %+v skipped %v, want %+v", scan.Found, scan.Skipped, tc.want)
			}
			// A scan of every agent finds the same (and nothing else here).
			if all, err := ScanAgents(ctx, nil, ""); err != nil || !reflect.DeepEqual(all.Found, tc.want) {
				t.Fatalf("scan of every agent found %+v, %v; want %+v", all.Found, err, tc.want)
			}
			rep, err := m.Import(ctx, "copilot-cli", "", nil)
			sessions := 1
			if len(tc.want) == 0 {
				sessions = 0 // the folder Copilot CLI uses has no session-state yet
			}
			want := 0
			for _, f := range tc.want {
				want += f.Exchanges
			}
			if err != nil || rep.Added != want || rep.Sessions != sessions {
				t.Fatalf("import: %+v, %v; want %d session(s), %d added", rep, err, sessions, want)
			}
			es, err := m.Entries()
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != want {
				t.Errorf("%d entries stored, want %d", len(es), want)
			}
			for _, e := range es {
				if e.Project != tc.want[0].Project {
					t.Errorf("stored %s of project %q, want only %q", e.Exchange, e.Project, tc.want[0].Project)
				}
			}
		})
	}
}
