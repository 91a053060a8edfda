package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/mcpserver"
	"github.com/gitmem/git-mem/memory"
)

// TestBadLinesDoNotEndTheSession sends, between valid requests, lines that
// are not JSON-RPC messages to `git mem mcp`'s transport (as a subprocess,
// over real stdio): each must get one JSON-RPC error with the right code and
// id, and the session must go on answering. Before, the SDK's stream decoder
// ended the session (exit 1) on the first such line.
func TestBadLinesDoNotEndTheSession(t *testing.T) {
	home := t.TempDir()
	dir := demoMemory(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HOME="+home, "MCPSERVER_TEST_SERVE="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(stdout)
	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	read := func() reply {
		t.Helper()
		done := make(chan string, 1)
		go func() { l, _ := lines.ReadString('\n'); done <- l }()
		select {
		case l := <-done:
			var r reply
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("reply %q: %v (stderr %q)", l, err, stderr.String())
			}
			return r
		case <-time.After(20 * time.Second):
			t.Fatalf("no reply (stderr %q)", stderr.String())
		}
		return reply{}
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("write %q: %v (stderr %q)", s, err, stderr.String())
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := read(); r.Error != nil || string(r.ID) != "1" {
		t.Fatalf("initialize: %+v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, tc := range []struct {
		line string
		code int
		id   string
	}{
		{`{not json`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list"`, -32700, "null"},
		{`{"foo":1}`, -32600, "null"},
		{`{"id":7,"method":"tools/list"}`, -32600, "7"},
		{`{"id":"x","jsonrpc":"1.0","method":"tools/list"}`, -32600, `"x"`},
		{`[]`, -32600, "null"},
		{`[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, -32600, "null"},
		{`"just a string"`, -32600, "null"},
		{`42`, -32600, "null"},
		{"\x00\xff\xfe", -32700, "null"},
	} {
		send(tc.line)
		r := read()
		if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != tc.id {
			t.Errorf("%q: got id %s error %+v, want id %s code %d", tc.line, r.ID, r.Error, tc.id, tc.code)
		}
		// The session still answers.
		send(`{"jsonrpc":"2.0","id":100,"method":"tools/list"}`)
		if r := read(); r.Error != nil || string(r.ID) != "100" || len(r.Result) == 0 {
			t.Fatalf("after line %d %q: tools/list got %+v (stderr %q)", i, tc.line, r, stderr.String())
		}
	}
	// Blank lines are skipped without an answer.
	send("")
	send(`{"jsonrpc":"2.0","id":101,"method":"tools/list"}`)
	if r := read(); string(r.ID) != "101" {
		t.Fatalf("after a blank line: %+v", r)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v (stderr %q)", err, stderr.String())
	}
}

// TestLinesAtTheCap: requests of exactly MaxLine bytes, one after the other,
// are all answered. Before, the SDK's own cap (behind the filter) counted
// the bytes its decoder read ahead into the next line and ended the session
// on the second.
func TestLinesAtTheCap(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	m, err := memory.Open(demoMemory(t))
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.New(m, "test").Run(context.Background(), mcpserver.Transport(inR, outW))
		outW.Close()
	}()
	lines := bufio.NewReader(outR)
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		for i := 0; i < 3; i++ {
			head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","pad":"`, 10+i)
			line := head + strings.Repeat("p", mcpserver.MaxLine-len(head)-2) + `"}`
			io.WriteString(inW, line+"\n")
		}
	}()
	var ids []string
	for len(ids) < 4 {
		l, err := lines.ReadString('\n')
		if err != nil {
			break
		}
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Error != nil {
			t.Fatalf("reply %.200q: %v", l, err)
		}
		ids = append(ids, string(r.ID))
	}
	inW.Close() // the server ends at the end of its input
	if err := <-done; err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("server: %v", err)
	}
	if got := strings.Join(ids, ","); got != "1,10,11,12" {
		t.Errorf("answered %s, want 1,10,11,12", got)
	}
}
