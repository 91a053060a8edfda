package hooks

// Continue CLI fixtures written by the CLI itself (cn 1.5.47, headless,
// against scripts/agent-fixtures/continue/server.js on 127.0.0.1; see
// run.sh there).
func init() {
	agentCases = append(agentCases,
		agentCase{
			// history[12]: user at 0, 3 and 8 (3 prompts, one session
			// resumed twice). Assistant items with toolCalls: 1 Read |
			// 4 Read, 5 MultiEdit (status errored: string not found),
			// 6 MultiEdit | 9 Write, 10 Bash = 6 calls; text replies at
			// 2, 7, 11. No role "tool" items: every result is in the
			// call's toolCallStates[].output. Edits: hello.sh by the
			// MultiEdit at 6 (5 failed, so not counted), test.sh by the
			// Write at 9 (its path is "filepath", not "file_path"). The
			// last exchange has no end marker: open gives 2. Times from
			// the sessions.json beside it (dateCreated, ms as a string).
			format: FormatContinue, file: "testdata/continue/generated/sessions/5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b.json",
			exchanges: 3, open: 2,
			prompts:   []string{"What does notes.md say?", "Fix the greeting in hello.sh", "Add a test script test.sh"},
			toolCalls: 6,
			files:     []string{"/tmp/git-mem-fixture/continue/project/hello.sh", "/tmp/git-mem-fixture/continue/project/test.sh"},
			arrayPath: []string{"history"},
		},
		agentCase{
			// A second session in the same folder, run with a model name cn
			// does not deem capable, so it offers Edit, not MultiEdit:
			// history[4], user at 0, Read at 1, Edit of notes.md at 2
			// (done), the reply at 3; 2 calls. Its only exchange is the
			// last: open gives 0.
			format: FormatContinue, file: "testdata/continue/generated/sessions/6a2d3b4c-5e6f-4a71-9b8c-0d1e2f3a4b5c.json",
			exchanges: 1, open: 0,
			prompts:   []string{"Mark the first task in notes.md as done."},
			toolCalls: 2,
			files:     []string{"/tmp/git-mem-fixture/continue/project/notes.md"},
			arrayPath: []string{"history"},
		},
	)
}
