package front

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/memory/queue"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want cmdline
		ok   bool
	}{
		{[]string{"version"}, cmdline{words: []string{"version"}}, true},
		{[]string{"--json", "version"}, cmdline{words: []string{"version"}, json: true}, true},
		{[]string{"version", "--json=true"}, cmdline{words: []string{"version"}, json: true}, true},
		{[]string{"--mem-dir", "/m", "hook", "claude-code"}, cmdline{words: []string{"hook", "claude-code"}, memDir: "/m"}, true},
		{[]string{"hook", "--mem-dir=/m", "claude-code"}, cmdline{words: []string{"hook", "claude-code"}, memDir: "/m"}, true},
		// Everything else is git-mem-core's to parse.
		{[]string{"version", "-h"}, cmdline{words: []string{"version"}}, false},
		{[]string{"hook", "claude-code", "--help"}, cmdline{words: []string{"hook", "claude-code"}}, false},
		{[]string{"--mem-dir"}, cmdline{}, false},
		{[]string{"search", "--", "-x"}, cmdline{words: []string{"search"}}, false},
		{[]string{"--json=false", "version"}, cmdline{}, false},
	} {
		got, ok := parse(tc.args)
		if ok != tc.ok || ok && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parse(%q) = %+v, %v; want %+v, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main("v9.9.9", []string{"version"}, nil, &out, &errOut); code != 0 || out.String() != "git mem v9.9.9\n" {
		t.Errorf("version: code %d, %q, %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := Main("v9.9.9", []string{"--json", "version"}, nil, &out, &errOut); code != 0 || out.String() != "{\n  \"version\": \"v9.9.9\"\n}\n" {
		t.Errorf("version --json: code %d, %q", code, out.String())
	}
}

// memoryDir makes what plainMemory takes for a memory repo with no config.
func memoryDir(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_MEM_DISTILLER", "")
	t.Setenv("GIT_MEM_EMBEDDER", "")
	t.Setenv(queue.DisableEnv, "")
	dir := filepath.Join(home, "mem.git")
	if err := os.MkdirAll(filepath.Join(dir, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// No git-mem-core anywhere: the worker start fails and is logged.
	t.Setenv("PATH", t.TempDir())
	return dir
}

func jobs(t *testing.T, dir string) []queue.Job {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "mem", "queue", "*.json"))
	var out []queue.Job
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var j queue.Job
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if strings.Contains(string(b), "the secret reply") {
			t.Errorf("%s holds the reply's text: %s", f, b)
		}
		out = append(out, j)
	}
	return out
}

func TestClaudeHook(t *testing.T) {
	const payload = `{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/w","hook_event_name":"Stop","last_assistant_message":"the secret reply"}`
	t.Run("queued", func(t *testing.T) {
		dir := memoryDir(t)
		var errOut bytes.Buffer
		if !claudeHook(cmdline{memDir: dir}, strings.NewReader(payload), &errOut) {
			t.Fatal("a plain memory was handed to git-mem-core")
		}
		got := jobs(t, dir)
		if len(got) != 1 || got[0].Transcript != "/t/s1.jsonl" || got[0].Kind != "claude-code" || got[0].Event != "Stop" || got[0].LastAssistantDigest == "" {
			t.Fatalf("jobs = %+v", got)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "mem", "log", "hook.log"))
		if !strings.Contains(string(log), "start worker") || !strings.Contains(string(log), CoreName+" is not beside") {
			t.Errorf("hook.log = %q, want the failed worker start", log)
		}
		if errOut.Len() != 0 {
			t.Errorf("stderr = %q", errOut.String())
		}
	})
	t.Run("bad payload", func(t *testing.T) {
		dir := memoryDir(t)
		var errOut bytes.Buffer
		if !claudeHook(cmdline{memDir: dir}, strings.NewReader(`{"session_id":"s1"}`), &errOut) {
			t.Fatal("handed to git-mem-core")
		}
		if n := len(jobs(t, dir)); n != 0 {
			t.Errorf("%d jobs queued for a payload without transcript_path", n)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "mem", "log", "hook.log"))
		if !strings.Contains(string(log), "no transcript_path") || !strings.Contains(errOut.String(), "git mem: hook:") {
			t.Errorf("hook.log %q, stderr %q", log, errOut.String())
		}
	})
	t.Run("disabled", func(t *testing.T) {
		dir := memoryDir(t)
		t.Setenv(queue.DisableEnv, "1")
		if !claudeHook(cmdline{memDir: dir}, strings.NewReader(payload), os.Stderr) || len(jobs(t, dir)) != 0 {
			t.Error("a disabled capture queued a job")
		}
	})
	// Cases git-mem-core must answer: stdin is left unread for it.
	for name, setup := range map[string]func(t *testing.T, dir string){
		"memory config": func(t *testing.T, dir string) {
			_ = os.MkdirAll(filepath.Join(dir, "mem"), 0o755)
			_ = os.WriteFile(filepath.Join(dir, "mem", "config.yaml"), []byte("exclude:\n  agents: [claude-code]\n"), 0o644)
		},
		"user config": func(t *testing.T, dir string) {
			p := filepath.Join(os.Getenv("HOME"), ".config", "git-mem", "config.yaml")
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, []byte("distiller: openai\n"), 0o644)
		},
		"distiller from the environment": func(t *testing.T, dir string) { t.Setenv("GIT_MEM_DISTILLER", "nonsense") },
		"no memory":                      func(t *testing.T, dir string) { _ = os.RemoveAll(filepath.Join(dir, "objects")) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := memoryDir(t)
			setup(t, dir)
			in := strings.NewReader(payload)
			if claudeHook(cmdline{memDir: dir}, in, os.Stderr) {
				t.Fatal("the front answered")
			}
			if in.Len() != len(payload) || len(jobs(t, dir)) != 0 {
				t.Error("the front read stdin or queued a job before handing over")
			}
		})
	}
}

func TestCorePath(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	if _, err := CorePath(); err == nil || !strings.Contains(err.Error(), "go install ./cmd/...") {
		t.Errorf("CorePath with no git-mem-core = %v, want the install command", err)
	}
	p := filepath.Join(bin, CoreName)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := CorePath(); err != nil || got != p {
		t.Errorf("CorePath = %q, %v; want %q from PATH", got, err, p)
	}
}

// TestSearchCall: the front asks a warm search process only for a search
// whose arguments it reads as git-mem-core does, and finds the memory
// they name (pflag: the last --mem-dir wins; "--" ends the flags).
func TestSearchCall(t *testing.T) {
	for _, c := range []struct {
		args   []string
		ok     bool
		memDir string
	}{
		{[]string{"search", "auth", "middleware"}, true, ""},
		{[]string{"--json", "search", "-k", "3", "x"}, true, ""},
		{[]string{"--mem-dir", "/m", "search", "x"}, true, "/m"},
		{[]string{"--mem-dir=/m", "search", "x", "--mem-dir", "/n"}, true, "/n"},
		{[]string{"search", "x", "--mem-dir=/n", "--", "--mem-dir", "/o"}, true, "/n"},
		{[]string{"search", "--room", "concept:auth", "--since", "2026-03-01", "x"}, true, ""},
		{[]string{"search"}, true, ""}, // git-mem-core's usage error, answered or not
		{[]string{"search", "-h"}, false, ""},
		{[]string{"search", "x", "--help"}, false, ""},
		{[]string{"search", "help"}, false, ""},
		{[]string{"log", "search"}, false, ""},
		{[]string{"-v", "search", "x"}, false, ""},
		{[]string{"--mem-dir"}, false, ""},
		{[]string{}, false, ""},
		{[]string{"--json"}, false, ""},
	} {
		memDir, ok := SearchCall(c.args)
		if ok != c.ok || (ok && memDir != c.memDir) {
			t.Errorf("SearchCall(%q) = %q, %v; want %q, %v", c.args, memDir, ok, c.memDir, c.ok)
		}
	}
}

// TestWarmSearchOff: turned off, or with no process to ask, the front
// prints nothing and hands the search on.
func TestWarmSearchOff(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_MEM_DIR", dir)
	var out, errOut strings.Builder
	if _, done := warmSearch([]string{"search", "x"}, &out, &errOut); done || out.Len()+errOut.Len() > 0 {
		t.Fatalf("no process: done=%v, printed %q %q", done, out.String(), errOut.String())
	}
	t.Setenv("GIT_MEM_NO_SERVER", "1")
	if _, done := warmSearch([]string{"search", "x"}, &out, &errOut); done {
		t.Fatal("asked while turned off")
	}
}

func TestCoreEnvClobbersFreedMemoryOfLongLivedCommands(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  []string
		want []string
	}{
		{[]string{"mcp"}, []string{"HOME=/h"}, []string{"HOME=/h", "GODEBUG=clobberfree=1"}},
		{[]string{"--mem-dir", "ui", "ui", "--no-browser"}, []string{"GODEBUG=gctrace=1"}, []string{"GODEBUG=gctrace=1,clobberfree=1"}},
		{[]string{"--json", "ui"}, []string{"GODEBUG="}, []string{"GODEBUG=clobberfree=1"}},
		{[]string{"--mem-dir", "mcp", "search", "mcp"}, []string{"HOME=/h"}, []string{"HOME=/h"}},
		{[]string{"add", "ui"}, []string{"GODEBUG=gctrace=1"}, []string{"GODEBUG=gctrace=1"}},
		{nil, nil, nil},
	} {
		got := coreEnv(tc.args, slices.Clone(tc.env))
		if !slices.Equal(got, tc.want) {
			t.Errorf("coreEnv(%q, %q) = %q, want %q", tc.args, tc.env, got, tc.want)
		}
	}
}
