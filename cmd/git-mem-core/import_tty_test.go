package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestImportAsksOnTerminal: `git mem import` with no agent asks before it
// stores when its input is a terminal ("n" stores nothing, Enter stores), and
// does not ask when it is not one — /dev/null included, a character device
// that is no terminal.
func TestImportAsksOnTerminal(t *testing.T) {
	bin, err := exec.LookPath("git-mem")
	if err != nil {
		t.Fatal(err)
	}
	ar, err := txtar.ParseFile("testdata/script/import_all.txtar")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, answer string
		tty          bool
		asked        bool
		commits      string
	}{
		{"terminal, no", "n\n", true, true, "0"},
		{"terminal, Enter", "\n", true, true, "3"},
		{"/dev/null", "", false, false, "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			for _, f := range ar.Files {
				p := filepath.Join(home, f.Name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				old := time.Now().Add(-time.Hour) // not live: every exchange is closed
				os.Chtimes(p, old, old)
			}
			mem := filepath.Join(home, "mem.git")
			env := append(os.Environ(), "HOME="+home, "GIT_MEM_DIR="+mem, "XDG_CONFIG_HOME=", "XDG_DATA_HOME=")
			cmd := exec.Command(bin, "init")
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			cmd = exec.Command(bin, "import")
			cmd.Env, cmd.Dir = env, home
			var out []byte
			if tc.tty {
				f, err := pty.Start(cmd)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				var buf lockedBuffer
				done := make(chan struct{})
				go func() { io.Copy(&buf, f); close(done) }()
				deadline := time.Now().Add(30 * time.Second)
				for !strings.Contains(buf.String(), "[Y/n]") && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if _, err := f.Write([]byte(tc.answer)); err != nil {
					t.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					t.Fatalf("import: %v\n%s", err, buf.String())
				}
				f.Close()
				<-done
				out = buf.Bytes()
			} else {
				cmd.Stdin = nil // /dev/null
				if out, err = cmd.CombinedOutput(); err != nil {
					t.Fatalf("import: %v\n%s", err, out)
				}
			}
			if asked := bytes.Contains(out, []byte("store them? [Y/n]")); asked != tc.asked {
				t.Errorf("asked %v, want %v:\n%s", asked, tc.asked, out)
			}
			if !bytes.Contains(out, []byte("found:")) {
				t.Errorf("no list of what was found:\n%s", out)
			}
			n, err := exec.Command("git", "--git-dir", mem, "rev-list", "--all", "--count").Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(n)); got != tc.commits {
				t.Errorf("%s commits, want %s:\n%s", got, tc.commits, out)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer the test may read while a copy writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Bytes() []byte { return []byte(l.String()) }
