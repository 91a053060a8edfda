package hooks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const copilotLogFixture = "testdata/copilot/workspaceStorage/ef34gh/chatSessions/5f1e2d3c-4b5a-4c6d-8e7f-90a1b2c3d4e5.jsonl"

// copyCopilotLog writes data as a chat log in a workspace laid out like
// the fixture's, and returns its path.
func copyCopilotLog(t *testing.T, data []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ef34gh")
	if err := os.MkdirAll(filepath.Join(dir, "chatSessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := os.ReadFile("testdata/copilot/workspaceStorage/ef34gh/workspace.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "workspace.json"), ws, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "chatSessions", filepath.Base(copilotLogFixture))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCopilotLogCompacted: VS Code rewrites a long log as one Initial entry
// of the chat it replays to; the compacted log gives the same exchanges,
// byte for byte, as the log it replaced.
func TestCopilotLogCompacted(t *testing.T) {
	data, err := os.ReadFile(copilotLogFixture)
	if err != nil {
		t.Fatal(err)
	}
	full, err := ReadCopilot(copyCopilotLog(t, data), Options{SessionEnded: true})
	if err != nil || len(full.Problems) != 0 {
		t.Fatal(err, full.Problems)
	}
	// The chat the log replays to, built here from its lines independently
	// of the reader: the fixture only sets, deletes and pushes at known
	// places, so the final chat is the last value each request took.
	var chat map[string]any
	var reqs []any
	for i, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var e struct {
			Kind int   `json:"kind"`
			K    []any `json:"k"`
			V    any   `json:"v"`
			I    *int  `json:"i"`
		}
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		switch {
		case e.Kind == 0:
			chat = e.V.(map[string]any)
		case len(e.K) == 1 && e.K[0] == "requests":
			if e.I != nil {
				reqs = reqs[:*e.I]
			}
			reqs = append(reqs, e.V.([]any)...)
		case len(e.K) == 3 && e.K[0] == "requests":
			r := reqs[int(e.K[1].(float64))].(map[string]any)
			key := e.K[2].(string)
			switch e.Kind {
			case 1:
				r[key] = e.V
			case 2:
				r[key] = append(r[key].([]any), e.V.([]any)...)
			case 3:
				delete(r, key)
			}
		case len(e.K) == 1:
			chat[e.K[0].(string)] = e.V
		}
	}
	chat["requests"] = reqs
	compact, _ := json.Marshal(map[string]any{"kind": 0, "v": chat})
	got, err := ReadCopilot(copyCopilotLog(t, append(compact, '\n')), Options{SessionEnded: true})
	if err != nil || len(got.Problems) != 0 {
		t.Fatal(err, got.Problems)
	}
	if len(got.Exchanges) != len(full.Exchanges) {
		t.Fatalf("compacted: %d exchanges, log: %d", len(got.Exchanges), len(full.Exchanges))
	}
	for i := range got.Exchanges {
		if !bytes.Equal(got.Exchanges[i].Canonical(), full.Exchanges[i].Canonical()) {
			t.Errorf("exchange %s differs once the log is compacted", full.Exchanges[i].ID)
		}
	}
}

// TestCopilotLogBadEntries: entries the chat cannot take are reported at
// their line and skipped; the rest of the log still applies.
func TestCopilotLogBadEntries(t *testing.T) {
	data, err := os.ReadFile(copilotLogFixture)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	cases := []struct {
		name string
		at   int    // inserted before this 0-based line
		bad  string // the entry
		msg  string
		want int // exchanges of the ended session
	}{
		{"path the chat lacks", 6, `{"kind":1,"k":["requests",9,"result"],"v":{}}`, "out of a list", 4},
		{"no kind", 6, `{"k":["customTitle"],"v":"x"}`, "without a kind", 4},
		{"unknown kind", 6, `{"kind":7,"k":["customTitle"],"v":"x"}`, "unknown kind", 4},
		{"push of a non-list", 6, `{"kind":2,"k":["requests"],"v":{"a":1}}`, "not a list", 4},
		{"push onto a string", 7, `{"kind":2,"k":["customTitle"],"v":[1]}`, "not a list", 4},
		{"change before the chat", 0, `{"kind":1,"k":["customTitle"],"v":"x"}`, "before the log's initial", 4},
		{"initial that is no chat", 0, `{"kind":0,"v":[1,2]}`, "holds no chat", 4},
		{"path too long", 6, `{"kind":1,"k":[` + strings.Repeat(`"a",`, cpLogMaxPath) + `"a"],"v":1}`, "path of", 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := append(append(append([]string{}, lines[:c.at]...), c.bad+"\n"), lines[c.at:]...)
			p := copyCopilotLog(t, []byte(strings.Join(l, "")))
			res, err := ReadCopilot(p, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) != 1 || res.Problems[0].Line != c.at+1 || !strings.Contains(res.Problems[0].Msg, c.msg) {
				t.Fatalf("problems %v, want one at line %d saying %q", res.Problems, c.at+1, c.msg)
			}
			if !strings.HasPrefix(res.Problems[0].Error(), p+":") {
				t.Errorf("not file:line: %s", res.Problems[0].Error())
			}
			if len(res.Exchanges) != c.want {
				t.Errorf("got %d exchanges, want %d", len(res.Exchanges), c.want)
			}
		})
	}
	// A request of the wrong shape is reported at the line that pushed it.
	l := append([]string{}, lines...)
	l[7] = strings.Replace(l[7], `"timestamp":1767400030000`, `"timestamp":"soon"`, 1)
	res, err := ReadCopilot(copyCopilotLog(t, []byte(strings.Join(l, ""))), Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || res.Problems[0].Line != 8 {
		t.Fatalf("problems %v, want the request pushed at line 8", res.Problems)
	}
	if len(res.Exchanges) != 3 {
		t.Errorf("got %d exchanges, want the other 3", len(res.Exchanges))
	}
}

// TestCopilotInlineReference: a file the reply names inline is kept as its
// name (real log: "I added a joke … to the [jokes.csv] file").
func TestCopilotInlineReference(t *testing.T) {
	res, err := ReadCopilot("testdata/copilot/real/gitai01/chatSessions/7de89a80-6d93-43e7-be0a-0a9afe980198.jsonl", Options{SessionEnded: true})
	if err != nil || len(res.Exchanges) != 2 {
		t.Fatal(err, len(res.Exchanges))
	}
	b := &builder{ex: res.Exchanges[0]}
	if got := b.finalReply(); !strings.Contains(got, "to the `jokes.csv` file") {
		t.Errorf("final reply %q lost the file it names", got)
	}
}
