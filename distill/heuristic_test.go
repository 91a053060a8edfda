package distill

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

func ex(turns ...exchange.Turn) *exchange.Exchange {
	return &exchange.Exchange{ID: "x", Project: "Billing API", Turns: turns}
}

func user(s string) exchange.Turn      { return exchange.Turn{Role: "user", Text: s} }
func assistant(s string) exchange.Turn { return exchange.Turn{Role: "assistant", Text: s} }
func tool(name string, input any, out string) exchange.Turn {
	return exchange.Turn{Role: "tool", Name: name, Input: input, Text: out}
}

func TestHeuristicCards(t *testing.T) {
	cases := []struct {
		name        string
		ex          *exchange.Exchange
		coreHas     []string
		coreLacks   []string
		context     string // substring the context must hold
		rooms       []string
		files       []string
		filesSubset bool
	}{
		{
			name: "error line from tool output",
			ex: ex(user("Hi! The tests are failing after the refactor, can you fix them?"),
				tool("run_terminal_cmd", map[string]any{"command": "go test ./..."},
					"ok  \tgithub.com/x/y/a\n--- FAIL: TestRetryBudget (0.00s)\n    retry_test.go:41: got 3 retries, want 5\nFAIL"),
				tool("Edit", map[string]any{"file_path": "internal/retry/budget.go"}, "ok"),
				assistant("Fixed the off-by-one in the retry budget; TestRetryBudget passes now.")),
			coreHas:   []string{"The tests are failing after the refactor", "Fixed the off-by-one", "budget.go"},
			coreLacks: []string{"Hi!"},
			context:   "--- FAIL: TestRetryBudget",
			rooms:     []string{"file:budget", "project:billing_api"},
			files:     []string{"internal/retry/budget.go", "retry_test.go"},
		},
		{
			name: "pasted TypeError in the prompt beats tool output",
			ex: ex(user("I get this when I click save:\n```\nTypeError: Cannot read properties of undefined (reading 'id')\n    at onSave (src/components/Editor.tsx:88:17)\n```"),
				tool("read_file", map[string]any{"path": "src/components/Editor.tsx"}, ""),
				tool("run_terminal_cmd", map[string]any{"command": "npm test"}, "Error: something else entirely"),
				assistant("The handler read `doc.id` before the document loaded. I added a guard in onSave.")),
			coreHas: []string{"I get this when I click save", "TypeError"},
			context: "",
			files:   []string{"src/components/Editor.tsx"},
		},
		{
			name: "rustc error code",
			ex: ex(user("cargo build fails"),
				tool("run_terminal_cmd", map[string]any{"command": "cargo build"},
					"   Compiling app v0.1.0\nerror[E0502]: cannot borrow `v` as mutable because it is also borrowed as immutable\n  --> src/main.rs:4:5"),
				assistant("Moved the push after the last use of the reference; the build succeeds now.")),
			context: "error[E0502]: cannot borrow `v` as mutable",
			files:   []string{"src/main.rs"},
		},
		{
			name: "files from apply_patch and unified diff headers",
			ex: ex(user("rename the helper"),
				tool("apply_patch", "*** Begin Patch\n*** Update File: pkg/util/strings.go\n@@\n-func helper()\n+func trimAll()\n*** End Patch", "Done"),
				tool("shell", map[string]any{"command": "git diff"}, "diff --git a/cmd/main.go b/cmd/main.go\n--- a/cmd/main.go\n+++ b/cmd/main.go\n@@ -1 +1 @@"),
				assistant("Renamed helper to trimAll and updated its caller.")),
			files: []string{"pkg/util/strings.go", "cmd/main.go"},
		},
		{
			name: "injected context block and system reminder stripped",
			ex: ex(user("<git-mem-context source=\"git mem\">\nPast: fixed retryTimeout in middleware.go (abc123)\n</git-mem-context>\n<system-reminder>You are in plan mode.</system-reminder>\nAdd pagination to the invoices endpoint"),
				assistant("Added cursor pagination to the invoices endpoint with a `limit` parameter.")),
			coreHas:   []string{"Add pagination to the invoices endpoint"},
			coreLacks: []string{"git-mem-context", "retryTimeout", "plan mode"},
		},
		{
			name: "rooms normalised",
			ex: &exchange.Exchange{Project: "Auth-Service", Turns: []exchange.Turn{
				user("The RetryTimeout in AuthMiddleware.ts is too short; RetryTimeout should be 30s."),
				tool("Edit", map[string]any{"file_path": "src/AuthMiddleware.ts"}, ""),
				assistant("Raised RetryTimeout to 30s in AuthMiddleware.ts; the RetryTimeout constant is now exported.")}},
			// an identifier is not a concept room (it would be used once);
			// the concept comes from the topic list
			rooms: []string{"file:authmiddleware", "project:auth_service"},
		},
		{
			name: "topic room, no id as a concept",
			ex: &exchange.Exchange{Project: "shop", Turns: []exchange.Turn{
				user("The postgres migration for user 8f3a9c2e1b fails: the table users has no column email"),
				assistant("The migration ran before the schema change; I reordered the migrations and the query works.")}},
			rooms: []string{"concept:database", "project:shop"},
		},
		{
			name: "generic file name takes its directory",
			ex: ex(user("the teams route returns 500"),
				tool("Edit", map[string]any{"file_path": "app/(protected)/teams/[id]/route.ts"}, ""),
				assistant("Fixed the handler.")),
			files: []string{"app/(protected)/teams/[id]/route.ts"},
			rooms: []string{"file:teams_route", "project:billing_api"},
		},
		{
			name:    "short prompt: the reply says what was done",
			ex:      ex(user("continue"), tool("write", map[string]any{"path": "docs/setup.md"}, ""), assistant("Let me finish the docs.\n\nI've documented the setup steps in docs/setup.md.")),
			coreHas: []string{"Continue", "documented the setup steps"},
		},
		{
			name:    "prompt that is only a pasted log",
			ex:      ex(user("src/Foo.cs(12,5): error CS0103: The name 'bar' does not exist in the current context [C:\\src\\Foo.csproj]"), assistant("Declared bar.")),
			coreHas: []string{"error CS0103: The name 'bar' does not exist"},
			files:   []string{"src/Foo.cs"}, filesSubset: true,
		},
	}
	var h Heuristic
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			card, err := h.Distill(context.Background(), c.ex)
			if err != nil {
				t.Fatal(err)
			}
			checkCard(t, c.ex, card)
			for _, s := range c.coreHas {
				if !strings.Contains(card.Core, s) {
					t.Errorf("core %q lacks %q", card.Core, s)
				}
			}
			for _, s := range c.coreLacks {
				if strings.Contains(card.Core, s) {
					t.Errorf("core %q holds %q", card.Core, s)
				}
			}
			if c.context != "" && !strings.Contains(card.Context, c.context) {
				t.Errorf("context %q lacks %q", card.Context, c.context)
			}
			if c.rooms != nil {
				if got := exchange.RoomStrings(card.Rooms); !subset(c.rooms, got) {
					t.Errorf("rooms %v, want %v", got, c.rooms)
				}
			}
			if c.files != nil && !subset(c.files, card.Files) {
				t.Errorf("files %v, want %v", card.Files, c.files)
			}
			if card.Distiller != HeuristicName {
				t.Errorf("distiller %q", card.Distiller)
			}
			again := heuristicCard(c.ex)
			if !reflect.DeepEqual(card, again) {
				t.Errorf("not deterministic:\n%+v\n%+v", card, again)
			}
		})
	}
}

func subset(want, got []string) bool {
	have := map[string]bool{}
	for _, g := range got {
		have[g] = true
	}
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}

func TestPastedErrorIsContextWhenPromptHasProse(t *testing.T) {
	e := ex(user("I get this when I click save, please look:\nTypeError: Cannot read properties of undefined (reading 'id')\nthanks"),
		assistant("Added a guard for the missing document in onSave."))
	c := heuristicCard(e)
	if !strings.HasPrefix(c.Context, "TypeError: Cannot read properties of undefined") {
		t.Errorf("context %q", c.Context)
	}
}

func TestOddInput(t *testing.T) {
	cases := []*exchange.Exchange{
		nil,
		{},
		{Turns: []exchange.Turn{{Role: "user", Text: "   "}}},
		{Turns: []exchange.Turn{{Role: "tool", Name: "Bash", Input: map[string]any{"command": "ls"}}}},
		{Turns: []exchange.Turn{{Role: "user", Text: "```\n\n```"}, {Role: "assistant", Text: "```"}}},
		{Turns: []exchange.Turn{{Role: "user", Text: strings.Repeat("a", 100000)}}},
		{Turns: []exchange.Turn{{Role: "user", Text: "\xff\xfe<system-reminder>never closed"}, {Role: "weird", Text: "?"}}},
		{Turns: []exchange.Turn{{Role: "user", Text: "<git-mem-context>only injected</git-mem-context>"}}},
		{Turns: []exchange.Turn{{Role: "user", Text: "日本語のテキストです。バグを直してください。"}, {Role: "assistant", Text: "修正しました。"}}},
		{Turns: []exchange.Turn{{Role: "user", Text: "x", Extra: map[string]any{"speaker": 3}}}},
		{Turns: []exchange.Turn{{Role: "tool", Input: []any{map[string]any{"path": 7}, nil}}}},
	}
	for i, e := range cases {
		c, err := Heuristic{}.Distill(context.Background(), e)
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if strings.TrimSpace(c.Core) == "" || len(c.Rooms) < 1 || len(c.Rooms) > 3 {
			t.Errorf("case %d: card %+v", i, c)
		}
		for _, r := range c.Rooms {
			if _, err := exchange.ParseRoom(r.String()); err != nil {
				t.Errorf("case %d: %v", i, err)
			}
		}
	}
}

func TestHeuristicHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Heuristic{}).Distill(ctx, ex(user("hi"))); err == nil {
		t.Error("no error on a cancelled context")
	}
}

func TestFilesTouched(t *testing.T) {
	e := ex(
		user("See app/(protected)/teams/[id]/route.ts and README.md, e.g. the v1.2.3 notes at https://example.com/docs/guide.html. Node.js 20 and console.log are not files; call res.json() too."),
		tool("NotebookEdit", map[string]any{"notebook_path": "nb/analysis.ipynb"}, ""),
		tool("Read", map[string]any{"filePath": "./src/app.ts"}, ""),
		tool("Write", map[string]any{"filepath": "scripts/test.sh", "content": "#!/bin/sh"}, ""), // Continue's CLI
		tool("grep", map[string]any{"query": "x"}, "src/app.ts:3: x\nlib/other.go:9: x\ngit@github.com:owner/repo.git"),
		assistant("Updated `src/app.ts` and the Makefile. Version 2.0.1 ships next."),
	)
	got := FilesTouched(e)
	// Order of first appearance: the prompt, the tool inputs, the reply,
	// then paths seen only in tool output.
	want := []string{"app/(protected)/teams/[id]/route.ts", "README.md", "nb/analysis.ipynb", "src/app.ts", "scripts/test.sh", "Makefile", "lib/other.go"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FilesTouched =\n%q\nwant\n%q", got, want)
	}
	if FilesTouched(nil) != nil {
		t.Error("nil exchange")
	}
}

func TestFilesTouchedCap(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("pkg/f" + itoa(i) + ".go\n")
	}
	if n := len(FilesTouched(ex(user(b.String())))); n != MaxFiles {
		t.Errorf("%d files, want the cap %d", n, MaxFiles)
	}
}

func TestConversationCard(t *testing.T) {
	e := &exchange.Exchange{Turns: []exchange.Turn{
		{Role: "user", Text: "I went to a LGBTQ support group yesterday and it was so powerful.", Extra: map[string]any{"speaker": "Caroline"}},
		{Role: "assistant", Text: "Wow, that's cool, Caroline! What happened? I ran a charity race for mental health on 20 May in Boston.", Extra: map[string]any{"speaker": "Melanie"}},
	}}
	c := heuristicCard(e)
	if c.Core != "Caroline: I went to a LGBTQ support group yesterday and it was so powerful." {
		t.Errorf("core %q", c.Core)
	}
	if c.Context != "Melanie: I ran a charity race for mental health on 20 May in Boston." {
		t.Errorf("context %q", c.Context)
	}
	if len(c.Rooms) == 0 {
		t.Error("no rooms")
	}
}

func TestRoomKey(t *testing.T) {
	cases := map[string]string{
		"auth_middleware":     "auth_middleware",
		"auth-middleware":     "auth_middleware",
		"AppDataBatchManager": "app_data_batch_manager",
		"GitHub":              "github",
		"retry timeout":       "retry_timeout",
		"Billing API":         "billing_api",
	}
	for in, want := range cases {
		if got := roomKey(in); got != want {
			t.Errorf("roomKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzHeuristic(f *testing.F) {
	f.Add("fix src/a.go: panic: runtime error", "done (edited a.go)", "*** Update File: x.go")
	f.Add("<git-mem-context>", "```", "+++ b/")
	f.Fuzz(func(t *testing.T, u, a, out string) {
		e := ex(user(u), tool("apply_patch", map[string]any{"path": out, "command": out}, out), assistant(a))
		c, err := Heuristic{}.Distill(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		if c.Core == "" || len(c.Rooms) < 1 || len(c.Rooms) > 3 {
			t.Fatalf("card %+v", c)
		}
	})
}

// TestTrimFiller: a greeting or filler word before the sentence goes; the
// same letters starting a name stay ("hello.sh" was cut to "Sh" in a card).
func TestTrimFiller(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Sure! I fixed the retry test.", "I fixed the retry test."},
		{"Hello, the build passes now.", "the build passes now."},
		{"OK. The cache is cleared.", "The cache is cleared."},
		{"hello.sh is now in scripts/ and prints hi.", "hello.sh is now in scripts/ and prints hi."},
		{"ok-button.tsx renders twice.", "ok-button.tsx renders twice."},
		{"Ok .secrets is live now.", ".secrets is live now."},
		{"okaying the dialog closes it.", "okaying the dialog closes it."},
	} {
		if got := trimFiller(c.in); got != c.want {
			t.Errorf("trimFiller(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestUpperFirst(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"fixed the flaky retry test", "Fixed the flaky retry test"},
		{"go test ./... fails on the cache package", "go test ./... fails on the cache package"},
		{"go ahead and fix the build", "Go ahead and fix the build"},
		{"npm install fails with ERESOLVE", "npm install fails with ERESOLVE"},
		{"make build -j4 hangs", "make build -j4 hangs"},
		{"make the tests pass", "Make the tests pass"},
		{"parseConfig returns nil", "parseConfig returns nil"},
		{"auth_middleware.go panics", "auth_middleware.go panics"},
		{"hello.sh is now in scripts/", "hello.sh is now in scripts/"},
		{"Already capitalised", "Already capitalised"},
		// code and commands keep their case (heuristic/3)
		{"import { z } from 'zod'", "import { z } from 'zod'"},
		{"pwd", "pwd"},
		{"`pwd` prints the wrong folder", "`pwd` prints the wrong folder"},
		{"console.log(x) prints undefined", "console.log(x) prints undefined"},
		{"", ""},
	} {
		if got := upperFirst(c.in); got != c.want {
			t.Errorf("upperFirst(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCleanMarkdownKeepsCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"run chmod +x <dir>/*.sh first", "run chmod +x <dir>/*.sh first"},
		{"delete the name-* branches", "delete the name-* branches"},
		{"**Fixed** the *flaky* test", "Fixed the flaky test"},
		{"use `a_b  *c*` here", "use `a_b  *c*` here"},
		{"✅ Done 🎉", "✅ Done 🎉"},
		{"__init__.py is empty", "__init__.py is empty"},
		{"- [x] **Step 1**: ship", "Step 1: ship"},
	} {
		if got := cleanSpaces(cleanMarkdown(c.in)); got != c.want {
			t.Errorf("cleanMarkdown(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPairTicks(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"write it to `minsky.mdc in the root dir", "write it to minsky.mdc in the root dir"},
		{"run `go test` and `go vet", "run `go test` and go vet"},
		{"run `go test` and `go vet`", "run `go test` and `go vet`"},
		{"no code here", "no code here"},
		{"`", ""},
	} {
		if got := pairTicks(c.in); got != c.want {
			t.Errorf("pairTicks(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSummarySentenceFloorAndStop: the scan stops once no later sentence
// can beat the best (sentence i scores at most maxSummaryScore - i/8), and a
// floor hides sentences that could not win in doneText, without changing
// which sentence wins when one scores above the floor.
func TestSummarySentenceFloorAndStop(t *testing.T) {
	plain := strings.Repeat("The parser reads one input file. ", 16) // 16 sentences scoring 3 - i/8
	for _, c := range []struct {
		name, text string
		floor      int
		want       string
		score      int
	}{
		{"top score first stops the scan", "I've fixed the parser bug today. I've fixed the lexer bug too.", 0,
			"I've fixed the parser bug today.", 9},
		{"a later top score still wins", "The parser reads one input file. I've fixed the lexer bug today.", 0,
			"I've fixed the lexer bug today.", 9},
		{"earlier of equal scores wins", "The parser reads one input file. The lexer reads one input file.", 0,
			"The parser reads one input file.", 3},
		{"the index penalty applies past eight", plain + "I've fixed the lexer bug today.", 0,
			"I've fixed the lexer bug today.", 7},
		{"only a plain reply", plain, 0, "The parser reads one input file.", 3},
		{"floor below the best", "The parser now reads one input file.", 5, "The parser now reads one input file.", 6},
		{"floor equal to the best", "The parser now reads one input file.", 6, "", 6},
		{"floor at the top", "I've fixed the parser bug today.", maxSummaryScore, "", maxSummaryScore},
		{"nothing to pick", "ok", 0, "", 0},
	} {
		got, score := summarySentence(c.text, c.floor)
		if got != c.want || score != c.score {
			t.Errorf("%s: summarySentence(…, %d) = %q, %d; want %q, %d", c.name, c.floor, got, score, c.want, c.score)
		}
	}
}

// TestUnitsStops: units yields what sentenceUnits returns, at most max, and
// nothing after its consumer stops.
func TestUnitsStops(t *testing.T) {
	text := "# Title\n\n- one item here.\n```\ncode. in fence.\n```\nFirst. Second one.\n| a | b |\n3) Third."
	all := sentenceUnits(text, 40)
	want := []unit{{"Title", false, true}, {"one item here.", true, false}, {"First.", false, false},
		{"Second one.", false, false}, {"Third.", true, false}}
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("sentenceUnits = %#v, want %#v", all, want)
	}
	for _, max := range []int{1, 2, 5, 9} {
		if got := sentenceUnits(text, max); !reflect.DeepEqual(got, want[:min(max, len(want))]) {
			t.Errorf("sentenceUnits(max %d) = %#v", max, got)
		}
	}
	for stop := 1; stop <= len(want); stop++ {
		var got []unit
		for u := range units(text, 40) {
			got = append(got, u)
			if len(got) == stop {
				break
			}
		}
		if !reflect.DeepEqual(got, want[:stop]) {
			t.Errorf("units stopped after %d = %#v", stop, got)
		}
	}
}
