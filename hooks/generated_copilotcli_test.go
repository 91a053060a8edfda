package hooks

// The Copilot CLI fixture written by the released agent itself (GitHub
// Copilot CLI 1.0.102, npm package @github/copilot) against the scripted
// model server of scripts/agent-fixtures/copilot-cli; see PROVENANCE.json.

func init() {
	agentCases = append(agentCases, agentCase{
		// Counted in the file (52 lines, one session, resumed twice):
		// user.message at lines 2, 16 and 35 (3 prompts); toolRequests
		// view (l6) | edit (l19, fails: "No match found", l21), edit (l25)
		// | create (l38), bash (l44) = 5 calls. Files: the edit of
		// hello.sh that succeeded (the failed one left it as it was) and
		// the create of test.sh. Every prompt's last model step
		// (l12, l31, l50) asks for no tool and is followed by
		// assistant.turn_end, so even the open read gives all 3.
		format:    FormatCopilotCLI,
		file:      "testdata/copilot-cli/generated/session-state/7c0f1e2d-3b4a-4c5d-8e6f-0a1b2c3d4e5f/events.jsonl",
		exchanges: 3, open: 3,
		prompts: []string{
			"What does notes.md say?",
			"Fix the greeting in hello.sh, it should print Hello, world.",
			"Add a test script test.sh that checks the greeting, and run it.",
		},
		toolCalls: 5,
		files: []string{
			"/tmp/git-mem-fixture/copilot-cli/project/hello.sh",
			"/tmp/git-mem-fixture/copilot-cli/project/test.sh",
		},
	})
}
