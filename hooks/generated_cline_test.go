package hooks

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Cline task folders written by the Cline CLI 2.18.0 itself (npm package
// cline) against a scripted local model: scripts/agent-fixtures/cline/run.sh.
// Task ids are the start time in ms, so a rerun renames the folders; the
// cases find them in start order (the first task began first).
func init() {
	tasks, _ := filepath.Glob("testdata/cline/generated/*/api_conversation_history.json")
	sort.Strings(tasks)
	for len(tasks) < 2 {
		tasks = append(tasks, "testdata/cline/generated/missing/api_conversation_history.json")
	}
	agentCases = append(agentCases,
		agentCase{
			// Task 1, 12 messages. User 0: <task> block, then Cline's own
			// "# task_progress RECOMMENDED" block, then environment_details.
			// Assistant 1, 3, 5, 7: read_file (with <thinking>),
			// replace_in_file greet.js, execute_command "node greet.js
			// Ada", attempt_completion. Users 2, 4, 6 are "[tool for 'x']
			// Result:\n…" in one block with the result. User 8 is the
			// resumed task (cline task -T): "[TASK RESUMPTION] …", then
			// "<user_message>" with the second prompt, the task_progress
			// block and environment_details. Assistant 9, 11:
			// write_to_file README.md, attempt_completion (no result
			// message follows: the CLI stops at the completion). 6 calls;
			// edits greet.js, then writes README.md. Each exchange ends in
			// attempt_completion, so the open read already gives both.
			format: FormatCline, file: tasks[0],
			exchanges: 2, open: 2,
			prompts:   []string{"greet.js ignores the name it is given: make greet() use it, then run it with Ada to check.", "Add a README.md that says how to run it."},
			toolCalls: 6,
			files:     []string{"greet.js", "README.md"},
			arrayPath: []string{},
		},
		agentCase{
			// Task 2, 4 messages: <task>; execute_command "node greet.js";
			// its result, followed in the same message by the
			// task_progress block (not part of the result);
			// attempt_completion. 2 calls, no file touched.
			format: FormatCline, file: tasks[1],
			exchanges: 1, open: 1,
			prompts:   []string{"What does greet.js print when it is given no name?"},
			toolCalls: 2,
			arrayPath: []string{},
		},
	)
}

// TestGeneratedClineNotices: the text blocks Cline adds on its own (the
// focus chain's "# task_progress RECOMMENDED") are neither part of the
// prompt nor of the tool result they follow.
func TestGeneratedClineNotices(t *testing.T) {
	tasks, _ := filepath.Glob("testdata/cline/generated/*/api_conversation_history.json")
	sort.Strings(tasks)
	if len(tasks) != 2 {
		t.Fatalf("generated tasks: %q", tasks)
	}
	want := [][]string{
		{"greet.js ignores the name it is given: make greet() use it, then run it with Ada to check.", "Add a README.md that says how to run it."},
		{"What does greet.js print when it is given no name?"},
	}
	for k, f := range tasks {
		res, err := ReadCline(f, Options{SessionEnded: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Exchanges) != len(want[k]) {
			t.Fatalf("%s: %d exchanges, want %d", f, len(res.Exchanges), len(want[k]))
		}
		for i, ex := range res.Exchanges {
			if got := ex.UserText(); got != want[k][i] {
				t.Errorf("%s: prompt %d = %q, want %q", f, i, got, want[k][i])
			}
			if ex.Project != "project" {
				t.Errorf("%s: project %q", f, ex.Project)
			}
			for _, turn := range ex.Turns {
				if strings.Contains(turn.Text, "task_progress") {
					t.Errorf("%s: %s turn keeps Cline's task_progress notice: %.80q", f, turn.Role, turn.Text)
				}
			}
		}
	}
}
