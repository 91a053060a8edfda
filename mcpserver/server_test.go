package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/mcpserver"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/recall"
	"github.com/gitmem/git-mem/tokens"
)

// TestMain lets the test binary serve MCP over its own stdio as a
// subprocess, the way Claude Code and Codex start `git mem mcp`, without
// building the CLI inside the test.
func TestMain(m *testing.M) {
	if dir := os.Getenv("MCPSERVER_TEST_SERVE"); dir != "" {
		mem, err := memory.Open(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
		if err := mcpserver.New(mem, "test").Run(context.Background(), mcpserver.StdioTransport()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// demoMemory is a temporary memory holding testdata/exchanges.jsonl.
func demoMemory(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mem.git")
	m, _, err := memory.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../testdata/exchanges.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var exs []*exchange.Exchange
	err = exchange.ReadJSONL(f, "exchanges.jsonl", func(r exchange.Record) error {
		if r.Err != nil {
			return r.Err
		}
		exs = append(exs, r.Exchange)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(context.Background(), exs, memory.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// decode reads a tool's structured result into out.
func decode(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestServerOverStdio runs the server as a subprocess over stdio.
func TestServerOverStdio(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := demoMemory(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HOME="+home, "MCPSERVER_TEST_SERVE="+dir)
	client := mcp.NewClient(&mcp.Implementation{Name: "git-mem-test", Version: "v0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	exercise(ctx, t, session)
}

// TestServerInProcess drives the same tools over an in-memory transport.
func TestServerInProcess(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	m, err := memory.Open(demoMemory(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(m, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "git-mem-test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	exercise(ctx, t, session)
}

// exercise checks every tool through a connected client session.
func exercise(ctx context.Context, t *testing.T, session *mcp.ClientSession) {
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 40 {
			t.Errorf("tool %s: description %q is too thin for a model", tool.Name, tool.Description)
		}
	}
	if got := strings.Join(names, ","); got != "context,log,pin,search,show" {
		t.Errorf("tools %s", got)
	}

	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: protocol error %v", name, args, err)
		}
		return res
	}

	var demo3 string
	t.Run("search finds the exchange", func(t *testing.T) {
		res := call("search", map[string]any{"query": "nil pointer auth middleware", "k": 3})
		if res.IsError {
			t.Fatal(text(res))
		}
		var out mcpserver.SearchOutput
		decode(t, res, &out)
		if len(out.Results) == 0 || out.Results[0].Exchange != "demo-3" {
			t.Fatalf("results %+v", out.Results)
		}
		if len(out.Results) > 3 || out.Results[0].Score <= 0 || out.Results[0].Short == "" {
			t.Errorf("results %+v", out.Results)
		}
		demo3 = out.Results[0].Short
	})
	t.Run("show returns the verbatim", func(t *testing.T) {
		res := call("show", map[string]any{"id": demo3})
		if res.IsError {
			t.Fatal(text(res))
		}
		var out mcpserver.ShowOutput
		decode(t, res, &out)
		if out.Card.Exchange != "demo-3" || !strings.Contains(out.Verbatim, "user: go test ./... panics") {
			t.Fatalf("show %s: %+v", demo3, out)
		}
	})
	t.Run("pin a rule, then context shows it first", func(t *testing.T) {
		res := call("pin", map[string]any{"note": "Ledger transactions run at SERIALIZABLE.", "project": "billing"})
		if res.IsError {
			t.Fatal(text(res))
		}
		var rep memory.PinReport
		decode(t, res, &rep)
		if rep.Kind != "pin" || !strings.HasPrefix(rep.ID, "note:") || len(rep.Commit) != 40 {
			t.Fatalf("pin %+v", rep)
		}
		res = call("context", map[string]any{"project": "billing"})
		if res.IsError || !strings.Contains(text(res), "[pinned "+rep.ID) {
			t.Fatalf("context without the pin: %s", text(res))
		}
		if res := call("pin", map[string]any{}); !res.IsError {
			t.Fatalf("pin of nothing: %s", text(res))
		}
		if res := call("pin", map[string]any{"id": "nosuch"}); !res.IsError {
			t.Fatalf("pin of an unknown exchange: %s", text(res))
		}
	})
	t.Run("log filters by project", func(t *testing.T) {
		res := call("log", map[string]any{"project": "billing", "n": 50})
		if res.IsError {
			t.Fatal(text(res))
		}
		var out mcpserver.LogOutput
		decode(t, res, &out)
		if len(out.Cards) != 5 {
			t.Errorf("%d billing cards, want 5", len(out.Cards))
		}
		for i, c := range out.Cards {
			if c.Project != "billing" || (i > 0 && c.Time > out.Cards[i-1].Time) {
				t.Errorf("card %d: %+v", i, c)
			}
		}
	})
	t.Run("context respects its budget", func(t *testing.T) {
		for _, args := range []map[string]any{
			{"query": "nil pointer auth middleware", "budget": 120},
			{"query": "payment webhook retry", "budget": 400},
			{"project": "billing", "budget": 250},
		} {
			res := call("context", args)
			if res.IsError {
				t.Fatal(text(res))
			}
			var out mcpserver.ContextOutput
			decode(t, res, &out)
			budget := int(args["budget"].(int))
			if n := tokens.Count(out.Text); n > budget || n != out.Tokens || len(out.Cards) == 0 {
				t.Errorf("%v: %d tokens (reported %d), %d cards", args, n, out.Tokens, len(out.Cards))
			}
			if !strings.HasPrefix(text(res), recall.FenceOpen) {
				t.Errorf("%v: content is not the block: %.80q", args, text(res))
			}
		}
	})
	t.Run("bad input is a tool error", func(t *testing.T) {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"search", map[string]any{"query": ""}},
			{"search", map[string]any{"query": 5}},
			{"search", map[string]any{"query": "x", "mode": "bogus"}},
			{"search", map[string]any{"query": "x", "k": -1}},
			{"show", map[string]any{"id": "no-such-exchange"}},
			{"show", map[string]any{}},
			{"log", map[string]any{"since": "the day before never"}},
			{"context", map[string]any{"budget": -5}},
		} {
			res := call(c.tool, c.args)
			if !res.IsError || text(res) == "" {
				t.Errorf("%s %v: IsError %v, %q", c.tool, c.args, res.IsError, text(res))
			}
		}
		// The server is still alive after the errors.
		if res := call("log", map[string]any{"n": 1}); res.IsError {
			t.Fatal(text(res))
		}
	})
}
