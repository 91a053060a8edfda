package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden from the current output")

// Commit ids depend on when an exchange was stored (the committer date),
// and so do BPE counts of text holding them (budgets are large enough that
// nothing is cut); paths on the temporary folder; timings on the machine. Everything else of
// the output is pinned.
var (
	fullHash  = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	shortHash = regexp.MustCompile(`\b[0-9a-f]{7}\b`)
	seconds   = regexp.MustCompile(`"seconds": [0-9.e+-]+`)
	bytesIO   = regexp.MustCompile(`"bytes_(received|sent)": \d+`)
	tokensN   = regexp.MustCompile(`"tokens": \d+`) // BPE counts of the random commit ids
	versionV  = regexp.MustCompile(`("version": ")[^"\n]+`)
	pinDate   = regexp.MustCompile(`(\[pinned \S+) \d{4}-\d{2}-\d{2}\]`) // a pin is dated when it is made
)

func normalize(s string, dirs map[string]string) string {
	long := make([]string, 0, len(dirs))
	for dir := range dirs {
		long = append(long, dir)
	}
	// Longest first: $MEM inside $TMP.
	sort.Slice(long, func(i, j int) bool { return len(long[i]) > len(long[j]) })
	for _, dir := range long {
		s = strings.ReplaceAll(s, dir, dirs[dir])
	}
	s = fullHash.ReplaceAllString(s, "<commit>")
	s = shortHash.ReplaceAllString(s, "<short>")
	s = seconds.ReplaceAllString(s, `"seconds": <s>`)
	s = bytesIO.ReplaceAllString(s, `"bytes_$1": <n>`)
	s = tokensN.ReplaceAllString(s, `"tokens": <n>`)
	s = pinDate.ReplaceAllString(s, "${1} <date>]")
	return versionV.ReplaceAllString(s, "${1}<version>")
}

// TestGolden pins every --json shape of docs/CONTRACT.md and the human
// output of log, search, show, stats and status. Refresh with
// go test ./cmd/git-mem-core -run TestGolden -update, and read the diff.
func TestGolden(t *testing.T) {
	tmp := t.TempDir()
	mem := filepath.Join(tmp, "mem.git")
	remote := filepath.Join(tmp, "remote.git")
	t.Setenv("HOME", tmp)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("XDG_DATA_HOME", "")
	exchanges, _ := filepath.Abs("../../testdata/exchanges.jsonl")
	evalDir, _ := filepath.Abs("../../testdata/eval")
	claudeDir := filepath.Join(tmp, "claude")
	if err := os.MkdirAll(filepath.Join(claudeDir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	session, err := os.ReadFile(filepath.Join(goldenDir(t), "session.jsonl.in"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(claudeDir, "p", "s.jsonl"), session, 0o644); err != nil {
		t.Fatal(err)
	}
	// An import leaves a session touched in the last minutes open.
	past := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(claudeDir, "p", "s.jsonl"), past, past); err != nil {
		t.Fatal(err)
	}
	// hook install names git-mem when it is on PATH, else this binary.
	if git, err := exec.LookPath("git"); err == nil {
		t.Setenv("PATH", filepath.Dir(git))
	}
	t.Chdir(tmp) // hook install --scope user, man install: nothing lands in the checkout
	dirs := map[string]string{mem: "$MEM", remote: "$REMOTE", tmp: "$TMP"}
	if exe, err := os.Executable(); err == nil {
		dirs[exe] = "$EXE"
	}
	steps := []struct {
		name string
		args []string
		code int
	}{
		{"init.json", []string{"--json", "init"}, 0},
		{"add.json", []string{"--json", "add", exchanges}, 0},
		{"log.json", []string{"--json", "log", "-n", "2"}, 0},
		{"log.txt", []string{"log", "-n", "3"}, 0},
		{"log-oneline.txt", []string{"log", "--oneline"}, 0},
		{"show.json", []string{"--json", "show", "demo-3"}, 0},
		{"show.txt", []string{"show", "demo-3", "--verbatim"}, 0},
		{"show-verbatim.json", []string{"--json", "show", "demo-3", "--verbatim"}, 0},
		{"search.json", []string{"--json", "search", "-k", "2", "payment webhook retry"}, 0},
		{"search.txt", []string{"search", "-k", "3", "nil pointer auth middleware"}, 0},
		{"reindex.json", []string{"--json", "reindex"}, 0},
		{"stats.json", []string{"--json", "stats"}, 0},
		{"stats.txt", []string{"stats"}, 0},
		{"rooms.json", []string{"--json", "rooms", "--project", "billing"}, 0},
		{"status.json", []string{"--json", "status"}, 0},
		{"status.txt", []string{"status"}, 0},
		{"context.json", []string{"--json", "context", "--budget", "2000", "--project", "billing"}, 0},
		{"context-query.txt", []string{"context", "--budget", "2000", "webhook retry"}, 0},
		{"pin.json", []string{"--json", "pin", "--note", "Ledger transactions run at SERIALIZABLE.", "--project", "billing"}, 0},
		{"supersede.json", []string{"--json", "supersede", "demo-12", "demo-2"}, 0},
		{"show-superseded.txt", []string{"show", "demo-2"}, 0},
		{"search-superseded.json", []string{"--json", "search", "-k", "2", "payment webhook retry"}, 0},
		// 500: the five billing cards fit with ~100 tokens to spare (at 400 the
		// last one fit or not by the BPE count of the random commit ids).
		{"context-pins.txt", []string{"context", "--budget", "500", "--project", "billing"}, 0},
		{"remote-add.json", []string{"--json", "remote", "add", "origin", remote}, 0},
		{"remote.json", []string{"--json", "remote"}, 0},
		{"remote-add-backup.json", []string{"--json", "remote", "add", "backup", remote}, 0},
		{"remote-remove.json", []string{"--json", "remote", "remove", "backup"}, 0},
		{"import.json", []string{"--json", "import", "claude-code", claudeDir}, 0},
		{"hook-install.json", []string{"--json", "hook", "install", "codex"}, 0},
		{"man-install.json", []string{"--json", "man", "install", filepath.Join(tmp, "man")}, 0},
		{"version.json", []string{"--json", "version"}, 0},
		{"error-usage.json", []string{"--json", "search", "-k", "0", "x"}, 2},
		{"error-unknown.json", []string{"--json", "frobnicate"}, 2},
		{"error-notfound.json", []string{"--json", "show", "nosuchid"}, 1},
		{"eval.json", []string{"--json", "eval", "--mode", "session-bm25", evalDir}, 0},
	}
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v: %s", err, out)
	}
	for _, st := range steps {
		var out, errOut bytes.Buffer
		code := Main(append([]string{"--mem-dir", mem}, st.args...), strings.NewReader(""), &out, &errOut)
		if code != st.code {
			t.Errorf("%s: git mem %q exited %d, want %d; stderr %s", st.name, st.args, code, st.code, errOut.String())
			continue
		}
		checkGolden(t, st.name, normalize(out.String(), dirs))
	}
	// sync last: it pushes to the remote the steps above named.
	var out, errOut bytes.Buffer
	if code := Main([]string{"--mem-dir", mem, "--json", "sync"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("sync: exit %d: %s", code, errOut.String())
	}
	checkGolden(t, "sync.json", normalize(out.String(), dirs))
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir(t), name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v (run with -update)", name, err)
		return
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run with -update and read the diff):\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

var goldenAbs string

func goldenDir(t *testing.T) string {
	if goldenAbs == "" {
		d, err := filepath.Abs(filepath.Join("testdata", "golden"))
		if err != nil {
			t.Fatal(err)
		}
		goldenAbs = d
	}
	return goldenAbs
}
