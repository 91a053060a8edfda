package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// maxLeft bounds the copies of a forgotten exchange's marker a long-lived
// process may still hold after the forget: goroutine stacks and reused
// I/O buffers are not overwritten by the collector (0 in 27 of 30 runs of
// the MCP case, 2–8 in the others; without memory.FreeHeap and the
// front's GODEBUG=clobberfree=1, 441–2,191 for MCP and 42 for the page).
const maxLeft = 16

// TestForgetLeavesNoCopyInLongLivedProcesses runs `git mem mcp` and `git
// mem ui` as processes, has them show a marked exchange, forgets it, asks
// them one more thing, and counts the marker in their memory
// (/proc/PID/mem): what they held of it must be gone, not only unreachable.
func TestForgetLeavesNoCopyInLongLivedProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/mem")
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, mem, marker string, env []string)
	}{
		{"mcp", mcpForget},
		{"ui", uiForget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := make([]byte, 5)
			_, _ = rand.Read(b)
			marker := "Zqxwv" + hex.EncodeToString(b)
			t.Logf("marker %s", marker)
			dir := t.TempDir()
			mem := filepath.Join(dir, "mem.git")
			env := append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_MEM_AUTO_REPACK=0")
			var in bytes.Buffer
			for i := range 30 {
				text := fmt.Sprintf("exchange %d about the billing export and its sessions", i)
				if i == 7 {
					text = strings.Repeat("the forgotten one "+marker+" holds the words "+marker+"-tail and more ", 40)
				}
				line, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("p-%d", i), "session": "s1",
					"time": fmt.Sprintf("2026-03-01T10:%02d:00Z", i), "project": "billing", "agent": "claude-code",
					"turns": []map[string]string{{"role": "user", "text": text}, {"role": "assistant", "text": "reply: " + text}}})
				in.Write(append(line, '\n'))
			}
			file := filepath.Join(dir, "in.jsonl")
			if err := os.WriteFile(file, in.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			gitMem(t, env, "--mem-dir", mem, "init")
			gitMem(t, env, "--mem-dir", mem, "add", file)
			tc.run(t, mem, marker, env)
			fsck(t, mem)
		})
	}
}

func gitMem(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git-mem", args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git mem %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func fsck(t *testing.T, mem string) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", mem, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// copiesIn counts marker in the readable mappings of process pid.
func copiesIn(t *testing.T, pid int, marker string) int {
	t.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(maps)), "\n") {
		fields := strings.Fields(l)
		if len(fields) < 2 || !strings.HasPrefix(fields[1], "r") {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		z, _ := strconv.ParseUint(hi, 16, 64)
		buf := make([]byte, z-a)
		if _, err := f.ReadAt(buf, int64(a)); err != nil && err != io.EOF {
			continue // [vvar] and the like
		}
		n += bytes.Count(buf, []byte(marker))
	}
	return n
}

func checkLeft(t *testing.T, pid int, marker string, before int) {
	t.Helper()
	if before <= maxLeft {
		t.Fatalf("before the forget the process held %d copies: the scan finds too little to tell", before)
	}
	if left := copiesIn(t, pid, marker); left > maxLeft {
		t.Fatalf("after the forget the process still holds %d copies of the forgotten text (before: %d)", left, before)
	} else {
		t.Logf("copies before the forget %d, after %d", before, left)
	}
}

func mcpForget(t *testing.T, mem, marker string, env []string) {
	cmd := exec.Command("git-mem", "--mem-dir", mem, "mcp")
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	rd := bufio.NewReader(stdout)
	id := 0
	call := func(method string, params any) string {
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return line
	}
	tool := func(name string, args map[string]any) string {
		return call("tools/call", map[string]any{"name": name, "arguments": args})
	}
	call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	_, _ = stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	// The requests never name the marker: what the process holds of it
	// came from the memory.
	if !strings.Contains(tool("show", map[string]any{"id": "p-7"}), marker) {
		t.Fatal("show did not return the marked exchange")
	}
	tool("search", map[string]any{"query": "forgotten words"})
	tool("context", map[string]any{"query": "forgotten words"})
	before := copiesIn(t, cmd.Process.Pid, marker)
	gitMem(t, env, "--mem-dir", mem, "forget", "p-7", "--yes")
	for _, out := range []string{tool("log", map[string]any{}), tool("search", map[string]any{"query": "billing export"})} {
		if strings.Contains(out, marker) {
			t.Fatalf("an answer after the forget holds the forgotten text: %.200s", out)
		}
	}
	checkLeft(t, cmd.Process.Pid, marker, before)
}

func uiForget(t *testing.T, mem, marker string, env []string) {
	cmd := exec.Command("git-mem", "--mem-dir", mem, "ui", "--no-browser")
	cmd.Env = env
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=\S+`)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				addr <- u
			}
		}
	}()
	var url string
	select {
	case url = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatal("git mem ui printed no address")
	}
	base, _, _ := strings.Cut(url, "/?")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(path string) string {
		r, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", path, r.Status, b)
		}
		return string(b)
	}
	get("/?token=" + strings.TrimPrefix(url, base+"/?token="))
	var log struct {
		Entries []struct{ Short, Exchange string } `json:"entries"`
	}
	if err := json.Unmarshal([]byte(get("/api/log?n=50")), &log); err != nil {
		t.Fatal(err)
	}
	short := ""
	for _, e := range log.Entries {
		if e.Exchange == "p-7" {
			short = e.Short
		}
	}
	if short == "" {
		t.Fatal("p-7 is not in the page's log")
	}
	if !strings.Contains(get("/api/exchange?ref="+short), marker) {
		t.Fatal("the page did not show the marked exchange")
	}
	get("/api/search?q=forgotten+words")
	before := copiesIn(t, cmd.Process.Pid, marker)
	body, _ := json.Marshal(map[string]string{"ref": short, "confirm": short})
	req, _ := http.NewRequest(http.MethodPost, base+"/api/forget", bytes.NewReader(body))
	req.Header.Set("Origin", base)
	req.Header.Set("Content-Type", "application/json")
	r, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("forget from the page: %s", r.Status)
	}
	for _, out := range []string{get("/api/log"), get("/api/search?q=billing+export")} {
		if strings.Contains(out, marker) {
			t.Fatalf("an answer after the forget holds the forgotten text: %.200s", out)
		}
	}
	checkLeft(t, cmd.Process.Pid, marker, before)
}
