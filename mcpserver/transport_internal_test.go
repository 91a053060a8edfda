package mcpserver

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestFilterLinesTooLong: a line past the cap is answered and dropped
// without being kept in memory, and the lines around it go through whole.
func TestFilterLinesTooLong(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, tc := range []struct {
		name, in, pass string
		errors         int
	}{
		{"short", ok + "\n", ok + "\n", 0},
		{"no final newline", ok, ok + "\n", 0},
		{"huge between", ok + "\n" + `{"jsonrpc":"2.0","id":2,"method":"` + strings.Repeat("a", 300<<10) + `"}` + "\n" + ok + "\n", ok + "\n" + ok + "\n", 1},
		{"huge last, unterminated", ok + "\n" + strings.Repeat("b", 300<<10), ok + "\n", 1},
		{"at the cap", strings.Repeat(" ", 1000-len(ok)) + ok + "\n", ok + "\n", 0},
		{"one past the cap", strings.Repeat(" ", 1001-len(ok)) + ok + "\n", "", 1},
		{"CRLF", ok + "\r\n", ok + "\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			var out bytes.Buffer
			go filterLines(strings.NewReader(tc.in), pw, &out, 1000)
			got, err := io.ReadAll(pr)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.pass {
				t.Errorf("passed %d bytes %.80q, want %.80q", len(got), got, tc.pass)
			}
			if n := strings.Count(out.String(), `"code":-32600`); n != tc.errors {
				t.Errorf("errors %d (%q), want %d", n, out.String(), tc.errors)
			}
		})
	}
}
