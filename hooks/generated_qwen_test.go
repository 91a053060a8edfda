package hooks

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// Qwen Code's fixtures are real: written by Qwen Code 0.24.4 itself
// against a scripted local model (scripts/agent-fixtures/qwen-code/run.sh).
const qwenChats = "testdata/qwen-code/generated/projects/-tmp-git-mem-fixture-qwen-code-project/chats/"

func init() {
	agentCases = append(agentCases,
		agentCase{
			// Session A, 30 records: type user (no subtype) at lines 1, 14
			// and 22 (3 prompts, the later two from resumed runs);
			// functionCall parts at 4 (read_file), 8 (edit), 17
			// (run_shell_command) and 25 (write_file) = 4; edit and
			// write_file name greet.js and README.md. The last exchange
			// waits for the session's end.
			format: FormatQwenCode, file: qwenChats + "0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl",
			exchanges: 3, open: 2,
			prompts:   []string{"greet.js ignores the name it is given: fix it.", "Run it with Ada to check.", "Add a README that says how to run it."},
			toolCalls: 4,
			files:     []string{"/tmp/git-mem-fixture/qwen-code/project/greet.js", "/tmp/git-mem-fixture/qwen-code/project/README.md"},
		},
		agentCase{
			// Session B, 12 records: one user record (line 1); functionCall
			// parts at 4 (read_file of a missing NOTES.md, status error at
			// 6) and 8 (run_shell_command) = 2; no file modified.
			format: FormatQwenCode, file: qwenChats + "7e1d9c4b-2a3f-4e5d-8c6b-1f0a9e8d7c65.jsonl",
			exchanges: 1, open: 0,
			prompts:   []string{"What does greet.js print with no name?"},
			toolCalls: 2,
		},
		agentCase{
			// Session C, the interactive UI, 9 records: one user record
			// (line 1), a file_history_snapshot (3) the headless runs do
			// not write, one functionCall (5, read_file) = 1; no file
			// modified. /quit is not recorded.
			format: FormatQwenCode, file: qwenChats + "3c9a7f2e-6b1d-4e8a-9f5c-2d4b6a8c0e13.jsonl",
			exchanges: 1, open: 0,
			prompts:   []string{"What does the README say?"},
			toolCalls: 1,
		},
	)
}

// TestQwenCodeTurns: what each record of the real files becomes.
func TestQwenCodeTurns(t *testing.T) {
	res, err := ReadQwenCode(qwenChats+"7e1d9c4b-2a3f-4e5d-8c6b-1f0a9e8d7c65.jsonl", Options{SessionEnded: true})
	if err != nil || len(res.Exchanges) != 1 {
		t.Fatalf("%v %v", res.Exchanges, err)
	}
	ex := res.Exchanges[0]
	// The id is the session's and the prompt record's (line 1) uuid: a
	// rerun of the script gives other uuids.
	b, err := os.ReadFile(qwenChats + "7e1d9c4b-2a3f-4e5d-8c6b-1f0a9e8d7c65.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		UUID string `json:"uuid"`
	}
	first1, _, _ := strings.Cut(string(b), "\n")
	if err := json.Unmarshal([]byte(first1), &first); err != nil || first.UUID == "" {
		t.Fatalf("line 1: %v", err)
	}
	if ex.ID != "7e1d9c4b-2a3f-4e5d-8c6b-1f0a9e8d7c65/"+first.UUID || ex.Agent != AgentQwenCode || ex.Project != "project" || ex.Time == "" {
		t.Errorf("exchange %s agent %s project %q time %q", ex.ID, ex.Agent, ex.Project, ex.Time)
	}
	if res.Cwd != "/tmp/git-mem-fixture/qwen-code/project" {
		t.Errorf("cwd %q", res.Cwd)
	}
	var got []string
	for _, tr := range ex.Turns {
		s := tr.Role
		if tr.Extra["thinking"] == true {
			s += "(thinking)"
		}
		if tr.Extra["is_error"] == true {
			s += "(error)"
		}
		if tr.Name != "" {
			s += ":" + tr.Name
		}
		got = append(got, s)
	}
	// Line 4: thought, text, call; 6: its error; 8: text, call; 10: its
	// output; 12: thought, text.
	want := "user assistant(thinking) assistant tool(error):read_file assistant tool:run_shell_command assistant(thinking) assistant"
	if strings.Join(got, " ") != want {
		t.Errorf("turns %s\nwant  %s", strings.Join(got, " "), want)
	}
	for _, tr := range ex.Turns {
		if tr.Name == "read_file" && !strings.Contains(tr.Text, "File not found") {
			t.Errorf("read_file result %q", tr.Text)
		}
		if tr.Name == "run_shell_command" && !strings.Contains(tr.Text, "Hello, undefined!") {
			t.Errorf("shell result %q", tr.Text)
		}
	}
	if fr := ex.Turns[len(ex.Turns)-1].Text; !strings.HasPrefix(fr, "With no name it prints") {
		t.Errorf("final reply %q", fr)
	}
}

// TestQwenCodeStopHook: the Stop hook's real payload (last_assistant_message)
// closes the turn it reports, with the session still running.
func TestQwenCodeStopHook(t *testing.T) {
	b, err := os.ReadFile("testdata/qwen-code/generated/stop-hook.json")
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		TranscriptPath       string `json:"transcript_path"`
		HookEventName        string `json:"hook_event_name"`
		LastAssistantMessage string `json:"last_assistant_message"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	if in.HookEventName != "Stop" || filepath.Base(in.TranscriptPath) != "0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl" {
		t.Fatalf("payload %+v", in)
	}
	p := qwenChats + filepath.Base(in.TranscriptPath)
	res, err := ReadQwenCode(p, Options{LastAssistantMessage: in.LastAssistantMessage})
	if err != nil || len(res.Exchanges) != 3 {
		t.Fatalf("with the Stop hook's reply: %d exchanges, %v; want 3", len(res.Exchanges), err)
	}
	if res, _ := ReadQwenCode(p, Options{LastAssistantMessage: "something else"}); len(res.Exchanges) != 2 {
		t.Errorf("another reply closes the last turn: %d exchanges", len(res.Exchanges))
	}
}

// TestQwenCodeSessionEnd: the SessionEnd payload of the interactive
// session (/quit) names its transcript; the session's end closes its one
// exchange, which a Stop-less read leaves open.
func TestQwenCodeSessionEnd(t *testing.T) {
	f, err := os.Open("testdata/qwen-code/generated/session-end-hook.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := ParseQwenHook(f, time.Second)
	if err != nil || in.HookEventName != "SessionEnd" || in.LastAssistantMessage != "" {
		t.Fatalf("%+v %v", in, err)
	}
	p := qwenChats + filepath.Base(in.TranscriptPath)
	if open, err := ReadQwenCode(p, Options{Cwd: in.Cwd}); err != nil || len(open.Exchanges) != 0 {
		t.Fatalf("before the end: %d exchanges, %v", len(open.Exchanges), err)
	}
	res, err := ReadQwenCode(p, Options{SessionEnded: true, Cwd: in.Cwd})
	if err != nil || len(res.Exchanges) != 1 || res.Exchanges[0].Session != in.SessionID {
		t.Fatalf("after SessionEnd: %v, %v", res.Exchanges, err)
	}
}

// TestQwenCodeThread: a rewind re-roots the thread, and the records it
// left behind are not read; fragments of one message join; sidecars and
// other folders are not sessions.
func TestQwenCodeThread(t *testing.T) {
	src, err := os.ReadFile(qwenChats + "0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(src)), "\n")
	var recs []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m)
	}
	// Rewind to the second prompt (line 14): as Qwen Code does, a rewind
	// record hangs off the record before it (line 13), and a new prompt
	// follows the rewind.
	enc := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
	rewind := map[string]any{"uuid": "rw-1", "parentUuid": recs[12]["uuid"], "sessionId": recs[0]["sessionId"], "timestamp": "2026-12-03T08:00:00.000Z",
		"type": "system", "subtype": "rewind", "cwd": recs[0]["cwd"], "version": "0.24.4", "systemPayload": map[string]any{"truncatedCount": 2}}
	prompt := map[string]any{"uuid": "new-1", "parentUuid": "rw-1", "sessionId": recs[0]["sessionId"], "timestamp": "2026-12-03T08:00:01.000Z",
		"type": "user", "cwd": recs[0]["cwd"], "version": "0.24.4", "message": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Say hi instead."}}}}
	reply := map[string]any{"uuid": "new-2", "parentUuid": "new-1", "sessionId": recs[0]["sessionId"], "timestamp": "2026-12-03T08:00:02.000Z",
		"type": "assistant", "cwd": recs[0]["cwd"], "version": "0.24.4", "message": map[string]any{"role": "model", "parts": []any{map[string]any{"text": "Hi"}}}}
	// The same message again (a fragment): its parts are appended.
	more := map[string]any{"uuid": "new-2", "parentUuid": "new-1", "sessionId": recs[0]["sessionId"], "timestamp": "2026-12-03T08:00:02.000Z",
		"type": "assistant", "cwd": recs[0]["cwd"], "version": "0.24.4", "message": map[string]any{"role": "model", "parts": []any{map[string]any{"text": "there."}}}}
	// An artifact record is never the leaf.
	artifact := map[string]any{"uuid": "art-1", "parentUuid": "x", "sessionId": recs[0]["sessionId"], "timestamp": "2026-12-03T08:00:03.000Z",
		"type": "system", "subtype": "session_artifact_event", "cwd": recs[0]["cwd"], "version": "0.24.4"}
	// Typed while the agent worked: part of its turn; a scheduled (cron)
	// prompt: an exchange of its own.
	mid := map[string]any{"uuid": "new-3", "parentUuid": "new-2", "sessionId": recs[0]["sessionId"], "timestamp": "2026-12-03T08:00:04.000Z",
		"type": "user", "subtype": "mid_turn_user_message", "cwd": recs[0]["cwd"], "version": "0.24.4", "message": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "and wave"}}}}
	cron := map[string]any{"uuid": "new-4", "parentUuid": "new-3", "sessionId": recs[0]["sessionId"], "timestamp": "2026-12-03T08:00:05.000Z",
		"type": "user", "subtype": "cron", "cwd": recs[0]["cwd"], "version": "0.24.4", "message": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Check the build."}}}}
	cronReply := map[string]any{"uuid": "new-5", "parentUuid": "new-4", "sessionId": recs[0]["sessionId"], "timestamp": "2026-12-03T08:00:06.000Z",
		"type": "assistant", "cwd": recs[0]["cwd"], "version": "0.24.4", "message": map[string]any{"role": "model", "parts": []any{map[string]any{"text": "It builds."}}}}
	data := strings.Join(append(lines, enc(rewind), enc(prompt), enc(reply), enc(more), enc(mid), enc(artifact), enc(cron), enc(cronReply)), "\n") + "\n"
	dir := filepath.Join(t.TempDir(), "projects", "-p", "chats")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadQwenCode(p, Options{SessionEnded: true})
	if err != nil || len(res.Problems) != 0 {
		t.Fatal(err, res.Problems)
	}
	if got := prompts(res.Exchanges); len(got) != 3 || got[0] != "greet.js ignores the name it is given: fix it." || !strings.HasPrefix(got[1], "Say hi instead.") || got[2] != "Check the build." {
		t.Fatalf("prompts %q", got)
	}
	last := res.Exchanges[1].Turns
	if len(last) != 4 || last[1].Text != "Hi" || last[2].Text != "there." || last[1].Role != exchange.RoleAssistant || last[3].Role != exchange.RoleUser || last[3].Text != "and wave" {
		t.Errorf("rewound exchange turns %+v", last)
	}
	if cr := res.Exchanges[2].Turns; len(cr) != 2 || cr[1].Text != "It builds." {
		t.Errorf("cron exchange turns %+v", cr)
	}
	// Which files are sessions.
	for name, want := range map[string]bool{
		"chats/0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl":         true,
		"chats/archive/0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl": true,
		"chats/0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.ledger.jsonl":  false,
		"subagents/0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl":     false,
		"chats/notes.jsonl": false,
	} {
		p := filepath.Join("/h/.qwen/projects/-p", name)
		if got := isQwenSession(p, nameEntry(filepath.Base(p))); got != want {
			t.Errorf("isQwenSession(%s) = %v", name, got)
		}
	}
}

// nameEntry is a regular file's DirEntry, by name only.
type nameEntry string

func (n nameEntry) Name() string               { return string(n) }
func (n nameEntry) IsDir() bool                { return false }
func (n nameEntry) Type() fs.FileMode          { return 0 }
func (n nameEntry) Info() (fs.FileInfo, error) { return nil, fs.ErrNotExist }

func FuzzQwenCode(f *testing.F) {
	fuzzFile(f, []string{qwenChats + "*.jsonl"}, []string{"projects", "-fuzz", "chats"}, "0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21.jsonl", ReadQwenCode)
}
