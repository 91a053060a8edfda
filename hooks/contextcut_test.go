package hooks

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ctxMark is text only git mem's injected context holds in these tests.
const ctxMark = "CTXMARK-recalled-note"

// jsonInner is s as it appears inside a JSON string (no quotes, no HTML
// escapes).
func jsonInner(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSpace(b.String())
	return out[1 : len(out)-1]
}

// TestAgentContextNotReingested: every reader of issue 16 cuts git mem's
// own <git-mem-context> block from a prompt, so a recall injected into a
// session is never stored back as if the user had typed it. The block is
// put before the first prompt of each fixture (wherever its text is in
// the file), as the agent records an injected prompt prefix; the session
// reads the same, with no trace of the block.
func TestAgentContextNotReingested(t *testing.T) {
	for _, c := range agentCases {
		if c.store {
			continue // databases and trees of files: TestCursorCLI's fixture has a block
		}
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			data, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			first := c.prompts[0]
			if i := strings.IndexByte(first, '\n'); i >= 0 {
				first = first[:i]
			}
			block := "<git-mem-context source=\"recall\">\n" + ctxMark + ": the retry cap is 30 s\n</git-mem-context>\n\n"
			old, repl := jsonInner(t, first), jsonInner(t, block)+jsonInner(t, first)
			if c.markdown {
				old, repl = first, block+first
			}
			if !bytes.Contains(data, []byte(old)) {
				t.Fatalf("first prompt %q not found in the file", old)
			}
			data = bytes.ReplaceAll(data, []byte(old), []byte(repl))
			name := filepath.Join(t.TempDir(), c.file)
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			// Files beside it (manifests, indexes) still describe it.
			if entries, err := os.ReadDir(filepath.Dir(c.file)); err == nil {
				for _, e := range entries {
					if !e.IsDir() && e.Name() != filepath.Base(c.file) {
						if b, err := os.ReadFile(filepath.Join(filepath.Dir(c.file), e.Name())); err == nil {
							os.WriteFile(filepath.Join(filepath.Dir(name), e.Name()), b, 0o644)
						}
					}
				}
			}
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := ReadFile(name, c.format, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Exchanges) != c.exchanges {
				t.Fatalf("got %d exchanges, want %d", len(res.Exchanges), c.exchanges)
			}
			if got := res.Exchanges[0].UserText(); !strings.HasPrefix(got, c.prompts[0]) {
				t.Errorf("first prompt = %.80q, want %q…", got, c.prompts[0])
			}
			for _, ex := range res.Exchanges {
				// Only the prompts: a tool call's arguments may quote the
				// prompt text (the block was put there too).
				if u := ex.UserText(); strings.Contains(u, ctxMark) || strings.Contains(u, "<git-mem-context") {
					t.Errorf("exchange %s keeps git mem's context: %.200q", ex.ID, ex.UserText())
				}
			}
		})
	}
}

// TestStoreContextNotReingested: the same for the databases and trees of
// files (Cursor's state.vscdb, OpenCode's opencode.db and its older
// storage/ JSON): the block put before each prompt's text is cut.
func TestStoreContextNotReingested(t *testing.T) {
	block := "<git-mem-context source=\"recall\">\n" + ctxMark + ": the retry cap is 30 s\n</git-mem-context>\n\n"
	firsts := []string{"rename fetchUser to loadUser", "Read README.md and tell me what this project does.", "Fix the bug in add.sh, it should add."}
	inject := func(b []byte) []byte {
		for _, p := range firsts {
			b = bytes.ReplaceAll(b, []byte(jsonInner(t, p)), []byte(jsonInner(t, block)+jsonInner(t, p)))
		}
		return b
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) string // returns the path to read
		format  string
		want    []string // prompts, in order
	}{
		{"cursor state.vscdb", func(t *testing.T, dir string) string {
			return writeCursorDB(t, dir, loadCursorFixture(t), func(_ string, v []byte) []byte { return inject(v) })
		}, FormatCursor, []string{"rename fetchUser to loadUser", "The login form submits twice", "add a test that Enter submits once"}},
		{"opencode.db", func(t *testing.T, dir string) string {
			b, err := os.ReadFile(generatedOpenCodeDB)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "opencode", "opencode.db")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("sqlite", p)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, pr := range firsts {
				if _, err := db.Exec(`UPDATE part SET data = replace(data, ?, ?)`, jsonInner(t, pr), jsonInner(t, block)+jsonInner(t, pr)); err != nil {
					t.Fatal(err)
				}
			}
			return p
		}, FormatOpenCode, []string{"Read README.md and tell me what this project does.", "Fix the bug in add.sh, it should add.", "Run the tests.", `"Write a CHANGELOG.md for the fix."`}},
		{"opencode storage", func(t *testing.T, dir string) string {
			root := filepath.Join(dir, "storage")
			err := filepath.WalkDir(generatedOpenCodeStorage, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(generatedOpenCodeStorage, p)
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				dst := filepath.Join(root, rel)
				os.MkdirAll(filepath.Dir(dst), 0o755)
				return os.WriteFile(dst, inject(b), 0o644)
			})
			if err != nil {
				t.Fatal(err)
			}
			return filepath.Join(root, "session", generatedOpenCodeProject, generatedOpenCodeSess1+".json")
		}, FormatOpenCode, []string{"Read README.md and tell me what this project does.", "Fix the bug in add.sh, it should add.", "Run the tests."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.prepare(t, t.TempDir())
			res, err := ReadFile(p, tt.format, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := prompts(res.Exchanges); len(got) != len(tt.want) {
				t.Fatalf("prompts %q, want %q", got, tt.want)
			}
			for i, ex := range res.Exchanges {
				u := ex.UserText()
				if !strings.HasPrefix(u, tt.want[i]) || strings.Contains(u, ctxMark) || strings.Contains(u, "<git-mem-context") {
					t.Errorf("prompt %d = %.120q, want %q… without git mem's context", i, u, tt.want[i])
				}
			}
		})
	}
}
