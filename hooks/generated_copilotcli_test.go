package hooks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// The Copilot CLI fixture written by the released agent itself (GitHub
// Copilot CLI 1.0.102, npm package @github/copilot) against the scripted
// model server of scripts/agent-fixtures/copilot-cli; see PROVENANCE.json.
const genCopilotCLI = "testdata/copilot-cli/generated/session-state/7c0f1e2d-3b4a-4c5d-8e6f-0a1b2c3d4e5f/events.jsonl"

// genCopilotCLIAbort: a second session, its first prompt interrupted by
// SIGINT while its shell command ran.
const genCopilotCLIAbort = "testdata/copilot-cli/generated/session-state/3b9d5f7a-1c2e-4f6a-8b0d-2e4f6a8c0e1f/events.jsonl"

// genCopilotCLIAnthropic: a third session, through an Anthropic-compatible
// provider whose replies start with a thinking block.
const genCopilotCLIAnthropic = "testdata/copilot-cli/generated/session-state/5d1f3b5c-7e9a-4b2c-9d4e-6f8a0b2c4d6e/events.jsonl"

// genCopilotCLITUI: a fourth session, two prompts typed into the
// interactive terminal UI of one running agent.
const genCopilotCLITUI = "testdata/copilot-cli/generated/session-state/8e2a4c6e-0b1d-4e3f-a5b7-c9d1e3f5a7b9/events.jsonl"

// genCopilotCLICompact: a fifth session that compacts in the middle of its
// task (a small context window and two long reads).
const genCopilotCLICompact = "testdata/copilot-cli/generated/session-state/2f4a6c8e-1a3b-4c5d-9e7f-8a0b1c2d3e4f/events.jsonl"

// genCopilotCLIBackground: a sixth session, a subagent run in the
// background past the main agent's first reply.
const genCopilotCLIBackground = "testdata/copilot-cli/generated/session-state/6a8c0e2a-4b6d-4f8a-8c1e-3a5b7c9d1e3f/events.jsonl"

// genCopilotCLIBeforeUndo is the fourth session's file just before /undo
// (copied by run.sh): its 2nd prompt is the one undone.
const genCopilotCLIBeforeUndo = "testdata/copilot-cli/generated/before-undo/session-state/8e2a4c6e-0b1d-4e3f-a5b7-c9d1e3f5a7b9/events.jsonl"

// genCopilotCLIAgent is the subagent of the fixture's 4th prompt: the
// envelope's agentId of its subagent.started (line 61; also on 62-76, 78).
func genCopilotCLIAgent(t *testing.T, data []byte) string {
	t.Helper()
	for _, l := range bytes.Split(data, []byte("\n")) {
		var ev ghEvent
		if json.Unmarshal(l, &ev) == nil && ev.Type == "subagent.started" && ev.AgentID != "" {
			return ev.AgentID
		}
	}
	t.Fatal("no subagent.started with an agentId")
	return ""
}

func init() {
	agentCases = append(agentCases, agentCase{
		// Counted in the file (84 lines, one session started once and
		// resumed three times, each -p run ending in session.shutdown):
		// user.message of the main agent at lines 2, 18, 37, 56 (4
		// prompts; the one at 65 is the subagent's task, with agentId).
		// Calls: view, view (one message, l6) | edit (l21, fails "No
		// match found" l23), edit (l27) | create (l40), bash (l46) | task
		// (l59), and the subagent's bash (l69) = 8. Files: the edit of
		// hello.sh that succeeded (the failed one left it as it was) and
		// the create of test.sh. Every prompt's last main step (l14, l33,
		// l52, l82) asks for no tool and is followed by assistant.turn_end,
		// so even the open read gives all 4.
		format: FormatCopilotCLI, file: genCopilotCLI,
		exchanges: 4, open: 4,
		prompts: []string{
			"What does notes.md say?",
			"Fix the greeting in hello.sh, it should print Hello, world.",
			"Add a test script test.sh that checks the greeting, and run it.",
			"Have a subagent count the lines of notes.md.",
		},
		toolCalls: 8,
		files: []string{
			"/tmp/git-mem-fixture/copilot-cli/project/hello.sh",
			"/tmp/git-mem-fixture/copilot-cli/project/test.sh",
		},
	}, agentCase{
		// Counted in the file (23 lines, started once, resumed twice):
		// user.message at 2, 12 and 18 (3 prompts). One call, the bash of
		// l6, started (l7) and never completed: the step's turn_end and
		// the abort at l8-9 (runs of the script differ in their order and
		// in the reason, "user_initiated" or "user_abort"), then
		// session.shutdown. The second prompt's
		// model call fails: turn_start, turn_end with no message (l13-14),
		// session.error (l15, "400 fixture: …") kept as a system turn,
		// closed by session.shutdown. The third's reply asks for no tool
		// and its turn_end (l22) closes it. No file touched.
		format: FormatCopilotCLI, file: genCopilotCLIAbort,
		exchanges: 3, open: 3,
		prompts:   []string{"Run the slow build.", "Check the build log.", "Skip the build, it is not needed."},
		toolCalls: 1,
	}, agentCase{
		// Counted in the file (29 lines, resumed once): user.message at 2
		// and 16 (2 prompts); view (l6) | skill (l19) = 2 calls; the skill
		// tool's result is followed by skill.invoked (l22, the skill's
		// text, kept as a system turn) and skill.context_delivered_ref;
		// the replies of l12 and l27 ask for no tool, their turn_end (l13,
		// l28) close the exchanges. The first prompt's two
		// assistant.message lines (l6, l12) carry reasoningText (and the
		// thinking block's signature as reasoningOpaque); there is no
		// assistant.reasoning event.
		format: FormatCopilotCLI, file: genCopilotCLIAnthropic,
		exchanges: 2, open: 2,
		prompts:   []string{"Explain hello.sh.", "Set up the cloud agent for this repo."},
		toolCalls: 2,
	}, agentCase{
		// Counted in the file (37 lines): session.start, then
		// session.model_change (the interactive UI's), user.message at 3
		// and 16 (2 prompts) with no shutdown or resume between them: the
		// prompt typed between them was undone (/undo rewrote the file
		// without it, leaving session.info "Rewound the conversation…" at
		// l15). bash (l7) | view (l20) = 2 calls; the replies of l13 and
		// l26 ask for no tool, their turn_end (l14, l27) close the
		// exchanges. /compact (compaction_start l28 … complete l36, with
		// model.* events of its own call between) came after the last
		// exchange closed, so it marks none; /exit wrote session.shutdown
		// (l37). No file touched.
		format: FormatCopilotCLI, file: genCopilotCLITUI,
		exchanges: 2, open: 2,
		prompts:   []string{"List the shell scripts in this folder.", "Explain hello.sh."},
		toolCalls: 2,
	}, agentCase{
		// Counted in the file (22 lines): one user.message (l2); view
		// (l6) | view (l13) = 2 calls; session.compaction_start (l11, in
		// the second step) and session.compaction_complete (l18, success,
		// trigger "threshold", in the third) while the exchange runs; the
		// reply of l20 asks for no tool, its turn_end (l21) closes it.
		format: FormatCopilotCLI, file: genCopilotCLICompact,
		exchanges: 1, open: 1,
		prompts:   []string{"Read big.txt and big2.txt."},
		toolCalls: 2,
	}, agentCase{
		// Counted in the file (38 lines): one user.message of the main
		// agent (l2; l15 is the subagent's, with agentId). task (l6,
		// mode background: its result at l9 says the agent started),
		// the subagent's bash (l21), and read_agent (l31, which the main
		// agent asks for after system.notification l30 says the subagent
		// is done) = 3 calls. The main agent's first reply (l18) asks for
		// no tool, but its turn_end (l19) comes while the subagent runs
		// (subagent.started l8, subagent.completed l29): only the second
		// reply's turn_end (l37) closes the exchange.
		format: FormatCopilotCLI, file: genCopilotCLIBackground,
		exchanges: 1, open: 1,
		prompts:   []string{"Start a background count of the lines of notes.md."},
		toolCalls: 3,
	})
}

// A background subagent keeps its exchange open past the main agent's
// first reply; the runtime's notification and the agent's read_agent
// belong to it.
func TestCopilotCLIBackgroundSubagent(t *testing.T) {
	data, err := os.ReadFile(genCopilotCLIBackground)
	if err != nil {
		t.Fatal(err)
	}
	agent := genCopilotCLIAgent(t, data)
	res, err := ReadCopilotCLI(genCopilotCLIBackground, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range res.Exchanges[0].Turns {
		k := tr.Role + ":" + tr.Name + ":" + strings.SplitN(tr.Text, "\n", 2)[0]
		if a, _ := tr.Extra["subagent"].(string); a != "" {
			if a != agent {
				t.Errorf("turn of agent %s, want %s", a, agent)
			}
			k = "sub " + k
		}
		got = append(got, k)
	}
	want := []string{
		"user::Start a background count of the lines of notes.md.",
		"tool:task:Agent started in background with agent_id: " + agent + ". You'll",
		"sub tool:bash:4",
		"sub assistant::4",
		"assistant::Started a background count.",
		"system::<system_notification>",
		"tool:read_agent:Agent is idle (waiting for messages). agent_id: " + agent,
		"assistant::The background count finished: 4 lines.",
	}
	if len(got) != len(want) {
		t.Fatalf("turns\n%q\nwant\n%q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("turn %d = %q, want %q…", i, got[i], want[i])
		}
	}
	// Cut after the first reply's turn_end (l19) and after the subagent's
	// end (l29): the exchange is still open.
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, cut := range []int{19, 29} {
		name := filepath.Join(t.TempDir(), "session-state", "s", "events.jsonl")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, bytes.Join(lines[:cut], nil), 0o644); err != nil {
			t.Fatal(err)
		}
		open, err := ReadCopilotCLI(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(open.Exchanges) != 0 {
			t.Errorf("cut at line %d: %d exchanges, want none while the subagent runs or is unread", cut, len(open.Exchanges))
		}
	}
}

// An automatic compaction while the agent works is marked where it ended.
func TestCopilotCLICompaction(t *testing.T) {
	res, err := ReadCopilotCLI(genCopilotCLICompact, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range res.Exchanges[0].Turns {
		got = append(got, tr.Role+":"+tr.Name+":"+strings.SplitN(tr.Text, "\n", 2)[0])
	}
	want := []string{
		"user::Read big.txt and big2.txt.",
		"tool:view:line 1 of a long file with some words in it to take tokens",
		"tool:view:line 1 of a long file with some words in it to take tokens",
		"system::[conversation compacted]",
		"assistant::Both files are long lists of numbered lines.",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("turns\n%q\nwant\n%q", got, want)
	}
	// A /compact after the exchange closed (the TUI session) marks none.
	tui, err := ReadCopilotCLI(genCopilotCLITUI, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range tui.Exchanges {
		for _, tr := range ex.Turns {
			if tr.Text == "[conversation compacted]" {
				t.Errorf("%s: a /compact between exchanges marked one", ex.ID)
			}
		}
	}
}

// Through an Anthropic provider, each step's thinking block is the
// message's reasoningText: a thinking turn before what the step did.
func TestCopilotCLIAnthropicThinking(t *testing.T) {
	res, err := ReadCopilotCLI(genCopilotCLIAnthropic, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range res.Exchanges[0].Turns {
		k := tr.Role + ":" + tr.Name
		if tr.Extra["thinking"] == true {
			k = "thinking:" + tr.Text
		}
		got = append(got, k)
	}
	want := []string{"user:", "thinking:Read hello.sh before explaining it.", "tool:view", "thinking:It is a one-line shell script.", "assistant:"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("turns %q, want %q", got, want)
	}
}

// A skill the model loads is what it is given next: a system turn after
// the skill call.
func TestCopilotCLISkill(t *testing.T) {
	res, err := ReadCopilotCLI(genCopilotCLIAnthropic, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	turns := res.Exchanges[1].Turns
	var got []string
	for _, tr := range turns {
		k := tr.Role + ":" + tr.Name
		if tr.Extra["thinking"] == true {
			k = "thinking"
		}
		got = append(got, k)
	}
	if want := "user:|tool:skill|system:|assistant:"; strings.Join(got, "|") != want {
		t.Errorf("turns %q, want %s", got, want)
	}
	var skill *exchange.Turn
	for i := range turns {
		if turns[i].Role == exchange.RoleSystem {
			skill = &turns[i]
		}
	}
	if skill == nil || !strings.HasPrefix(skill.Text, "[skill customize-cloud-agent]\n# Customizing the development environment") {
		t.Fatalf("no skill turn: %q", got)
	}
	for i, tr := range turns {
		if tr.Role == exchange.RoleSystem && (i == 0 || turns[i-1].Name != "skill") {
			t.Errorf("the skill's text is not right after the skill call: %q", got)
		}
	}
}

// The interrupted command is kept as a failed call.
func TestCopilotCLIAbort(t *testing.T) {
	res, err := ReadCopilotCLI(genCopilotCLIAbort, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Exchanges[0].Turns[1]
	if tr.Name != "bash" || tr.Text != "(aborted by the user)" || tr.Extra["is_error"] != true {
		t.Errorf("aborted call %+v", tr)
	}
	if got := res.Exchanges[0].Turns; len(got) != 2 {
		t.Errorf("aborted exchange has %d turns, want the prompt and the call", len(got))
	}
}

// A model call that fails ends its step (turn_end) with no message; the
// session.error after it belongs to the exchange, so the turn_end does
// not close it.
func TestCopilotCLIProviderError(t *testing.T) {
	res, err := ReadCopilotCLI(genCopilotCLIAbort, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	ex := res.Exchanges[1]
	if len(ex.Turns) != 2 || ex.Turns[1].Role != exchange.RoleSystem || ex.Turns[1].Text != "400 fixture: the model refused this request" {
		t.Fatalf("failed exchange %+v", ex.Turns)
	}
	data, err := os.ReadFile(genCopilotCLIAbort)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if !bytes.HasPrefix(lines[14], []byte(`{"type":"session.error"`)) || !bytes.HasPrefix(lines[13], []byte(`{"type":"assistant.turn_end"`)) {
		t.Fatalf("line 15 is not the session.error after a turn_end")
	}
	name := filepath.Join(t.TempDir(), "session-state", "s", "events.jsonl")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, bytes.Join(lines[:14], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	open, err := ReadCopilotCLI(name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(open.Exchanges) != 1 {
		t.Errorf("cut after the failed step's turn_end: %d exchanges %q, want only the aborted one", len(open.Exchanges), prompts(open.Exchanges))
	}
}

func thinking(ex *exchange.Exchange) []string {
	var out []string
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleAssistant && t.Extra["thinking"] == true {
			out = append(out, t.Text)
		}
	}
	return out
}

// The reasoning streamed with a chat-completions reply is only the
// message's reasoningText (line 6); an assistant.reasoning event of the
// same text (as other providers write) is the same reasoning, kept once.
func TestCopilotCLIReasoningText(t *testing.T) {
	const want = "The user asks about notes.md; read it, and hello.sh which it names."
	res, err := ReadCopilotCLI(genCopilotCLI, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	ex := res.Exchanges[0]
	if got := thinking(ex); len(got) != 1 || got[0] != want {
		t.Fatalf("thinking %q, want [%q]", got, want)
	}
	if ex.Turns[1].Extra["thinking"] != true || ex.Turns[2].Name != "view" {
		t.Errorf("the reasoning is not between the prompt and the calls it led to: %+v", ex.Turns[:3])
	}

	data, err := os.ReadFile(genCopilotCLI)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	ev := []byte(`{"type":"assistant.reasoning","data":{"reasoningId":"r1","content":"` + want + `"},"id":"r1","timestamp":"2026-12-03T07:48:20.000Z","parentId":null}` + "\n")
	both := bytes.Join(append(append(append([][]byte{}, lines[:5]...), ev), lines[5:]...), nil)
	name := filepath.Join(t.TempDir(), "session-state", "s", "events.jsonl")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, both, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = ReadCopilotCLI(name, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := thinking(res.Exchanges[0]); len(got) != 1 {
		t.Errorf("reasoning event and reasoningText of the same text: thinking %q, want it once", got)
	}
}

// A subagent writes into the same file: its user.message is no prompt, its
// steps follow the task call that launched it, marked with its agentId, and
// its turn_end does not end the main agent's exchange.
func TestCopilotCLISubagent(t *testing.T) {
	data, err := os.ReadFile(genCopilotCLI)
	if err != nil {
		t.Fatal(err)
	}
	agent := genCopilotCLIAgent(t, data)
	res, err := ReadCopilotCLI(genCopilotCLI, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range res.Exchanges {
		if strings.HasPrefix(ex.UserText(), "Count the lines of") {
			t.Fatalf("the subagent's task read as a prompt: %s", ex.ID)
		}
	}
	ex := res.Exchanges[3]
	type turn struct{ role, name, text, agent string }
	var got []turn
	for _, tr := range ex.Turns {
		a, _ := tr.Extra["subagent"].(string)
		got = append(got, turn{tr.Role, tr.Name, strings.SplitN(tr.Text, "\n", 2)[0], a})
	}
	want := []turn{
		{exchange.RoleUser, "", "Have a subagent count the lines of notes.md.", ""},
		{exchange.RoleTool, "task", "4", ""},
		{exchange.RoleTool, "bash", "4", agent},
		{exchange.RoleAssistant, "", "4", agent},
		{exchange.RoleAssistant, "", "The subagent counted 4 lines in notes.md.", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("turns %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("turn %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := ex.Turns[3].Extra["speaker"]; s != "subagent "+agent {
		t.Errorf("subagent reply speaker %v", s)
	}

	// Cut right after the subagent's last assistant.turn_end (line 76):
	// the main agent still waits for the task's result, so its exchange
	// is open.
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := -1
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte(`{"type":"assistant.turn_end"`)) && bytes.Contains(l, []byte(`"agentId":"`+agent+`"`)) {
			cut = i + 1
		}
	}
	if cut != 76 {
		t.Fatalf("the subagent's last turn_end is at line %d, want 76", cut)
	}
	name := filepath.Join(t.TempDir(), "session-state", "s", "events.jsonl")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, bytes.Join(lines[:cut], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	open, err := ReadCopilotCLI(name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(open.Exchanges) != 3 {
		t.Errorf("open read while the subagent has just answered: %d exchanges %q, want 3", len(open.Exchanges), prompts(open.Exchanges))
	}
}

// /undo rewrites events.jsonl: the undone prompt's events are gone, the
// kept ones are written again (re-encoded: "cost":0.0 became "cost":0),
// so the file is no longer a prefix of what it was. An exchange read (and
// stored) before the undo keeps its id and content; the undone one is
// simply not in later reads, and the prompt after the undo is new.
func TestCopilotCLIUndo(t *testing.T) {
	before, err := ReadCopilotCLI(genCopilotCLIBeforeUndo, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ReadCopilotCLI(genCopilotCLITUI, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := prompts(before.Exchanges); len(got) != 2 || got[1] != "Run test.sh please." {
		t.Fatalf("before the undo: %q", got)
	}
	if !bytes.Equal(before.Exchanges[0].Canonical(), after.Exchanges[0].Canonical()) {
		t.Errorf("the kept exchange differs after the rewrite:\n%s\n%s", before.Exchanges[0].Canonical(), after.Exchanges[0].Canonical())
	}
	if before.Exchanges[1].ID == after.Exchanges[1].ID {
		t.Errorf("the prompt after the undo has the undone one's id %s", after.Exchanges[1].ID)
	}
	b, _ := os.ReadFile(genCopilotCLIBeforeUndo)
	a, _ := os.ReadFile(genCopilotCLITUI)
	kept := bytes.Join(bytes.SplitAfter(b, []byte("\n"))[:14], nil) // the first prompt's lines
	if bytes.HasPrefix(a, kept) {
		t.Errorf("the file after the undo starts with the kept lines as they were: not the rewrite this test is about")
	}
}
