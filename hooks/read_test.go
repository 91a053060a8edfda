package hooks

import (
	"bytes"
	"errors"
	"github.com/gitmem/git-mem/internal/shared"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// sharedFixtures is the real-transcript folder of the project checkout; tests
// over it skip when it is absent.
var sharedFixtures = filepath.Join(shared.Dir(), "fixtures")

func sharedFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(sharedFixtures, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared fixture %s not present", p)
	}
	return p
}

func prompts(exs []*exchange.Exchange) []string {
	var out []string
	for _, ex := range exs {
		out = append(out, ex.UserText())
	}
	return out
}

func ids(exs []*exchange.Exchange) []string {
	var out []string
	for _, ex := range exs {
		out = append(out, ex.ID)
	}
	return out
}

func mustValid(t *testing.T, exs []*exchange.Exchange) {
	t.Helper()
	mustValidTime(t, exs, true)
}

// mustValidTime is mustValid for formats that may record no time (Cursor's
// transcripts: the commit then takes the time it is stored).
func mustValidTime(t *testing.T, exs []*exchange.Exchange, timed bool) {
	t.Helper()
	for _, ex := range exs {
		if err := ex.Validate(); err != nil {
			t.Errorf("%s: invalid exchange: %v", ex.ID, err)
		}
		if ex.Agent == "" || ex.Session == "" || ex.ID == "" || timed && ex.Time == "" {
			t.Errorf("%s: missing field: %+v", ex.ID, ex)
		}
		_ = ex.Canonical()
	}
}

// Expected values below were checked by hand against the raw JSON with jq
// (prompt records on the live thread, tool_use inputs, apply_patch headers).
func TestSharedClaudeCode(t *testing.T) {
	tests := []struct {
		file    string
		project string
		ids     []string // prompt record uuid prefixes, in order
		first   []string // each prompt's opening words
		files   map[int][]string
	}{
		{
			file:    "claude-code/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
			project: "project",
			// 8 user inputs in the file; 5270777a and its two follow-ups were
			// rewound; /exit is a local command.
			ids:   []string{"13f97369", "9edc38e6", "ad1515d0", "d3658335"},
			first: []string{"Ok, so there's isn't much", "I actually don't like much", "Ok, so, to be fair", "Fair enough. Can you write"},
		},
		{
			file:    "claude-code/37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl",
			project: "claude-code-log",
			ids:     []string{"72a43a5b", "4f13c0fd", "15a3aab7", "d0902b36", "1e03133b", "c6e2d21c"},
			first:   []string{"Hey Claude, please have a look", "oh, I didn't find", "I'd actually love", "Do we even need", "Oh no, we lost", "could we reuse"},
			files: map[int][]string{
				0: nil,
				// Its Write of test_combined_link.py was refused (is_error).
				1: {"/Users/dain/workspace/claude-code-log/claude_code_log/renderer.py", "/Users/dain/workspace/claude-code-log/claude_code_log/templates/transcript.html", "/Users/dain/workspace/claude-code-log/claude_code_log/templates/components/session_nav_styles.css"},
				4: {"/Users/dain/workspace/claude-code-log/claude_code_log/templates/transcript.html"},
			},
		},
		{
			file:    "claude-code/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
			project: "JSSoundRecorder",
			ids:     []string{"5c623611", "f1630df2", "4838f5cc", "85db6bba", "b5dbbcb2", "d1a5b534"},
			first:   []string{"/init", "OK, so this was just", "I have both Node", "ok, fine, let's do vite", "yes please, and let's", "Let's also Migrate to AudioWorklet"},
			files: map[int][]string{
				0: {"/Users/dain/workspace/JSSoundRecorder/CLAUDE.md"},
				2: nil,
				3: {"/Users/dain/workspace/JSSoundRecorder/package.json", "/Users/dain/workspace/JSSoundRecorder/.gitignore", "/Users/dain/workspace/JSSoundRecorder/CLAUDE.md"},
			},
		},
		{
			file:    "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
			project: "worktrees",
			ids:     []string{"0ae44287", "8f6efec7"},
			first:   []string{"OK, we're going to make a little experiment", "Well, the subagents seem"},
			// The second exchange's only edit is made by its subagent.
			files: map[int][]string{1: {"-experiments/worktrees/.claude/worktrees/agent-a4ca7529/work/research-plan-mode.md"}},
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			path := sharedFile(t, tt.file)
			res, err := ReadClaudeCode(path, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) != 0 {
				t.Errorf("problems: %v", res.Problems)
			}
			mustValid(t, res.Exchanges)
			if len(res.Exchanges) != len(tt.ids) {
				t.Fatalf("got %d exchanges %q, want %d", len(res.Exchanges), prompts(res.Exchanges), len(tt.ids))
			}
			session := strings.TrimSuffix(filepath.Base(path), ".jsonl")
			for i, ex := range res.Exchanges {
				if !strings.HasPrefix(ex.ID, session+"/"+tt.ids[i]) {
					t.Errorf("exchange %d id %s, want prefix %s/%s", i, ex.ID, session, tt.ids[i])
				}
				if !strings.HasPrefix(ex.UserText(), tt.first[i]) {
					t.Errorf("exchange %d starts %.60q, want %q", i, ex.UserText(), tt.first[i])
				}
				if ex.Session != session || ex.Agent != AgentClaudeCode || ex.Project != tt.project {
					t.Errorf("exchange %d: session %q agent %q project %q", i, ex.Session, ex.Agent, ex.Project)
				}
				if want, ok := tt.files[i]; ok {
					if got := FilesTouched(ex); !reflect.DeepEqual(got, want) {
						t.Errorf("exchange %d files %q, want %q", i, got, want)
					}
				}
				for _, turn := range ex.Turns {
					if turn.Role == exchange.RoleTool && len(turn.Text) > MaxToolResultBytes+200 {
						t.Errorf("exchange %d: tool result of %d bytes not cut", i, len(turn.Text))
					}
				}
			}
		})
	}
}

func TestSharedSubagentAttached(t *testing.T) {
	path := sharedFile(t, "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
	res, err := ReadClaudeCode(path, Options{SessionEnded: true})
	if err != nil || len(res.Exchanges) != 2 {
		t.Fatalf("read: %v, %d exchanges", err, len(res.Exchanges))
	}
	turns := res.Exchanges[1].Turns
	launch := -1
	n := 0
	for i, tu := range turns {
		if tu.Extra["subagent"] == "a36efb2a1231c41e2" {
			if launch < 0 {
				launch = i
			}
			n++
		}
	}
	// agent-a36efb2a1231c41e2.jsonl: 10 assistant blocks, 7 of them tool
	// calls, after the task prompt.
	if n != 10 {
		t.Errorf("%d subagent turns, want 10", n)
	}
	if launch < 1 || turns[launch-1].Name != "Agent" {
		t.Errorf("subagent turns do not follow their Agent call (at %d)", launch)
	}
}

func TestSharedCodex(t *testing.T) {
	tests := []struct {
		file  string
		first []string
		files map[int][]string
	}{
		{
			file: "codex/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl",
			first: []string{"Updating a team to assign a lead", "Why do we need stats", "Is this done?", "continue",
				"Can you auto accept", "ok continue", "can you run lint, test", "No teams or leads", "I am not seeing a network request",
				"Ok it is still not working", "Can you run tests, lint", "can you create a pull request", "yes commit the work"},
			files: map[int][]string{
				0: {"apps/spectora-labs/src/domain/teams/services/getTeamsWithStats.ts", "apps/spectora-labs/src/app/api/teams/[id]/route.ts", "apps/spectora-labs/src/app/(protected)/settings/teams/hooks/useTeamWithStats.ts"},
				1: nil,
				6: {"apps/spectora-labs/src/domain/teams/services/getTeamsWithStats.ts"},
				9: {"apps/spectora-labs/src/app/(protected)/settings/teams/hooks/useTeamWithStats.ts"},
			},
		},
		{
			file:  "codex/rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl",
			first: []string{"When I load the dashboard, I see 4 queries", "so prefetching isn't slowing"},
			files: map[int][]string{0: nil, 1: nil},
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			path := sharedFile(t, tt.file)
			res, err := ReadCodex(path, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) != 0 {
				t.Errorf("problems: %v", res.Problems)
			}
			mustValid(t, res.Exchanges)
			if got := prompts(res.Exchanges); len(got) != len(tt.first) {
				t.Fatalf("got %d exchanges %q, want %d", len(got), got, len(tt.first))
			}
			thread := rolloutIDRe().FindStringSubmatch(filepath.Base(path))[1]
			for i, ex := range res.Exchanges {
				if !strings.HasPrefix(ex.UserText(), tt.first[i]) {
					t.Errorf("exchange %d starts %.60q, want %q", i, ex.UserText(), tt.first[i])
				}
				if strings.Contains(ex.UserText(), "# Context from my IDE setup") {
					t.Errorf("exchange %d: IDE context left in the prompt", i)
				}
				if ex.ID != thread+"/"+strconv.Itoa(i+1) || ex.Project != "spectora-labs-monorepo-v2" || ex.Agent != AgentCodex {
					t.Errorf("exchange %d: id %s project %s", i, ex.ID, ex.Project)
				}
				if want, ok := tt.files[i]; ok {
					if got := FilesTouched(ex); !reflect.DeepEqual(got, want) {
						t.Errorf("exchange %d files %q, want %q", i, got, want)
					}
				}
			}
		})
	}
}

func TestSharedAider(t *testing.T) {
	path := sharedFile(t, "aider/.aider.chat.history.md")
	res, err := ReadAider(path, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, res.Exchanges)
	// 9 sessions; #### blocks minus yes/no answers and reply-less slash
	// commands (/add, /ls, /grep, /view, /mv, ... and the !find run).
	if len(res.Exchanges) != 28 {
		t.Errorf("got %d exchanges, want 28: %q", len(res.Exchanges), prompts(res.Exchanges))
	}
	for _, ex := range res.Exchanges {
		if strings.Contains(ex.UserText(), "(Y)es/(N)o") {
			t.Errorf("%s: a yes/no answer became a prompt", ex.ID)
		}
	}
	want := []string{"add a comment at the top of schemas/pipeline_config_schema.ts", "chmod +x ~/AFI_Modular_Repos/*.sh", "sync-afi\naider-afi"}
	for i, w := range want {
		if !strings.HasPrefix(res.Exchanges[i].UserText(), w) {
			t.Errorf("exchange %d starts %.60q, want %q", i, res.Exchanges[i].UserText(), w)
		}
	}
	if got := FilesTouched(res.Exchanges[2]); !reflect.DeepEqual(got, []string{"aider-afi.sh", "sync-afi.sh"}) {
		t.Errorf("files %q", got)
	}
}

// TestGrowingTranscripts feeds every prefix (by lines, ≥ 40 of them) of each
// transcript, as a hook sees a file while the agent writes it: exchanges
// read from a prefix must be exchanges of the full read, byte for byte.
func TestGrowingTranscripts(t *testing.T) {
	type src struct {
		path   string
		format string
		// rewound: prompt ids a later rewind abandons; a prefix may return
		// them (the hook already stored them), the full read does not.
		rewound []string
	}
	var srcs []src
	add := func(glob, format string) {
		m, _ := filepath.Glob(glob)
		for _, p := range m {
			srcs = append(srcs, src{path: p, format: format})
		}
	}
	add("testdata/claude/*.jsonl", FormatClaudeCode)
	add("testdata/codex/*.jsonl", FormatCodex)
	add("testdata/aider/*.md", FormatAider)
	add("testdata/gemini/*.jsonl", FormatGemini)
	add("testdata/qwen-code/generated/projects/*/chats/*.jsonl", FormatQwenCode)
	add("testdata/gemini/generated/tmp/*/chats/*.jsonl", FormatGemini)
	add("testdata/copilot-cli/session-state/*/events.jsonl", FormatCopilotCLI)
	add("testdata/copilot-cli/generated/session-state/*/events.jsonl", FormatCopilotCLI)
	add("testdata/copilot/workspaceStorage/*/chatSessions/*.jsonl", FormatCopilot)
	add("testdata/copilot/real/*/chatSessions/*.jsonl", FormatCopilot)
	add("testdata/cursor/projects/*/agent-transcripts/*.jsonl", FormatCursor)
	add("testdata/cursor/projects/*/agent-transcripts/*/*.jsonl", FormatCursor)
	add("testdata/specstory/*/.specstory/history/*.md", FormatSpecStory)
	add(sharedFixtures+"/claude-code/*.jsonl", FormatClaudeCode)
	add(sharedFixtures+"/codex/*.jsonl", FormatCodex)
	add(sharedFixtures+"/aider/.aider.chat.history.md", FormatAider)
	rewound := map[string][]string{
		"rewind.jsonl": {"b1", "b3"},
		"03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl": {"5270777a-", "12f81cce-", "a17b2091-"},
	}
	for _, s := range srcs {
		s := s
		s.rewound = rewound[filepath.Base(s.path)]
		t.Run(filepath.Base(s.path), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(s.path)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(data, []byte("\n"))
			if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
				lines = lines[:len(lines)-1]
			}
			step := max(1, len(lines)/40)
			// Same folder name: Aider's project (and so its ids) come from it.
			dir := filepath.Join(t.TempDir(), filepath.Base(filepath.Dir(s.path)))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(dir, filepath.Base(s.path))
			// Keep subagent transcripts reachable beside the copy.
			stem := strings.TrimSuffix(s.path, ".jsonl")
			if st, err := os.Stat(stem); err == nil && st.IsDir() {
				if err := os.Symlink(stem, strings.TrimSuffix(name, ".jsonl")); err != nil {
					t.Fatal(err)
				}
			}
			// The full read, from the same place as the prefixes.
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			full, err := ReadFile(name, s.format, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string][]byte{}
			for _, ex := range full.Exchanges {
				byID[ex.ID] = ex.Canonical()
			}
			prefixes := 0
			for n := 1; n <= len(lines); n += step {
				prefix := bytes.Join(lines[:n], nil)
				variants := [][]byte{prefix}
				if n < len(lines) && len(lines[n]) > 2 {
					// The agent is half-way through the next record.
					variants = append(variants, append(append([]byte(nil), prefix...), lines[n][:len(lines[n])/2]...))
				}
				for vi, v := range variants {
					if err := os.WriteFile(name, v, 0o644); err != nil {
						t.Fatal(err)
					}
					res, err := ReadFile(name, s.format, Options{})
					if err != nil {
						t.Fatalf("prefix %d: %v", n, err)
					}
					if s.format != FormatAider && s.format != FormatSpecStory && vi == 1 && (len(res.Problems) == 0 || !strings.Contains(res.Problems[len(res.Problems)-1].Msg, "incomplete last record")) {
						t.Errorf("prefix %d+half: torn last line not reported: %v", n, res.Problems)
					}
					for _, ex := range res.Exchanges {
						want, ok := byID[ex.ID]
						if !ok {
							if isRewound(ex.ID, s.rewound) {
								continue
							}
							t.Errorf("prefix %d (variant %d): exchange %s not in the full read", n, vi, ex.ID)
							continue
						}
						if got := ex.Canonical(); !bytes.Equal(got, want) {
							t.Errorf("prefix %d (variant %d): exchange %s differs from the full read\n got %.300s\nwant %.300s", n, vi, ex.ID, got, want)
						}
					}
				}
				prefixes++
			}
			if prefixes < 40 && len(lines) >= 40 {
				t.Errorf("only %d prefixes", prefixes)
			}
		})
	}
}

func isRewound(id string, rewound []string) bool {
	for _, r := range rewound {
		if strings.Contains(id, "/"+r) {
			return true
		}
	}
	return false
}

func TestClaudeRewind(t *testing.T) {
	res, err := ReadClaudeCode("testdata/claude/rewind.jsonl", Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"first question", "rewritten question", "last question"}
	if got := prompts(res.Exchanges); !reflect.DeepEqual(got, want) {
		t.Errorf("prompts %q, want %q", got, want)
	}
	for _, ex := range res.Exchanges {
		if strings.Contains(ex.Render(), "abandoned") {
			t.Errorf("%s keeps the abandoned branch", ex.ID)
		}
	}
	if res.Exchanges[0].ID != "11111111-1111-4111-8111-111111111111/a1" || res.Exchanges[0].Time != "2026-03-01T10:00:00Z" || res.Exchanges[0].Project != "demo-project" {
		t.Errorf("fields: %+v", res.Exchanges[0])
	}
	// Before the session ends the last exchange may still grow.
	open, _ := ReadClaudeCode("testdata/claude/rewind.jsonl", Options{})
	if len(open.Exchanges) != 2 {
		t.Errorf("open session: %d exchanges, want 2", len(open.Exchanges))
	}
	// The hook's final reply closes it.
	hook, _ := ReadClaudeCode("testdata/claude/rewind.jsonl", Options{LastAssistantMessage: "  last\nanswer "})
	if len(hook.Exchanges) != 3 {
		t.Errorf("with last_assistant_message: %d exchanges, want 3", len(hook.Exchanges))
	}
	other, _ := ReadClaudeCode("testdata/claude/rewind.jsonl", Options{LastAssistantMessage: "something else"})
	if len(other.Exchanges) != 2 {
		t.Errorf("with another last_assistant_message: %d exchanges, want 2", len(other.Exchanges))
	}
}

func TestClaudeParallelTools(t *testing.T) {
	res, err := ReadClaudeCode("testdata/claude/parallel.jsonl", Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 2 {
		t.Fatalf("%d exchanges", len(res.Exchanges))
	}
	ex := res.Exchanges[0]
	var tools []exchange.Turn
	for _, tu := range ex.Turns {
		if tu.Role == exchange.RoleTool {
			tools = append(tools, tu)
		}
	}
	if len(tools) != 2 || tools[0].Name != "Edit" || tools[0].Text != "edited a.go" || tools[1].Name != "Write" || tools[1].Text != "wrote b.go" {
		t.Errorf("tool turns: %+v", tools)
	}
	if got := FilesTouched(ex); !reflect.DeepEqual(got, []string{"/src/a.go", "/src/b.go"}) {
		t.Errorf("files %q", got)
	}
	if strings.Contains(string(ex.Canonical()), "HUGE ORIGINAL FILE") {
		t.Error("toolUseResult copy leaked into the verbatim")
	}
	if !strings.Contains(ex.Render(), "Both files are done.") {
		t.Error("final reply missing")
	}
}

func TestClaudeSubagent(t *testing.T) {
	res, err := ReadClaudeCode("testdata/claude/sub-0001.jsonl", Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 1 {
		t.Fatalf("%d exchanges", len(res.Exchanges))
	}
	var roles []string
	for _, tu := range res.Exchanges[0].Turns {
		r := tu.Role + ":" + tu.Name
		if tu.Extra["subagent"] != nil {
			r += "@" + tu.Extra["subagent"].(string)
		}
		roles = append(roles, r)
	}
	want := []string{"user:", "tool:Agent", "tool:Read@abc123", "assistant:@abc123", "assistant:"}
	if !reflect.DeepEqual(roles, want) {
		t.Errorf("turns %q, want %q", roles, want)
	}
	if res.Exchanges[0].Session != "22222222-2222-4222-8222-222222222222" {
		t.Errorf("session %q", res.Exchanges[0].Session)
	}
}

func TestClaudeBadRecords(t *testing.T) {
	res, err := ReadClaudeCode("testdata/claude/bad.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := prompts(res.Exchanges); !reflect.DeepEqual(got, []string{"question one"}) {
		t.Errorf("prompts %q", got)
	}
	var msgs []string
	for _, p := range res.Problems {
		msgs = append(msgs, p.Error())
	}
	want := []string{
		"testdata/claude/bad.jsonl:2: not JSON",
		"testdata/claude/bad.jsonl:3: unknown record type \"brand-new-record\"",
		"testdata/claude/bad.jsonl:6: incomplete last record",
	}
	if len(msgs) != len(want) {
		t.Fatalf("problems %q", msgs)
	}
	for i := range want {
		if !strings.HasPrefix(msgs[i], want[i]) {
			t.Errorf("problem %q, want prefix %q", msgs[i], want[i])
		}
	}
	var p Problem
	if !errors.As(error(res.Problems[0]), &p) || p.Line != 2 {
		t.Errorf("Problem is not a usable error: %v", p)
	}
}

func TestEmptyAndMissing(t *testing.T) {
	res, err := ReadClaudeCode("testdata/claude/empty.jsonl", Options{SessionEnded: true})
	if err != nil || len(res.Exchanges) != 0 || len(res.Problems) != 0 {
		t.Errorf("empty session: %v %v %v", err, res.Exchanges, res.Problems)
	}
	for _, read := range []func(string, Options) (Result, error){ReadClaudeCode, ReadCodex, ReadAider} {
		_, err := read("testdata/nope.jsonl", Options{})
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "testdata/nope.jsonl") {
			t.Errorf("missing file: %v", err)
		}
	}
	if _, err := ReadFile("testdata/nope.jsonl", "", Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile missing: %v", err)
	}
}

func TestClaudeInjectedContextAndNoise(t *testing.T) {
	res, err := ReadClaudeCode("testdata/claude/context.jsonl", Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"why does the build fail?", `[{"ok": 1}] fix it`, "and add a test"}
	if got := prompts(res.Exchanges); !reflect.DeepEqual(got, want) {
		t.Fatalf("prompts %q, want %q", got, want)
	}
	for _, ex := range res.Exchanges {
		c := string(ex.Canonical())
		for _, bad := range []string{"git-mem-context", "recalled: use retries", "old memory", "memory hit", "Set model to opus", "Caveat", "leaked memory"} {
			if strings.Contains(c, bad) {
				t.Errorf("%s keeps %q", ex.ID, bad)
			}
		}
	}
	if r := res.Exchanges[2].Render(); !strings.Contains(r, "system: <system-reminder>\n\nkeep tests short") {
		t.Errorf("reminder not kept beside the prompt:\n%s", r)
	}
	r := res.Exchanges[1].Render()
	for _, w := range []string{"no more hits", "[git mem context omitted]", "[conversation compacted]", "This session is being continued", "Fixed."} {
		if !strings.Contains(r, w) {
			t.Errorf("render lacks %q:\n%s", w, r)
		}
	}
}

func TestCodexSample(t *testing.T) {
	path := "testdata/codex/rollout-2026-03-06T05-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl"
	res, err := ReadCodex(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// "and run it" is still being answered: not returned.
	if got := prompts(res.Exchanges); !reflect.DeepEqual(got, []string{"fix the app", "now add a test"}) {
		t.Fatalf("prompts %q", got)
	}
	ex := res.Exchanges[0]
	if ex.ID != "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee/1" || ex.Project != "widgets" || ex.Time != "2026-03-06T05:00:01.000Z" {
		t.Errorf("fields %+v", ex)
	}
	if got := FilesTouched(ex); !reflect.DeepEqual(got, []string{"src/app.ts", "src/new.ts"}) {
		t.Errorf("files %q", got)
	}
	r := ex.Render()
	for _, w := range []string{"**Looking at the app**", "Success. Updated the following files", "Fixed the app."} {
		if !strings.Contains(r, w) {
			t.Errorf("render lacks %q", w)
		}
	}
	if strings.Contains(r, "environment_context") || strings.Contains(r, "gAAAA") || strings.Contains(r, "duration_seconds") {
		t.Errorf("injected or encrypted content kept:\n%s", r)
	}
	if got := FilesTouched(res.Exchanges[1]); !reflect.DeepEqual(got, []string{"src/app.test.ts"}) {
		t.Errorf("custom apply_patch files %q", got)
	}
	if res.Exchanges[1].Turns[1].Role != exchange.RoleSystem || !strings.Contains(res.Exchanges[1].Turns[1].Text, "Active file") {
		t.Errorf("IDE context not kept aside: %+v", res.Exchanges[1].Turns)
	}
	// The n-th user_message gives the id, the git-mem-only one included.
	ended, _ := ReadCodex(path, Options{SessionEnded: true})
	if n := len(ended.Exchanges); n != 3 || ended.Exchanges[2].ID != "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee/4" {
		t.Errorf("ended: %q", ids(ended.Exchanges))
	}
	notify, _ := ReadCodex(path, Options{LastAssistantMessage: "Running it now"})
	if len(notify.Exchanges) != 3 {
		t.Errorf("notify close: %q", ids(notify.Exchanges))
	}
}

func TestAiderSample(t *testing.T) {
	res, err := ReadAider("testdata/aider/sample.chat.history.md", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"add a greeting to hello.py", "explain the README\nin two lines"}
	if got := prompts(res.Exchanges); !reflect.DeepEqual(got, want) {
		t.Fatalf("prompts %q, want %q", got, want)
	}
	if got := FilesTouched(res.Exchanges[0]); !reflect.DeepEqual(got, []string{"hello.py"}) {
		t.Errorf("files %q", got)
	}
	if r := res.Exchanges[1].Render(); !strings.Contains(r, "#### Overview") {
		t.Errorf("a heading in the reply was taken for a prompt:\n%s", r)
	}
	start, _ := time.ParseInLocation("2006-01-02 15:04:05", "2026-03-07 14:00:00", time.Local)
	if ex := res.Exchanges[0]; ex.Time != start.Format(time.RFC3339) || ex.Agent != AgentAider || !strings.HasSuffix(ex.ID, "2026-03-07T14:00:00/1") {
		t.Errorf("fields %+v", ex)
	}
	ended, _ := ReadAider("testdata/aider/sample.chat.history.md", Options{SessionEnded: true})
	if got := prompts(ended.Exchanges); len(got) != 3 || got[2] != "what changed?" {
		t.Errorf("ended: %q", got)
	}
}

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.jsonl")
	os.WriteFile(plain, []byte(`{"session":"s","turns":[{"role":"user","text":"hi"}]}`+"\n"), 0o644)
	junk := filepath.Join(dir, "junk.txt")
	os.WriteFile(junk, []byte("hello\n"), 0o644)
	tests := map[string]string{
		"testdata/claude/rewind.jsonl": FormatClaudeCode,
		"testdata/codex/rollout-2026-03-06T05-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl": FormatCodex,
		"testdata/aider/sample.chat.history.md":                                                 FormatAider,
		plain:                                                                                   FormatExchange,
	}
	for p, want := range tests {
		if got, err := Detect(p); got != want || err != nil {
			t.Errorf("Detect(%s) = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := Detect(junk); err == nil || !strings.Contains(err.Error(), "--format") {
		t.Errorf("junk: %v", err)
	}
	if _, err := ReadFile(plain, "", Options{}); err == nil || !strings.Contains(err.Error(), "exchange.ReadJSONL") {
		t.Errorf("exchange format: %v", err)
	}
	if _, err := ReadFile(plain, "zed", Options{}); err == nil {
		t.Error("unknown format accepted")
	}
	if res, err := ReadFile("testdata/claude/rewind.jsonl", "auto", Options{SessionEnded: true}); err != nil || len(res.Exchanges) != 3 {
		t.Errorf("auto: %v", err)
	}
}

func TestClip(t *testing.T) {
	big := strings.Repeat("é", MaxToolResultBytes) // 2 bytes each
	c := clip("HEAD" + big + "TAIL")
	if len(c) > MaxToolResultBytes+100 || !strings.HasPrefix(c, "HEAD") || !strings.HasSuffix(c, "TAIL") || !strings.Contains(c, "bytes cut by git mem") {
		t.Errorf("clip: %d bytes", len(c))
	}
	if !utf8Valid(c) {
		t.Error("clip split a rune")
	}
	if clip("short") != "short" {
		t.Error("short text changed")
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

func TestCutGitMemContext(t *testing.T) {
	tests := map[string]string{
		"<git-mem-context>x</git-mem-context>":                      "",
		"a <git-mem-context id=\"1\">x\ny</git-mem-context> b":      "a  b",
		"before <git-mem-context>never closed":                      "before",
		"no context here":                                           "no context here",
		"<git-mem-contextual>kept</git-mem-contextual>":             "<git-mem-contextual>kept</git-mem-contextual>",
		"<git-mem-context>1</git-mem-context>mid<git-mem-context>2": "mid",
	}
	for in, want := range tests {
		if got := cutGitMemContext(in); got != want {
			t.Errorf("cut(%q) = %q, want %q", in, got, want)
		}
	}
}
