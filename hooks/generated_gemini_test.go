package hooks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// geminiGeneratedFile is a chat Gemini CLI 0.61.0 wrote against the
// scripted model of scripts/agent-fixtures/gemini: the session's file
// among those whose names end in id8 (a run.sh session id's first 8
// characters; files are named by the minute of a run, so found by
// pattern). A resume in a later minute leaves a stub file of its own (the
// session context only); the session's file is the largest.
func geminiGeneratedFile(id8 string) string {
	pattern := "testdata/gemini/generated/tmp/project/chats/session-*-" + id8 + ".jsonl"
	m, _ := filepath.Glob(pattern)
	best, size := pattern, int64(-1) // no such file: the tests that read it fail
	for _, p := range m {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			best, size = p, st.Size()
		}
	}
	return best
}

// geminiGenerated is the first session: four runs, three resumed.
func geminiGenerated() string { return geminiGeneratedFile("0f1e2d3c") }

func init() {
	agentCases = append(agentCases, agentCase{
		// Gemini CLI 0.61.0, real (generated): one session of four runs
		// (-p, then --resume three times). Line 2 is the CLI's own
		// <session_context> user message (no prompt); prompts are the user
		// text messages of lines 3, 16, 29 and 42 (4); the user messages of
		// lines 8, 21, 34 and 47 hold functionResponse parts only (tool
		// results, no prompt). toolCalls of lines 7, 20, 33, 46: read_file
		// | replace, write_file | run_shell_command | read_file (status
		// error) = 5. The replace edits notes.txt, the write_file creates
		// count.sh. Lines 13/15, 26/28 and 39/41 are the resumes' $set of
		// the whole history (rebuilt, see TestGeminiGeneratedResume). No
		// marker ends the last turn: open gives 3.
		format: FormatGemini, file: geminiGenerated(),
		exchanges: 4, open: 3,
		prompts:   []string{"What does notes.txt say?", "Mark the milk as done in notes.txt, and write a count.sh", "Run count.sh.", "What is in todo.txt?"},
		toolCalls: 5,
		files:     []string{"/tmp/git-mem-fixture/gemini/project/notes.txt", "/tmp/git-mem-fixture/gemini/project/count.sh"},
	}, agentCase{
		// Gemini CLI 0.61.0, real (generated), the second session: run
		// with a SessionStart and a BeforeAgent hook that add context.
		// Line 2 the <session_context>; the user messages of lines 3 and
		// 16 are prompts, each "<hook_context>…</hook_context>\n\n" +
		// the prompt, then a part of BeforeAgent's <hook_context> (the
		// prompts below have neither); line 8 the shell call's result.
		// toolCalls: line 7's run_shell_command = 1; no edits. Line 12 on
		// is the resume; its rebuilt history (line 15) leaves out the
		// first prompt (the CLI drops a prompt that begins with
		// <hook_context>), which still counts: 2 exchanges.
		format: FormatGemini, file: geminiGeneratedFile("5a6b7c8d"),
		exchanges: 2, open: 1,
		prompts:   []string{"Show the last line of notes.txt.", "Thanks, that is all."},
		toolCalls: 1,
	}, agentCase{
		// Gemini CLI 0.61.0, real (generated), the third session: two runs
		// a minute apart, so the resume's stub went to a file of its own
		// (TestGeminiStubs) and this file has no second metadata line;
		// line 8 is the resume's $set of the list with the original
		// records. Prompts: user text messages of lines 3 and 9. The
		// model's call (line 13, run_shell_command = 1 call) reported a
		// 900,000-token prompt, so before sending its result (line 16)
		// the CLI compressed: line 15's $set holds a <state_snapshot> user
		// message, a canned "Got it" reply and the second prompt and its
		// call again under new ids; none of them is an exchange of its
		// own. No edits.
		format: FormatGemini, file: geminiGeneratedFile("7b8c9d0e"),
		exchanges: 2, open: 1,
		prompts:   []string{"Keep notes.txt short from now on.", "How many lines does notes.txt have now?"},
		toolCalls: 1,
	})
}

// TestGeminiStubs: every generated chat file but the sessions' own is a
// stub a resumed run left (its metadata and session context): no
// exchange, no problem.
func TestGeminiStubs(t *testing.T) {
	main := map[string]bool{}
	for _, id8 := range []string{"0f1e2d3c", "5a6b7c8d", "7b8c9d0e"} {
		main[geminiGeneratedFile(id8)] = true
	}
	all, _ := filepath.Glob("testdata/gemini/generated/tmp/project/chats/session-*.jsonl")
	stubs := 0
	for _, p := range all {
		if main[p] {
			continue
		}
		stubs++
		res, err := ReadGemini(p, Options{SessionEnded: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Exchanges) != 0 || len(res.Problems) != 0 {
			t.Errorf("%s: %d exchanges %q, problems %v; want none", p, len(res.Exchanges), prompts(res.Exchanges), res.Problems)
		}
	}
	if stubs == 0 {
		t.Error("no stub file: the third session's resume (a minute later) leaves one")
	}
}

// TestGeminiCompressed: the compression's rebuilt list (a snapshot, a
// canned reply, the kept turn under new ids) adds no exchange and keeps
// the second exchange's call and final reply as recorded.
func TestGeminiCompressed(t *testing.T) {
	res, err := ReadGemini(geminiGeneratedFile("7b8c9d0e"), Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 2 {
		t.Fatalf("got %d exchanges %q, want 2", len(res.Exchanges), prompts(res.Exchanges))
	}
	for _, ex := range res.Exchanges {
		for _, tu := range ex.Turns {
			if strings.Contains(tu.Text, "state_snapshot") || strings.Contains(tu.Text, "Got it. Thanks") {
				t.Errorf("%s: the compression's text %.80q read as part of an exchange", ex.ID, tu.Text)
			}
		}
	}
	second := res.Exchanges[1].Turns
	if len(second) != 3 || second[1].Name != "run_shell_command" || !strings.Contains(second[1].Text, "Output: 2") || second[2].Text != "notes.txt has 2 lines." {
		t.Errorf("second exchange %+v, want the prompt, the call with its result, the reply", second)
	}
}

// TestGeminiHookContext: what hooks add to a prompt (<hook_context>) is
// not the user's prompt; the exchange keeps the user's words only.
func TestGeminiHookContext(t *testing.T) {
	res, err := ReadGemini(geminiGeneratedFile("5a6b7c8d"), Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Show the last line of notes.txt.", "Thanks, that is all."}
	if got := prompts(res.Exchanges); !reflect.DeepEqual(got, want) {
		t.Fatalf("prompts %q, want %q", got, want)
	}
	for _, ex := range res.Exchanges {
		if strings.Contains(ex.UserText(), "Recalled") || strings.Contains(ex.UserText(), "hook_context") {
			t.Errorf("prompt keeps the hooks' context: %q", ex.UserText())
		}
	}
}

// finalReplies are the script's last reply to each prompt
// (scripts/agent-fixtures/gemini/script.json).
var geminiFinalReplies = []string{
	`notes.txt has two lines: "buy milk" and "call the plumber about the kitchen tap".`,
	"I marked the milk as done in notes.txt and wrote count.sh, which counts the lines of notes.txt.",
	"count.sh prints 2: notes.txt has two lines.",
	"There is no todo.txt in the project; the notes are all in notes.txt.",
}

// checkGeminiGenerated asserts what every read of the generated session
// must give: each exchange ends with the model's final reply (a tool
// round's functionResponse message does not end the turn), every call has
// its result once, and the failed read is an error.
func checkGeminiGenerated(t *testing.T, exs []*exchange.Exchange) {
	t.Helper()
	if len(exs) != 4 {
		t.Fatalf("got %d exchanges %q, want 4", len(exs), prompts(exs))
	}
	var calls []string
	for i, ex := range exs {
		last := ex.Turns[len(ex.Turns)-1]
		if last.Role != exchange.RoleAssistant || last.Text != geminiFinalReplies[i] {
			t.Errorf("exchange %d ends with %s %.80q, want the final reply %q", i, last.Role, last.Text, geminiFinalReplies[i])
		}
		for _, tu := range ex.Turns {
			if tu.Role != exchange.RoleTool {
				continue
			}
			calls = append(calls, tu.Name)
			if tu.Text == "" || strings.Count(tu.Text, "Successfully") > 1 || strings.Count(tu.Text, "File not found") > 1 {
				t.Errorf("exchange %d: %s result %.200q, want it once", i, tu.Name, tu.Text)
			}
			if (tu.Extra["is_error"] == true) != (i == 3) {
				t.Errorf("exchange %d: %s is_error = %v", i, tu.Name, tu.Extra["is_error"])
			}
		}
		if strings.Contains(ex.UserText(), "session_context") {
			t.Errorf("exchange %d: the CLI's session context read as a prompt", i)
		}
	}
	want := []string{"read_file", "replace", "write_file", "run_shell_command", "read_file"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls %q, want %q", calls, want)
	}
	if !strings.Contains(exs[2].Turns[1].Text, "Output: 2") {
		t.Errorf("shell result %q, want the command's output", exs[2].Turns[1].Text)
	}
}

// TestGeminiGeneratedResume: each resume rewrites the history in a $set
// (new timestamps, thoughts and calls folded into content parts, no
// toolCalls); the exchanges still read as first recorded.
func TestGeminiGeneratedResume(t *testing.T) {
	path := geminiGenerated()
	res, err := ReadGemini(path, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	checkGeminiGenerated(t, res.Exchanges)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	var first struct {
		Timestamp string `json:"timestamp"`
	}
	if err := json.Unmarshal(lines[2], &first); err != nil { // line 3: the first prompt
		t.Fatal(err)
	}
	if res.Exchanges[0].Time != first.Timestamp {
		t.Errorf("first exchange at %s, want %s as first recorded (not a resume's rewrite)", res.Exchanges[0].Time, first.Timestamp)
	}
	th := res.Exchanges[0].Turns[1]
	if th.Extra["thinking"] != true || th.Text != "Reading the notes: The user wants to know what notes.txt says, so I will read it." {
		t.Errorf("first reply's thought %+v", th)
	}
	if res.Exchanges[0].Project != "project" {
		t.Errorf("project %q, want the folder of .project_root", res.Exchanges[0].Project)
	}
}

// TestGeminiRebuiltHistory reads a file holding only the rebuilt history
// (the metadata line and the last resume's $set, then what followed), as
// when no earlier record of the messages is in the file: calls come from
// functionCall parts, their results from the functionResponse messages
// after them (once, though the rebuilt list repeats each), thoughts from
// thought parts.
func TestGeminiRebuiltHistory(t *testing.T) {
	data, err := os.ReadFile(geminiGenerated())
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	last := -1
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte(`{"$set":{"messages":`)) {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("no $set of messages in the fixture")
	}
	rebuilt := bytes.Join(append([][]byte{lines[0]}, lines[last:]...), nil)
	name := filepath.Join(t.TempDir(), "project", "chats", "session-rebuilt.jsonl")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, rebuilt, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadGemini(name, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 {
		t.Errorf("problems: %v", res.Problems)
	}
	checkGeminiGenerated(t, res.Exchanges)
	th := res.Exchanges[0].Turns[1]
	if th.Extra["thinking"] != true || !strings.Contains(th.Text, "Reading the notes") {
		t.Errorf("first reply's thought part %+v", th)
	}
	var files []string
	for _, ex := range res.Exchanges {
		files = append(files, FilesTouched(ex)...)
	}
	if want := []string{"/tmp/git-mem-fixture/gemini/project/notes.txt", "/tmp/git-mem-fixture/gemini/project/count.sh"}; !reflect.DeepEqual(files, want) {
		t.Errorf("files touched %q, want %q", files, want)
	}
}
