package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// Roo Code task folders written by Roo Code's own CLI 0.1.17 (apps/cli of
// RooCodeInc/Roo-Code, running the extension 3.50.4 headless) against a
// scripted local model: scripts/agent-fixtures/roo-code/run.sh. The task
// ids are fixed by the script (the CLI's --stdin-prompt-stream start
// command takes one).
const (
	rooGenTask1 = "testdata/roo-code/generated/019ae1c0-0001-7000-8000-000000000001/api_conversation_history.json"
	rooGenTask2 = "testdata/roo-code/generated/019ae1c0-0002-7000-8000-000000000002/api_conversation_history.json"
)

func init() {
	agentCases = append(agentCases,
		agentCase{
			// Task 1, 10 messages, native tool_use / tool_result. User 0:
			// "<user_message>\n…\n</user_message>" (not <task>), then an
			// <environment_details> block ("# Current Workspace Directory
			// (…) Files"). Assistant 1: a {type: "reasoning", text,
			// summary} block (the scripted model's thinking; Roo drops the
			// signature), text, read_file greet.js. User 2:
			// its tool_result, environment_details. Assistant 3:
			// attempt_completion. User 4: the second prompt, sent as the
			// answer to the completion, comes as the attempt_completion's
			// tool_result holding "<user_message>…</user_message>" (not
			// <feedback>), then environment_details. Assistant 5: text,
			// apply_diff greet.js; 7: execute_command "node greet.js
			// Ada"; 9: attempt_completion (the CLI stops there: no result
			// message follows). 5 calls; edits greet.js. Each exchange
			// ends in attempt_completion, so the open read gives both.
			format: FormatCline, file: rooGenTask1,
			exchanges: 2, open: 2,
			prompts:   []string{"What does greet.js print?", "Make greet() use the name it is given, then run it with Ada to check."},
			toolCalls: 5,
			files:     []string{"greet.js"},
			arrayPath: []string{},
		},
		agentCase{
			// Task 2, 4 messages: <user_message>; write_to_file README.md;
			// its tool_result; attempt_completion. 2 calls.
			format: FormatCline, file: rooGenTask2,
			exchanges: 1, open: 1,
			prompts:   []string{"Add a README.md that says how to run greet.js."},
			toolCalls: 2,
			files:     []string{"README.md"},
			arrayPath: []string{},
		},
	)
}

// TestGeneratedRooProject: Roo Code names the task's folder "# Current
// Workspace Directory (…) Files" in its environment_details (Cline says
// "Working"); the exchanges get that project, as Roo Code's, with no
// environment_details or tool output in the prompts.
func TestGeneratedRooProject(t *testing.T) {
	for _, f := range []string{rooGenTask1, rooGenTask2} {
		res, err := ReadCline(f, Options{SessionEnded: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Exchanges) == 0 {
			t.Fatalf("%s: no exchanges", f)
		}
		for _, ex := range res.Exchanges {
			if ex.Project != "project" {
				t.Errorf("%s: project %q, want project", f, ex.Project)
			}
			if ex.Agent != AgentRooCode {
				t.Errorf("%s: agent %q", f, ex.Agent)
			}
			if u := ex.UserText(); strings.Contains(u, "environment_details") || strings.Contains(u, "Hello") {
				t.Errorf("%s: prompt %q", f, u)
			}
		}
	}
}

// TestRooCLITaskRoot: the Roo Code CLI keeps its tasks in the
// vscode-shim's storage, ~/.vscode-mock/global-storage/tasks/, and a task
// read from there is Roo Code's, not Cline's.
func TestRooCLITaskRoot(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, ".vscode-mock", "global-storage", "tasks")
	found := false
	for _, r := range ClineTaskRoots(home, true) {
		found = found || r == root
	}
	if !found {
		t.Fatalf("roo roots %q lack %s", ClineTaskRoots(home, true), root)
	}
	for _, r := range ClineTaskRoots(home, false) {
		if r == root {
			t.Fatalf("cline roots hold the Roo CLI's %s", root)
		}
	}
	data, err := os.ReadFile(rooGenTask2)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, "019ae1c0-0002-7000-8000-000000000002", "api_conversation_history.json")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadCline(dst, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 1 || res.Exchanges[0].Agent != AgentRooCode {
		t.Fatalf("exchanges %+v", res.Exchanges)
	}
}

// TestGeneratedRooReasoning: the reasoning block Roo Code keeps before the
// assistant's text is a thinking turn of the first exchange, and is not
// lost.
func TestGeneratedRooReasoning(t *testing.T) {
	res, err := ReadCline(rooGenTask1, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 2 {
		t.Fatalf("%d exchanges", len(res.Exchanges))
	}
	var thinking []string
	for _, ex := range res.Exchanges {
		for _, turn := range ex.Turns {
			if turn.Extra["thinking"] == true {
				thinking = append(thinking, turn.Text)
			}
		}
	}
	want := []string{"The user asks what greet.js prints. I should read the file before answering."}
	if !reflect.DeepEqual(thinking, want) {
		t.Errorf("thinking turns %q, want %q", thinking, want)
	}
	var texts []string
	for _, turn := range res.Exchanges[0].Turns {
		if turn.Role == exchange.RoleAssistant && turn.Extra["thinking"] != true {
			texts = append(texts, turn.Text)
		}
	}
	if !reflect.DeepEqual(texts, []string{"I'll read greet.js first."}) {
		t.Errorf("assistant text %q", texts)
	}
}

// TestRooEditFileTouches: Roo Code's edit_file (like its edit and
// search_replace) names the file in file_path; Cursor's in target_file.
func TestRooEditFileTouches(t *testing.T) {
	for _, input := range []map[string]any{
		{"file_path": "src/a.ts", "old_string": "x", "new_string": "y"},
		{"target_file": "src/a.ts", "instructions": "rename x"},
	} {
		ex := &exchange.Exchange{Turns: []exchange.Turn{{Role: exchange.RoleTool, Name: "edit_file", Input: input}}}
		if got := FilesTouched(ex); !reflect.DeepEqual(got, []string{"src/a.ts"}) {
			t.Errorf("edit_file %v: files %q", input, got)
		}
	}
}
