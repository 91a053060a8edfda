package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/hooks"
)

// writeChatDB writes a Cursor global state.vscdb under HOME holding one
// chat: a prompt and, unless lagging, the assistant's reply.
func writeChatDB(t *testing.T, composer string, lagging bool) {
	t.Helper()
	dir := filepath.Join(os.Getenv("HOME"), ".config", "Cursor", "User", "globalStorage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "state.vscdb")
	os.Remove(p)
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bubbles := []map[string]any{{"bubbleId": "b1", "type": 1, "text": "rename the retry flag to --max-retries"}}
	if !lagging {
		bubbles = append(bubbles, map[string]any{"bubbleId": "b2", "type": 2, "text": "Renamed the flag to --max-retries in cmd/root.go."})
	}
	now := time.Now().UnixMilli()
	v, _ := json.Marshal(map[string]any{"composerId": composer, "createdAt": now - 60000, "lastUpdatedAt": now, "conversation": bubbles})
	for _, q := range []string{`CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO cursorDiskKV VALUES (?, ?)`, "composerData:"+composer, v); err != nil {
		t.Fatal(err)
	}
}

// TestCursorHookJob: a stop for an editor chat is stored from Cursor's
// database, by its bubble ids, once the database shows the reply the
// transcript has; while the database lags behind the hook, nothing is
// frozen half-way. A chat the database does not hold comes from the
// transcript.
func TestCursorHookJob(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	const conv = "7b6a5c4d-1111-4222-8333-444455556666"
	transcript := filepath.Join(t.TempDir(), conv+".jsonl")
	tr := `{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nrename the retry flag to --max-retries\n</user_query>"}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"Renamed the flag to --max-retries in cmd/root.go."}]}}
`
	if err := os.WriteFile(transcript, []byte(tr), 0o644); err != nil {
		t.Fatal(err)
	}
	job, err := CursorHookJob(jsonReader(t, map[string]any{"conversation_id": conv, "hook_event_name": "stop", "status": "completed", "workspace_roots": []string{"/nonexistent/cli-tool"}, "transcript_path": transcript}))
	if err != nil || job.Event != "stop" || job.Cwd != "/nonexistent/cli-tool" {
		t.Fatalf("job %+v, %v", job, err)
	}
	writeChatDB(t, conv, true)
	if rep, err := m.runCursorJob(ctx, job); err != nil || rep.Added != 0 {
		t.Fatalf("database behind the hook: added %d, %v; want 0", rep.Added, err)
	}
	writeChatDB(t, conv, false)
	rep, err := m.runCursorJob(ctx, job)
	if err != nil || rep.Added != 1 || rep.Commits[0].Exchange != "cursor:"+conv+"/b1" {
		t.Fatalf("added %+v, %v; want the exchange cursor:%s/b1", rep, err, conv)
	}
	// An aborted turn stays open.
	aborted, _ := CursorHookJob(jsonReader(t, map[string]any{"conversation_id": "other", "status": "aborted", "transcript_path": transcript}))
	if aborted.Event != "stop:aborted" {
		t.Fatalf("event %q", aborted.Event)
	}
	// Not in the database (Cursor's CLI): the transcript, closed by the stop.
	cli, _ := CursorHookJob(jsonReader(t, map[string]any{"conversation_id": conv + "x", "status": "completed", "transcript_path": transcript}))
	if rep, err := m.runCursorJob(ctx, cli); err != nil || rep.Added != 1 {
		t.Fatalf("transcript: added %+v, %v", rep, err)
	}
	if rep, err := m.runCursorJob(ctx, aborted); err != nil || rep.Added != 0 {
		t.Fatalf("aborted: added %+v, %v; want 0", rep, err)
	}
	if _, err := CursorHookJob(jsonReader(t, map[string]any{"status": "completed"})); err == nil {
		t.Error("a stop without conversation_id is an error")
	}
	if _, err := hooks.ParseOpenCodeHook(`{"cwd":"/x"}`); err == nil {
		t.Error("an opencode hook without session_id is an error")
	}
}

func jsonReader(t *testing.T, v any) *os.File {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), fmt.Sprintf("in-%d.json", time.Now().UnixNano()))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestCursorCLIHookJob: a stop for a chat of Cursor's CLI is stored from
// its store.db (tool results and all), its last exchange closed when the
// transcript the hook names ends with the same reply.
func TestCursorCLIHookJob(t *testing.T) {
	m := newMemory(t) // sets HOME
	ctx := context.Background()
	home := os.Getenv("HOME")
	const conv = "7b9c2e4f-1a3d-4c5e-8f60-718293a4b5c6"
	writeCursorCLIStore(t, "../hooks/testdata/cursor/chats/f4520d91ce8bf93fd444e6083fe96312/"+conv+"/store.db.json",
		filepath.Join(home, ".cursor/chats/f4520d91ce8bf93fd444e6083fe96312", conv, "store.db"), time.Now())
	transcript := filepath.Join(t.TempDir(), conv+".jsonl")
	write := func(reply string) {
		tr := `{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nthen delete the old ascii helper\n</user_query>"}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"` + reply + `"}]}}
`
		if err := os.WriteFile(transcript, []byte(tr), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	job := func() Job {
		j, err := CursorHookJob(jsonReader(t, map[string]any{"conversation_id": conv, "hook_event_name": "stop", "status": "completed", "transcript_path": transcript}))
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	// The store does not yet hold the reply the transcript ends with.
	write("Deleting it now.")
	if rep, err := m.runCursorJob(ctx, job()); err != nil || rep.Added != 2 {
		t.Fatalf("store behind the transcript: added %+v, %v; want the 2 closed exchanges", rep, err)
	}
	write("Deleted src/ascii.ts.")
	rep, err := m.runCursorJob(ctx, job())
	if err != nil || rep.Added != 1 || rep.Commits[0].Exchange != "cursor:"+conv+"/t3" {
		t.Fatalf("added %+v, %v; want cursor:%s/t3", rep, err, conv)
	}
}

// TestCopilotCLIHookJob: Copilot CLI's real payloads (agentStop after the
// first prompt, sessionEnd after a provider error) and the session they
// came from. The agentStop job waits for a session file written late (as
// Copilot CLI flushes it) and stores the closed exchange; the sessionEnd
// job finds the session by its id and closes the last exchange, which no
// agentStop ended.
func TestCopilotCLIHookJob(t *testing.T) {
	m := newMemory(t) // sets HOME
	ctx := context.Background()
	const session = "9d3b5f7a-2c4e-4a6b-8d0f-1a3c5e7b9d2f"
	t.Setenv("COPILOT_HOME", "")
	events, err := os.ReadFile("../hooks/testdata/copilot-cli/hook/events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	payload := func(name string) map[string]any {
		var v map[string]any
		b, err := os.ReadFile("../hooks/testdata/copilot-cli/hook/" + name)
		if err != nil || json.Unmarshal(b, &v) != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	path := filepath.Join(os.Getenv("HOME"), ".copilot", "session-state", session, "events.jsonl")
	stop := payload("agentStop.json")
	stop["transcriptPath"] = path
	job, err := CopilotCLIHookJob(jsonReader(t, stop))
	if err != nil || job.Event != "agentStop" || job.Transcript != path || job.HookTimestamp == 0 {
		t.Fatalf("agentStop job %+v, %v", job, err)
	}
	// The file appears after the hook ran, up to the hook's own run.
	end := strings.Index(string(events), `"hookType":"agentStop"`)
	end += strings.IndexByte(string(events[end:]), '\n') + 1
	go func() {
		time.Sleep(200 * time.Millisecond)
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, events[:end], 0o600)
	}()
	rep, err := m.runJob(ctx, job)
	if err != nil || rep.Added != 1 {
		t.Fatalf("agentStop: added %+v, %v; want 1", rep, err)
	}
	// At the last sessionEnd, the file ends with that hook's run: the
	// session.shutdown after it is not written yet.
	last := strings.LastIndex(string(events), `"hookType":"sessionEnd"`)
	last += strings.IndexByte(string(events[last:]), '\n') + 1
	if !strings.Contains(string(events[last:]), `"session.shutdown"`) {
		t.Fatal("the session does not end with session.shutdown after its last sessionEnd")
	}
	if err := os.WriteFile(path, events[:last], 0o600); err != nil {
		t.Fatal(err)
	}
	// Before the sessionEnd, an agentStop's reading leaves the refused
	// prompt open.
	if rep, err := m.runJob(ctx, job); err != nil || rep.Added != 1 || rep.Present != 1 {
		t.Fatalf("agentStop on the session before its end: %+v, %v; want 1 added, 1 present (the refused prompt open)", rep, err)
	}
	job, err = CopilotCLIHookJob(jsonReader(t, payload("sessionEnd-error.json")))
	if err != nil || job.Event != "sessionEnd" || job.Transcript != path {
		t.Fatalf("sessionEnd job %+v, %v", job, err)
	}
	rep, err = m.runJob(ctx, job)
	if err != nil || rep.Added != 1 || rep.Present != 2 {
		t.Fatalf("sessionEnd: %+v, %v; want the prompt the provider refused added, 2 present", rep, err)
	}
	es, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, e := range es {
		prompts = append(prompts, e.Core)
	}
	if got := strings.Join(prompts, " | "); len(es) != 3 || !strings.Contains(got, "Check the build log") || !strings.Contains(got, "What does notes.md say") {
		t.Errorf("stored %s", got)
	}
}

// TestClineHookJob: the TaskComplete and TaskCancel payloads the Cline CLI
// 2.18.0 gave git mem's hooks (scripts/agent-fixtures/cline/hook-check.sh)
// name the task by id; the job finds its folder and stores what is
// closed: at the first TaskComplete the history holds the first
// exchange, ended by attempt_completion; at the second (the task resumed
// with a new prompt) both; the TaskCancel of the CLI's exit adds nothing.
func TestClineHookJob(t *testing.T) {
	m := newMemory(t) // sets HOME
	ctx := context.Background()
	t.Setenv("CLINE_DIR", "")
	const id = "1796297987776"
	full, err := os.ReadFile(filepath.Join("..", "hooks", "testdata", "cline", "hook", id, "api_conversation_history.json"))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(full, &msgs); err != nil || len(msgs) != 12 {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	history := filepath.Join(os.Getenv("HOME"), ".cline", "data", "tasks", id, "api_conversation_history.json")
	os.MkdirAll(filepath.Dir(history), 0o755)
	payload := func(name string) *os.File {
		f, err := os.Open(filepath.Join("..", "hooks", "testdata", "cline", "hook", name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}

	// The task's folder is not there yet: the job says so.
	if _, err := ClineHookJob(payload("TaskComplete-first.json")); err == nil {
		t.Fatal("a job for a task folder that is nowhere")
	}
	first, _ := json.Marshal(msgs[:8]) // as it was at the first TaskComplete
	os.WriteFile(history, first, 0o644)
	job, err := ClineHookJob(payload("TaskComplete-first.json"))
	if err != nil || job.Kind != hooks.FormatCline || job.Transcript != history || job.SessionID != id || job.Event != "TaskComplete" || filepath.Base(job.Cwd) != "project" {
		t.Fatalf("job %+v, %v", job, err)
	}
	var prompt struct {
		TS json.Number `json:"ts"`
	}
	json.Unmarshal(msgs[0], &prompt)
	rep, err := m.runJob(ctx, job)
	if err != nil || rep.Added != 1 || rep.Commits[0].Exchange != "cline:"+id+"/"+prompt.TS.String() {
		t.Fatalf("first TaskComplete: %+v, %v; want the exchange cline:%s/%s", rep, err, id, prompt.TS)
	}

	os.WriteFile(history, full, 0o644)
	job, err = ClineHookJob(payload("TaskComplete-resumed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := m.runJob(ctx, job); err != nil || rep.Added != 1 || rep.Present != 1 {
		t.Fatalf("second TaskComplete: %+v, %v; want 1 added, 1 present", rep, err)
	}
	job, err = ClineHookJob(payload("TaskCancel.json"))
	if err != nil || job.Event != "TaskCancel" {
		t.Fatalf("job %+v, %v", job, err)
	}
	if rep, err := m.runJob(ctx, job); err != nil || rep.Added != 0 || rep.Present != 2 {
		t.Fatalf("TaskCancel: %+v, %v; want nothing new", rep, err)
	}
}

// TestClineCLI3HookJob: the Cline CLI 3's agent_end names the session in
// sessionContext; its finished turn is stored even while the manifest
// still says running, and a turn that did not complete stays open.
func TestClineCLI3HookJob(t *testing.T) {
	m := newMemory(t) // sets HOME
	ctx := context.Background()
	for _, k := range []string{"CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR"} {
		t.Setenv(k, "")
	}
	const sid = "1796299658784_9jaig"
	src := filepath.Join("..", "hooks", "testdata", "cline", "hook3")
	dir := filepath.Join(os.Getenv("HOME"), ".cline", "data", "sessions", sid)
	os.MkdirAll(dir, 0o755)
	msgs, err := os.ReadFile(filepath.Join(src, "sessions", sid, sid+".messages.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, sid+".messages.json"), msgs, 0o644)
	man, _ := os.ReadFile(filepath.Join(src, "sessions", sid, sid+".json"))
	var mv map[string]any
	if err := json.Unmarshal(man, &mv); err != nil || mv["status"] != "completed" {
		t.Fatalf("manifest %v, %v", mv, err)
	}
	mv["status"] = "running" // as the session is while its hooks run
	b, _ := json.Marshal(mv)
	os.WriteFile(filepath.Join(dir, sid+".json"), b, 0o644)

	payload, err := os.ReadFile(filepath.Join(src, "TaskComplete.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pv map[string]any
	json.Unmarshal(payload, &pv)
	pv["turn"].(map[string]any)["status"] = "aborted"
	aborted, err := ClineHookJob(jsonReader(t, pv))
	if err != nil || aborted.Event != "agent_end:aborted" {
		t.Fatalf("job %+v, %v", aborted, err)
	}
	if rep, err := m.runJob(ctx, aborted); err != nil || rep.Added != 0 {
		t.Fatalf("an aborted turn: %+v, %v; want nothing stored", rep, err)
	}
	f, _ := os.Open(filepath.Join(src, "TaskComplete.json"))
	defer f.Close()
	job, err := ClineHookJob(f)
	if err != nil || job.SessionID != sid || job.Event != "agent_end" || job.Transcript != filepath.Join(dir, sid+".messages.json") || filepath.Base(job.Cwd) != "project" {
		t.Fatalf("job %+v, %v", job, err)
	}
	rep, err := m.runJob(ctx, job)
	if err != nil || rep.Added != 1 {
		t.Fatalf("agent_end: %+v, %v; want the turn stored", rep, err)
	}
	os.RemoveAll(dir)
	if _, err := ClineHookJob(jsonReader(t, pv)); err == nil {
		t.Error("a job for a session that is nowhere")
	}
}
