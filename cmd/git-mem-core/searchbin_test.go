package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/cmd/internal/front"
)

// runBin runs exe (a copy of this test binary, which TestMain dispatches
// on its name) with args and the test's environment.
func runBin(t *testing.T, exe string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %q: %v", exe, args, err)
	}
	return out.String(), errOut.String(), code
}

// copyExe puts a copy of this test binary at dir/name.
func copyExe(t *testing.T, dir, name string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	p := filepath.Join(dir, name)
	out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSearchBinaryAsCore: every search git-mem-search answers prints what
// git-mem-core's search prints, byte for byte (stdout, stderr, exit
// code), answered by git-mem-search alone (no git-mem-core within its
// reach); what it cannot answer exactly it hands to git-mem-core, whose
// answer is then the one printed.
func TestSearchBinaryAsCore(t *testing.T) {
	tmp := t.TempDir()
	mem := filepath.Join(tmp, "mem.git")
	// Beside git-mem-core (the PATH of TestMain's commands), and alone.
	bothDir := filepath.Join(tmp, "both")
	core := copyExe(t, bothDir, front.CoreName)
	withCore := copyExe(t, bothDir, front.SearchName)
	alone := copyExe(t, filepath.Join(tmp, "alone"), front.SearchName)
	aloneFront := copyExe(t, filepath.Join(tmp, "alone"), "git-mem")
	env := []string{"HOME=" + tmp, "GIT_CONFIG_NOSYSTEM=1", "GIT_MEM_DIR=" + mem, "PATH=" + os.Getenv("PATH")}
	aloneEnv := append(env[:len(env):len(env)], "PATH=/nonexistent")
	exchanges, _ := filepath.Abs("../../testdata/exchanges.jsonl")
	for _, args := range [][]string{{"init"}, {"add", exchanges}, {"pin", "demo-3"}, {"supersede", "demo-12", "demo-2"}} {
		if _, errOut, code := runBin(t, core, env, args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
	}
	same := func(t *testing.T, exe string, exeEnv []string, args ...string) {
		t.Helper()
		wo, we, wc := runBin(t, core, env, args...)
		o, e, c := runBin(t, exe, exeEnv, args...)
		if o != wo || e != we || c != wc {
			t.Errorf("%q:\ngit-mem-search: exit %d\n%s%s\ngit-mem-core: exit %d\n%s%s", args, c, o, e, wc, wo, we)
		}
	}
	queries := []string{"payment webhook retry", "nil pointer auth middleware", "TypeError currency", "zzqx nothing matches this"}
	options := [][]string{
		{}, {"--json"}, {"-k", "1"}, {"-k", "2", "--verbatim"}, {"--json", "--verbatim"},
		{"--mode", "verbatim-bm25"}, {"--mode", "distilled-bm25"}, {"--mode", "distilled-vector"}, {"--mode", "fused"},
		{"--mode", "session-bm25", "--json"}, {"--project", "billing"}, {"--room", "project:api"}, {"--file", "export.ts"},
		{"--agent", "codex"}, {"--session", "s1"}, {"--since", "2026-03-02", "--until", "2026-12-31"},
	}
	t.Run("answered", func(t *testing.T) {
		for _, q := range queries {
			for _, o := range options {
				same(t, alone, aloneEnv, append(append([]string{"search"}, o...), q)...)
				same(t, alone, aloneEnv, append(append([]string{"--json", "search", q}, o...), "--mem-dir", mem)...)
			}
			// The front hands a search to git-mem-search beside it.
			same(t, aloneFront, aloneEnv, "search", q)
		}
		for _, args := range [][]string{
			{"search"}, {"--json", "search"}, {"search", " "}, {"search", "-k", "0", "x"}, {"--json", "search", "-k", "0", "x"},
			{"search", "--mode", "nope", "x"}, {"search", "--since", "someday", "x"}, {"search", "--", "-k"},
		} {
			same(t, alone, aloneEnv, args...)
		}
	})
	t.Run("handed over", func(t *testing.T) {
		cases := [][]string{
			{"search", "--nope", "x"}, {"--json", "search", "--nope", "x"}, {"search", "--help"}, {"search", "-h", "x"},
			{"search", "x", "--mem-dir", filepath.Join(tmp, "none")}, {"log"}, {"--version"},
		}
		for _, args := range cases {
			same(t, withCore, env, args...)
			if o, e, c := runBin(t, alone, aloneEnv, args...); c == 0 || !strings.Contains(o+e, front.CoreName+" is not beside") {
				t.Errorf("%q alone: exit %d, %q; want it handed to %s", args, c, o+e, front.CoreName)
			}
		}
		// An index behind main: git-mem-core catches it up, then answers.
		// Two copies of one memory, so that each binary meets it behind.
		if _, errOut, code := runBin(t, core, env, "add", "--no-index", exchanges); code != 0 {
			t.Fatalf("add --no-index: exit %d: %s", code, errOut)
		}
		more := filepath.Join(tmp, "more.jsonl")
		if err := os.WriteFile(more, []byte(`{"id": "late-1", "session": "s9", "time": "2026-04-01T10:00:00Z", "project": "billing", "agent": "codex", "turns": [{"role": "user", "text": "the payment webhook retry storm again"}, {"role": "assistant", "text": "Capped the webhook retry at five."}]}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := runBin(t, core, env, "add", "--no-index", more); code != 0 {
			t.Fatalf("add --no-index: exit %d: %s", code, errOut)
		}
		if _, e, c := runBin(t, alone, aloneEnv, "search", "payment webhook retry"); c == 0 || !strings.Contains(e, front.CoreName+" is not beside") {
			t.Errorf("alone, index behind: exit %d, %q; want it handed over", c, e)
		}
		behind := filepath.Join(tmp, "behind.git")
		if out, err := exec.Command("cp", "-a", mem, behind).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
		o, e, c := runBin(t, withCore, env, "--json", "search", "payment webhook retry")
		wo, we, wc := runBin(t, core, env, "--json", "--mem-dir", behind, "search", "payment webhook retry")
		if o != wo || e != we || c != wc || !strings.Contains(o, "late-1") {
			t.Errorf("index behind:\ngit-mem-search: exit %d\n%s%s\ngit-mem-core: exit %d\n%s%s", c, o, e, wc, wo, we)
		}
		// Caught up by that search: answered alone again.
		same(t, alone, aloneEnv, "search", "payment webhook retry")
	})
}
