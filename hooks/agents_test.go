package hooks

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// agentDirs are the fixture folders of the readers added for issue 16;
// each fixture in them has an entry in the folder's PROVENANCE.json.
// TestFixtureProvenance checks every folder of testdata (but Go's fuzz
// corpus), so a new agent's folder without one fails too.
var agentDirs = []string{"gemini", "qwen-code", "cline", "roo-code", "continue", "specstory", "cursor", "copilot", "copilot-cli", "opencode"}

// fixtureDirs are the folders of testdata that hold fixtures: all but
// fuzz (the corpus go test -fuzz keeps).
func fixtureDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "fuzz" {
			dirs = append(dirs, e.Name())
		}
	}
	for _, d := range agentDirs {
		if !slices.Contains(dirs, d) {
			t.Errorf("testdata/%s is gone", d)
		}
	}
	return dirs
}

type provenance struct {
	Synthetic   bool   `json:"synthetic"`
	Repository  string `json:"repository"`
	Commit      string `json:"commit"`
	Path        string `json:"path"`
	License     string `json:"license"`
	WrittenFrom string `json:"written_from"`
	// Generated: the file was written by the agent itself (the released
	// package, run by a script in the project against a scripted model
	// server on localhost), not by hand: real in format, made up in content.
	Generated *struct {
		Agent   string `json:"agent"`   // e.g. "Gemini CLI 0.61.0 (npm package @google/gemini-cli)"
		Script  string `json:"script"`  // path in this repository that regenerates it
		License string `json:"license"` // the agent's license
	} `json:"generated"`
}

func TestFixtureProvenance(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		b, err := os.ReadFile(filepath.Join("testdata", dir, "PROVENANCE.json"))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		var prov map[string]provenance
		if err := json.Unmarshal(b, &prov); err != nil {
			t.Errorf("%s/PROVENANCE.json: %v", dir, err)
			continue
		}
		var files []string
		root := filepath.Join("testdata", dir)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		for _, f := range files {
			name, _ := filepath.Rel(root, f)
			name = filepath.ToSlash(name)
			if name == "PROVENANCE.json" {
				continue
			}
			p, ok := prov[name]
			switch {
			case !ok:
				t.Errorf("%s: fixture without provenance", f)
			case p.Synthetic && p.WrittenFrom == "":
				t.Errorf("%s: synthetic fixture does not say what it was written from", f)
			case p.Generated != nil:
				g := p.Generated
				if p.Synthetic || g.Agent == "" || g.License == "" || g.Script == "" {
					t.Errorf("%s: a generated fixture needs agent, license and script, and is not synthetic: %+v", f, *g)
				} else if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(g.Script))); err != nil {
					t.Errorf("%s: the script that generates it: %v", f, err)
				}
			case !p.Synthetic && (p.Repository == "" || len(p.Commit) != 40 || p.Path == "" || p.License == ""):
				t.Errorf("%s: provenance needs repository, commit, path and license: %+v", f, p)
			}
		}
	}
}

// agentCase is one fixture with the numbers counted by hand from the file.
type agentCase struct {
	format, file string
	exchanges    int // exchanges of the ended session
	open         int // exchanges returned while the session may still run
	prompts      []string
	toolCalls    int
	files        []string // FilesTouched over all exchanges, in order
	// arrayPath is where a whole-document format keeps its messages, for
	// the growth test (nil: a line format, grown by lines in
	// TestGrowingTranscripts).
	arrayPath []string
	// markdown: any line is valid, so there is no corrupt record to report.
	markdown bool
	// untimed: the format records no time.
	untimed bool
	// ended: a file beside the fixture (a manifest) says the session is
	// over, so the open read gives every exchange; the growth test copies
	// the fixture alone and still stores open.
	ended bool
	// store: a database or a tree of files (OpenCode's), not one
	// document or lines; its own tests grow it a message at a time and
	// break a record (TestAgentCorrupt skips it).
	store bool
}

var agentCases = []agentCase{
	{
		// Legacy JSON: messages[] of 11; type user at [0] and [9] (2
		// prompts); toolCalls arrays of [1..7] hold 1,2,1,1,1,1,1 = 8
		// calls; the only edit is the replace at [6] (file_path below).
		format: FormatGemini, file: "testdata/gemini/session-2025-12-30T07-44-a1c91f1a.json",
		exchanges: 2, open: 1,
		prompts:   []string{"fix the gemini web app link", "nope that just created a link"},
		toolCalls: 8,
		files:     []string{"/home/mischa/.local/share/applications/chrome-gdfaincndogidkdcdkhapmbffkckdkhn-Default.desktop"},
		arrayPath: []string{"messages"},
	},
	{
		// Cline, XML tools: prompts are the <task> of message 0, the
		// <feedback> of 8 and the <answer> of 12; calls read_file,
		// replace_in_file, execute_command, attempt_completion |
		// replace_in_file (denied), ask_followup_question |
		// replace_in_file, attempt_completion = 8; the denied edit
		// touched nothing. attempt_completion closes an exchange, so the
		// open task already gives all 3.
		format: FormatCline, file: "testdata/cline/1767080000000/api_conversation_history.json",
		exchanges: 3, open: 3,
		prompts:   []string{"slugify() keeps accents", "also collapse repeated dashes", "after trimming"},
		toolCalls: 8,
		files:     []string{"src/slug.ts", "src/slug.ts"},
		arrayPath: []string{},
	},
	{
		// Cline SDK session, real (cline/cline's own test fixture,
		// Apache-2.0): messages 0, 6, 10, 22 and 30 are user text (5
		// prompts; 0 also attaches the file it names); the others are
		// tool results and replies. tool_use blocks: editor, read_files |
		// editor | run_commands, read_files ×3, editor | read_files,
		// editor, read_files | none = 11; every editor call edits
		// agent-sidebar.tsx (once in each of the first four exchanges).
		// The manifest beside it says status completed: the open read
		// gives all 5.
		format: FormatCline, file: "testdata/cline/sessions/1784094124598_rruoq/1784094124598_rruoq.messages.json",
		exchanges: 5, open: 4, ended: true,
		prompts:   []string{"can you update @apps/examples/desktop-app/webview/components/agent-sidebar.tsx so that the filter icon comes after", "can you make the filter icon smaller?", "awesome! the Sessions button has a space", "can you also rmove that spacing", "hello"},
		toolCalls: 11,
		files: []string{
			"/Users/example/dev/cline/apps/examples/desktop-app/webview/components/agent-sidebar.tsx",
			"/Users/example/dev/cline/apps/examples/desktop-app/webview/components/agent-sidebar.tsx",
			"/Users/example/dev/cline/apps/examples/desktop-app/webview/components/agent-sidebar.tsx",
			"/Users/example/dev/cline/apps/examples/desktop-app/webview/components/agent-sidebar.tsx",
		},
		arrayPath: []string{"messages"},
	},
	{
		// Roo Code, native tools: the <task> of message 0 and the
		// <feedback> inside the tool_result of 6; calls read_file,
		// apply_diff, attempt_completion | apply_diff = 4.
		format: FormatCline, file: "testdata/roo-code/0199e0c1-7a2b-7c3d-8e4f-5a6b7c8d9e0f/api_conversation_history.json",
		exchanges: 2, open: 1,
		prompts:   []string{"Add a --json flag to the stats command", "name the flag --format json instead"},
		toolCalls: 4,
		files:     []string{"cmd/stats.go", "cmd/stats.go"},
		arrayPath: []string{},
	},
	{
		// Continue, synthetic: the main Continue case is the generated CLI
		// fixture (generated_continue_test.go); this one stays for the IDE
		// extension's shape, which the CLI does not write (parts content,
		// contextItems, thinking, role tool items, a canceled call).
		// History items 0, 7 and 10 are user messages (7's
		// git-mem-context is cut; 10, "thanks", has no reply yet); calls
		// read_file, edit_existing_file | create_new_file,
		// run_terminal_command (canceled) = 4.
		format: FormatContinue, file: "testdata/continue/sessions/3b0f6c1e-2d4a-4e8b-9c7d-1a2b3c4d5e6f.json",
		exchanges: 3, open: 2,
		prompts:   []string{"Add retries with exponential backoff", "now cap the wait at 2 s", "thanks"},
		toolCalls: 4,
		files:     []string{"src/http.ts", "src/http.test.ts"},
		arrayPath: []string{"history"},
	},
	{
		// Continue, real (oleg121203/Developer, Apache-2.0; a build
		// without tools): history 0 user, 1 assistant, 2 user, 3
		// assistant. Each prompt is a code excerpt the editor attached
		// ("```py model.py (4-10)") and the question after it; no tool
		// calls, no edits. The last exchange has no end marker: open.
		// Times come from the sessions.json index beside it.
		format: FormatContinue, file: "testdata/continue/real/sessions/7bc6e275-126c-4a65-ab0a-0607c64789f9.json",
		exchanges: 2, open: 1,
		prompts:   []string{"```py model.py (4-10)\nfrom pathlib import Path", "```py model.py (74-80)\n"},
		toolCalls: 0,
		arrayPath: []string{"history"},
	},
	{
		// SpecStory (Markdown v2.0.0, Claude Code), real: _**User**_
		// headers at lines 7, 407, 503, 576, 678; <tool-use> blocks Read,
		// mcp__task-master__get_tasks | - | - | - | TodoWrite, Read, Edit,
		// Edit, Edit, TodoWrite, Bash = 9; the three Edits all update
		// future_development.md ("The file … has been updated").
		format: FormatSpecStory, file: "testdata/specstory/MunsellSpace/.specstory/history/2025-12-06_19-04-39Z-hello-claude-we-have.md",
		exchanges: 5, open: 4,
		prompts:   []string{"Hello Claude, we have successfully worked", "Very good. You are listing five", "Ok you gave me an idea", "For 3 given that we start", "Yes please, add/amend the future"},
		toolCalls: 9,
		files:     []string{"/Users/chris/dev/projects/libraries/MunsellSpace/future_development.md"},
		markdown:  true,
	},
	{
		// Copilot Chat: 3 requests; calls copilot_readFile + the edit of
		// DatePicker.tsx | the edit of format.ts + copilot_runInTerminal
		// (declined) | none = 4. The third has no result yet: open.
		format: FormatCopilot, file: "testdata/copilot/workspaceStorage/ab12cd/chatSessions/c0ffee00-1234-4abc-9def-0123456789ab.json",
		exchanges: 3, open: 2,
		prompts:   []string{"why does the date picker show UTC", "also format it as YYYY-MM-DD", "thanks"},
		toolCalls: 4,
		files:     []string{"/nonexistent/calendar/src/DatePicker.tsx", "/nonexistent/calendar/src/format.ts"},
		arrayPath: []string{"requests"},
	},
	{
		// Copilot Chat, real (git-ai-project/git-ai, Apache-2.0): 3
		// requests, each with its result. Calls: none | copilot_replaceString
		// + the textEditGroup of index.ts | copilot_findTextInFiles = 3
		// (prepareToolInvocation parts are announcements, not calls).
		format: FormatCopilot, file: "testdata/copilot/real/gitai01/chatSessions/331fed7f-cfd6-409c-8502-06a56322b636.json",
		exchanges: 3, open: 3,
		prompts:   []string{"What can you help me with?", "Change Bonjour World to hello world", "Search for any other mentions of Bonjour"},
		toolCalls: 3,
		files:     []string{"/Users/svarlamov/projects/testing-git/index.ts"},
		arrayPath: []string{"requests"},
	},
	{
		// Copilot Chat mutation log, real (git-ai-project/git-ai): line 1
		// the chat with one request, 2-3 and 5-6 input box edits, 4 the
		// second request pushed; both have modelState 1 (complete), so
		// even a live read gives both. Calls: copilot_readFile,
		// copilot_insertEdit, vscode_editFile_internal + the
		// textEditGroup of jokes.csv | none = 4.
		format: FormatCopilot, file: "testdata/copilot/real/gitai01/chatSessions/7de89a80-6d93-43e7-be0a-0a9afe980198.jsonl",
		exchanges: 2, open: 2,
		prompts:   []string{"Add a joke about 7sadfh32u23gdaWF to jokes.csv", "follow up message"},
		toolCalls: 4,
		files:     []string{"/Users/svarlamov/projects/testing-git/jokes.csv"},
	},
	{
		// Cursor transcript, real (git-ai-project/git-ai): one user line
		// (1), assistant lines 2-11 with tool_use Read, WebSearch |
		// WebFetch | Read | Read | WebSearch | Grep | WebSearch | Write |
		// WebSearch = 10; the Write creates hbo-shows-1990s.txt. No
		// turn_ended line: open while the session may run.
		format: FormatCursor, file: "testdata/cursor/projects/Users-aidancunniffe-Desktop-testing-gitflows-git-ai/agent-transcripts/cursor-session-simple.jsonl",
		exchanges: 1, open: 0,
		prompts:   []string{"Generate a file with all the HBO shows from the 90's in it"},
		toolCalls: 10,
		files:     []string{"/Users/aidancunniffe/Desktop/testing-gitflows-git-ai/hbo-shows-1990s.txt"},
		untimed:   true,
	},
	{
		// Copilot Chat mutation log (synthetic): requests pushed at lines
		// 2 (a1), 8 (b1), 14 (c1, cut away by line 16's push with i 2,
		// which puts c2 in its place) and 20 (d1): 4 prompts, b1's after
		// its git-mem-context block. Calls copilot_readFile + the
		// textEditGroup of todos.ts | copilot_runInTerminal |
		// copilot_replaceString (declined: ConfirmedReason type 0) = 4;
		// c1's edit of db.ts is gone with c1. d1's modelState stays 0
		// (pending): open.
		format: FormatCopilot, file: "testdata/copilot/workspaceStorage/ef34gh/chatSessions/5f1e2d3c-4b5a-4c6d-8e7f-90a1b2c3d4e5.jsonl",
		exchanges: 4, open: 3,
		prompts:   []string{"the /todos endpoint returns items in random order", "run the tests", "also sort by title when the dates are equal", "thanks"},
		toolCalls: 4,
		files:     []string{"/nonexistent/todo-api/src/routes/todos.ts"},
	},
	{
		// Copilot CLI (synthetic): user.message events e04, e19, e28, e33
		// (4 prompts). Calls: view, edit | bash (failed) | create
		// (aborted by e32: failed) | create = 5. Edits that touched a
		// file: edit of balance.ts (e12), create of CHANGELOG.md (e35;
		// the aborted one of e30 did not). The last exchange has no
		// assistant.turn_end after its tool ran: open.
		format: FormatCopilotCLI, file: "testdata/copilot-cli/session-state/5e7a3c1d-8b2f-4d6a-9c0e-1f2a3b4c5d6e/events.jsonl",
		exchanges: 4, open: 3,
		prompts:   []string{"The /balance endpoint returns 500", "run the tests", "yes, and create a CHANGELOG entry", "only the CHANGELOG for now"},
		toolCalls: 5,
		files:     []string{"/home/dev/src/ledger-api/src/balance.ts", "/home/dev/src/ledger-api/CHANGELOG.md"},
	},
	{
		// Cursor transcript (synthetic): role user lines 1, 6, 10 (3
		// prompts); tool_use blocks Read, StrReplace | Write, Shell |
		// Delete = 5; StrReplace, Write and Delete touch their path. No
		// turn_ended after line 11: the last exchange is open.
		format: FormatCursor, file: "testdata/cursor/projects/home-dev-src-notes/agent-transcripts/3f2e1d0c-aaaa-4bbb-8ccc-0123456789ab/3f2e1d0c-aaaa-4bbb-8ccc-0123456789ab.jsonl",
		exchanges: 3, open: 2,
		prompts:   []string{"the notes search ignores case", "add a test and run it", "now remove the old ascii helper"},
		toolCalls: 5,
		files:     []string{"/home/dev/src/notes/src/search.ts", "/home/dev/src/notes/src/search.test.ts", "/home/dev/src/notes/src/ascii.ts"},
		untimed:   true,
	},
	{
		// JSON Lines: u-1, u-2, u-3 (rewound away by $rewindTo), u-4 → 3
		// prompts; calls read_file, replace | write_file, run_shell_command
		// (cancelled) | none = 4; edits replace src/export.ts, write_file
		// src/export.test.ts.
		format: FormatGemini, file: "testdata/gemini/session-2026-03-01T10-00-7c1e0d2a.jsonl",
		exchanges: 3, open: 2,
		prompts:   []string{"The CSV export drops the header row", "Now add a test for the header", "also export as TSV, with a --tsv flag"},
		toolCalls: 4,
		files:     []string{"src/export.ts", "src/export.test.ts"},
	},
}

func countTools(exs []*exchange.Exchange) int {
	n := 0
	for _, ex := range exs {
		for _, t := range ex.Turns {
			if t.Role == exchange.RoleTool && t.Name != "" {
				n++
			}
		}
	}
	return n
}

func TestAgentFixtures(t *testing.T) {
	for _, c := range agentCases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			if f, err := Detect(c.file); err != nil || f != c.format {
				t.Errorf("Detect = %q, %v; want %s", f, err, c.format)
			}
			res, err := ReadFile(c.file, c.format, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) != 0 {
				t.Errorf("problems: %v", res.Problems)
			}
			mustValidTime(t, res.Exchanges, !c.untimed)
			if len(res.Exchanges) != c.exchanges {
				t.Fatalf("got %d exchanges %q, want %d", len(res.Exchanges), prompts(res.Exchanges), c.exchanges)
			}
			for i, p := range c.prompts {
				if got := res.Exchanges[i].UserText(); !strings.HasPrefix(got, p) {
					t.Errorf("prompt %d = %.60q, want %q…", i, got, p)
				}
				if strings.Contains(res.Exchanges[i].UserText(), "git-mem-context") {
					t.Errorf("prompt %d keeps git mem's own context", i)
				}
			}
			if n := countTools(res.Exchanges); n != c.toolCalls {
				t.Errorf("got %d tool calls, want %d", n, c.toolCalls)
			}
			var files []string
			for _, ex := range res.Exchanges {
				files = append(files, FilesTouched(ex)...)
			}
			if !reflect.DeepEqual(files, c.files) {
				t.Errorf("files touched %q, want %q", files, c.files)
			}
			open, err := ReadFile(c.file, c.format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			wantOpen := c.open
			if c.ended {
				wantOpen = c.exchanges
			}
			if len(open.Exchanges) != wantOpen {
				t.Errorf("open session: %d exchanges, want %d", len(open.Exchanges), wantOpen)
			}
			// The same file read again gives the same ids and bytes.
			again, _ := ReadFile(c.file, c.format, Options{SessionEnded: true})
			for i := range again.Exchanges {
				if !bytes.Equal(again.Exchanges[i].Canonical(), res.Exchanges[i].Canonical()) {
					t.Errorf("exchange %s differs on a second read", res.Exchanges[i].ID)
				}
			}
		})
	}
}

// truncateArray returns the document with the array at path cut to its
// first n elements: the same session, earlier.
func truncateArray(t *testing.T, data []byte, path []string, n int) []byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(path) == 0 {
		return mustJSON(t, doc.([]any)[:n])
	}
	obj := doc.(map[string]any)
	for _, k := range path[:len(path)-1] {
		obj = obj[k].(map[string]any)
	}
	k := path[len(path)-1]
	obj[k] = obj[k].([]any)[:n]
	return mustJSON(t, doc)
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgentGrowth: a document format rewritten as the session grows gives,
// at every earlier length, only exchanges of the full read, byte for byte;
// the longer copy adds exactly the new ones.
func TestAgentGrowth(t *testing.T) {
	for _, c := range agentCases {
		if c.arrayPath == nil {
			continue // JSON Lines: TestGrowingTranscripts
		}
		c := c
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			data, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			// Same folder names: Cline's task id and agent come from them.
			name := filepath.Join(t.TempDir(), c.file)
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			// The full read from the same place as the shorter copies.
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			full, err := ReadFile(name, c.format, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string][]byte{}
			for _, ex := range full.Exchanges {
				byID[ex.ID] = ex.Canonical()
			}
			elems, err := arrayAt(data, c.arrayPath...)
			if err != nil {
				t.Fatal(err)
			}
			stored := map[string]bool{}
			for n := 0; n <= len(elems); n++ {
				if err := os.WriteFile(name, truncateArray(t, data, c.arrayPath, n), 0o644); err != nil {
					t.Fatal(err)
				}
				res, err := ReadFile(name, c.format, Options{})
				if err != nil {
					t.Fatalf("length %d: %v", n, err)
				}
				for _, ex := range res.Exchanges {
					want, ok := byID[ex.ID]
					if !ok || !bytes.Equal(ex.Canonical(), want) {
						t.Errorf("length %d: exchange %s is not the full read's", n, ex.ID)
					}
					stored[ex.ID] = true
				}
			}
			if len(stored) != c.open {
				t.Errorf("growing reads stored %d exchanges, want %d (the last one waits for the session's end)", len(stored), c.open)
			}
		})
	}
}

// TestAgentCorrupt: a document cut off or broken in the middle is reported
// at its line and yields nothing; a message of the wrong shape is reported
// at its line and the rest is read.
func TestAgentCorrupt(t *testing.T) {
	for _, c := range agentCases {
		if c.markdown || c.store {
			continue
		}
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			data, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(t.TempDir(), c.file)
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(data, []byte("\n"))
			mid := len(lines) / 2
			broken := bytes.Join(append(append(append([][]byte{}, lines[:mid]...), []byte("}}} not json {{{\n")), lines[mid:]...), nil)
			if err := os.WriteFile(name, broken, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := ReadFile(name, c.format, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) == 0 || res.Problems[0].Line != mid+1 || !strings.HasPrefix(res.Problems[0].Error(), name+":") {
				t.Fatalf("problems %v, want one at line %d", res.Problems, mid+1)
			}
			if c.arrayPath == nil && len(res.Exchanges) == 0 {
				t.Errorf("JSON Lines: the good records around a bad line are still read")
			}
		})
	}
}

// TestAgentBadMessage: one message of the wrong shape is reported at the
// line it starts on; the other messages are still read.
func TestAgentBadMessage(t *testing.T) {
	src := "testdata/roo-code/0199e0c1-7a2b-7c3d-8e4f-5a6b7c8d9e0f/api_conversation_history.json"
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	if err := json.Unmarshal(b, &msgs); err != nil {
		t.Fatal(err)
	}
	msgs[4]["content"] = 5 // the result of the first apply_diff
	data := mustJSON(t, msgs)
	name := filepath.Join(t.TempDir(), "roo-code", "task", "api_conversation_history.json")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadCline(name, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if len(res.Problems) != 1 || res.Problems[0].Line < 2 || strings.TrimSpace(lines[res.Problems[0].Line-1]) != "{" {
		t.Fatalf("problems %v", res.Problems)
	}
	// Element 4 (0-based) starts on the 5th line that opens a top-level
	// element ("  {" as MarshalIndent writes it).
	n := 0
	for i, l := range lines {
		if l == "  {" {
			n++
			if n == 5 && i+1 != res.Problems[0].Line {
				t.Errorf("problem at line %d, element 4 starts at %d", res.Problems[0].Line, i+1)
			}
		}
	}
	if len(res.Exchanges) != 2 {
		t.Errorf("got %d exchanges, want 2", len(res.Exchanges))
	}
}

// fuzzFile fuzzes a reader of files: each input is written as name in a
// folder laid out as the agent lays it out (dirs), then read.
func fuzzFile(f *testing.F, seeds []string, dirs []string, name string, read func(string, Options) (Result, error)) {
	for _, s := range seeds {
		seedFuzz(f, s, "")
	}
	dir := filepath.Join(append([]string{f.TempDir()}, dirs...)...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	p := filepath.Join(dir, name)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		checkReader(t, p, func(opt Options) (Result, error) { return read(p, opt) })
	})
}

func FuzzGemini(f *testing.F) {
	fuzzFile(f, []string{"testdata/gemini/session-*", "testdata/gemini/generated/tmp/*/chats/session-*"}, []string{"chats"}, "fuzz.json", ReadGemini)
}

func FuzzCline(f *testing.F) {
	fuzzFile(f, []string{"testdata/cline/*/*.json", "testdata/roo-code/*/*.json"}, []string{"1767080000000"}, "fuzz.json", ReadCline)
}

func FuzzClineSession(f *testing.F) {
	fuzzFile(f, []string{"testdata/cline/sessions/*/*.messages.json", "testdata/cline/compacted/*/*/*.messages.json"}, []string{"sessions", "s1"}, "s1.messages.json", ReadCline)
}

func FuzzContinue(f *testing.F) {
	fuzzFile(f, []string{"testdata/continue/sessions/*.json", "testdata/continue/real/sessions/*.json", "testdata/continue/generated/sessions/*.json"}, []string{"sessions"}, "fuzz.json", ReadContinue)
}

func FuzzSpecStory(f *testing.F) {
	fuzzFile(f, []string{"testdata/specstory/*/.specstory/history/*.md"}, []string{".specstory", "history"}, "fuzz.md", ReadSpecStory)
}

func FuzzCursorTranscript(f *testing.F) {
	fuzzFile(f, []string{"testdata/cursor/projects/*/agent-transcripts/*/*.jsonl", "testdata/cursor/projects/*/agent-transcripts/*.jsonl"}, []string{"agent-transcripts", "fuzz"}, "fuzz.jsonl", ReadCursorTranscript)
}

func FuzzCopilotCLI(f *testing.F) {
	fuzzFile(f, []string{"testdata/copilot-cli/session-state/*/events.jsonl", "testdata/copilot-cli/generated/session-state/*/events.jsonl"}, []string{"session-state", "fuzz"}, "events.jsonl", ReadCopilotCLI)
}

func FuzzCopilot(f *testing.F) {
	fuzzFile(f, []string{"testdata/copilot/workspaceStorage/*/chatSessions/*.json", "testdata/copilot/real/*/chatSessions/*.json"}, []string{"chatSessions"}, "fuzz.json", ReadCopilot)
}

func FuzzCopilotLog(f *testing.F) {
	fuzzFile(f, []string{"testdata/copilot/workspaceStorage/*/chatSessions/*.jsonl", "testdata/copilot/real/*/chatSessions/*.jsonl"}, []string{"chatSessions"}, "fuzz.jsonl", ReadCopilot)
}

func TestCursorSlugPath(t *testing.T) {
	root := t.TempDir()
	want := filepath.Join(root, "src", "my-app")
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "src", "my"), 0o755) // a decoy: my/app does not exist
	slug := strings.ReplaceAll(strings.TrimPrefix(want, string(filepath.Separator)), string(filepath.Separator), "-")
	if got := cursorSlugPath(slug); got != want {
		t.Errorf("cursorSlugPath(%q) = %q, want %q", slug, got, want)
	}
	if got := cursorSlugPath(slug + "-gone"); got != "" {
		t.Errorf("a folder that is not there: %q", got)
	}
	p := filepath.Join("x", ".cursor", "projects", slug, "agent-transcripts", "c1", "c1.jsonl")
	if got := cursorSlug(p); got != slug {
		t.Errorf("cursorSlug = %q", got)
	}
}

// TestClineSessionCompacted: Cline's SDK compacts a session by rewriting
// its messages file (cline/cline's fixtures of the same real session after
// a basic and an agentic compaction). The compacted files give no exchange
// the full file does not (ids survive compaction, so nothing is stored
// twice), and the compaction's summary and notices are not prompts.
func TestClineSessionCompacted(t *testing.T) {
	full, err := ReadCline("testdata/cline/sessions/1784094124598_rruoq/1784094124598_rruoq.messages.json", Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	prompt := map[string]string{}
	for _, ex := range full.Exchanges {
		prompt[ex.ID] = ex.UserText()
	}
	for _, c := range []struct {
		kind string
		ids  []string
	}{
		// basic: the five prompts kept, each with a <SYSTEM_NOTICE>
		// block, and the last reply of each.
		{"basic", []string{"msg_mr9sjimy_1", "msg_mr9soyef_1", "msg_mr9sqnuq_1", "msg_mr9szmu2_2q", "msg_mrb7vknq_4n"}},
		// agentic: a compaction_summary user message, then "hello".
		{"agentic", []string{"msg_mrb7vknq_4n"}},
	} {
		res, err := ReadCline(filepath.Join("testdata/cline/compacted", c.kind, "1784094124598_rruoq/1784094124598_rruoq.messages.json"), Options{SessionEnded: true})
		if err != nil || len(res.Problems) != 0 {
			t.Fatalf("%s: %v %v", c.kind, err, res.Problems)
		}
		var ids []string
		for _, ex := range res.Exchanges {
			ids = append(ids, strings.TrimPrefix(ex.ID, "cline:1784094124598_rruoq/"))
			want, ok := prompt[ex.ID]
			if !ok {
				t.Errorf("%s: exchange %s is not in the full session", c.kind, ex.ID)
			}
			if got := ex.UserText(); got != want || strings.Contains(got, "SYSTEM_NOTICE") || strings.Contains(got, "Context summary") {
				t.Errorf("%s: %s prompt %.80q, want %.80q", c.kind, ex.ID, got, want)
			}
		}
		if !reflect.DeepEqual(ids, c.ids) {
			t.Errorf("%s: ids %v, want %v", c.kind, ids, c.ids)
		}
	}
}

// TestClineSessionOps: an SDK tool's result is a list of operations, stored
// as the list or as its JSON text; a failed edit (every operation failed)
// touches nothing.
func TestClineSessionOps(t *testing.T) {
	for _, c := range []struct {
		raw    string
		text   string
		failed bool
	}{
		{`[{"query":"a.go","result":"1 | x","success":true}]`, "a.go\n1 | x", false},
		{`"{\"query\":\"edit:a.go\",\"result\":\"Edited a.go\",\"success\":true}"`, "edit:a.go\nEdited a.go", false},
		{`"{\"query\":\"edit:a.go\",\"result\":null,\"error\":\"old_text not found\",\"success\":false}"`, "edit:a.go\nError: old_text not found", true},
		{`[{"query":"a","result":"ok","success":true},{"query":"b","error":"gone","success":false}]`, "a\nok\n\nb\nError: gone", false},
		{`[{"type":"text","text":"plain"}]`, "plain", false},
		{`"just text"`, "just text", false},
	} {
		text, failed := clineOpsText(json.RawMessage(c.raw))
		if text != c.text || failed != c.failed {
			t.Errorf("%s: %q %v, want %q %v", c.raw, text, failed, c.text, c.failed)
		}
	}
}
