package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// seedFuzz adds the project's own fixtures whole, and short lines and
// small windows of the shared real transcripts when they are present (read
// here, never copied into the repo).
func seedFuzz(f *testing.F, own string, shared string) {
	m, _ := filepath.Glob(own)
	for _, p := range m {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	m, _ = filepath.Glob(shared)
	for _, p := range m {
		fh, err := os.Open(p)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 8<<20)
		var window [][]byte
		n := 0
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			if len(line) > 4<<10 {
				continue
			}
			window = append(window, line)
			if len(window) > 6 {
				window = window[1:]
			}
			n++
			if n%7 == 0 {
				f.Add(bytes.Join(window, []byte("\n")))
			}
		}
		fh.Close()
	}
}

// checkReader holds for every reader on any input: no panic, problems that
// name the file read, only valid
// exchanges with unique ids, and the exchanges of a still-open session are
// exactly those of the same session once ended, minus its last one.
func checkReader(t *testing.T, file string, read func(Options) (Result, error)) {
	open, err := read(Options{})
	if err != nil {
		return
	}
	ended, err := read(Options{SessionEnded: true})
	if err != nil {
		t.Fatalf("ended read failed after open read succeeded: %v", err)
	}
	seen := map[string][]byte{}
	for _, ex := range ended.Exchanges {
		if err := ex.Validate(); err != nil {
			t.Fatalf("invalid exchange %s: %v", ex.ID, err)
		}
		if _, dup := seen[ex.ID]; dup {
			t.Fatalf("duplicate id %s", ex.ID)
		}
		seen[ex.ID] = ex.Canonical()
		_ = ex.Render()
		_ = FilesTouched(ex)
	}
	if len(open.Exchanges) > len(ended.Exchanges) {
		t.Fatalf("open read returned more (%d) than ended (%d)", len(open.Exchanges), len(ended.Exchanges))
	}
	for _, ex := range open.Exchanges {
		want, ok := seen[ex.ID]
		if !ok || !bytes.Equal(ex.Canonical(), want) {
			t.Fatalf("exchange %s differs between open and ended reads", ex.ID)
		}
	}
	for _, p := range ended.Problems {
		if p.Line < 0 || !strings.Contains(p.Error(), file) {
			t.Fatalf("bad problem %v", p)
		}
	}
}

func FuzzClaudeCode(f *testing.F) {
	seedFuzz(f, "testdata/claude/*.jsonl", sharedFixtures+"/claude-code/*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReader(t, "fuzz.jsonl", func(opt Options) (Result, error) {
			return readClaude(bytes.NewReader(data), "fuzz.jsonl", "fuzz", nil, opt)
		})
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkSlim(t, line)
		}
	})
}

func FuzzCodex(f *testing.F) {
	seedFuzz(f, "testdata/codex/*.jsonl", sharedFixtures+"/codex/*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReader(t, "fuzz.jsonl", func(opt Options) (Result, error) {
			return readCodex(bytes.NewReader(data), "fuzz.jsonl", "thread", opt)
		})
	})
}

func FuzzAider(f *testing.F) {
	seedFuzz(f, "testdata/aider/*.md", sharedFixtures+"/aider/.aider.chat.history.md")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReader(t, "fuzz.md", func(opt Options) (Result, error) {
			return readAider(bytes.NewReader(data), "fuzz.md", "proj", time.UTC, opt)
		})
	})
}

func BenchmarkReadClaudeCodeLargest(b *testing.B) {
	m, _ := filepath.Glob(sharedFixtures + "/claude-code/*.jsonl")
	var largest string
	var size int64
	for _, p := range m {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			largest, size = p, st.Size()
		}
	}
	if largest == "" {
		b.Skip("shared fixtures not present")
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		res, err := ReadClaudeCode(largest, Options{SessionEnded: true})
		if err != nil || len(res.Exchanges) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadSynthetic5000 reads a generated 5,000-exchange session: a
// prompt, a tool call with a 2 KB result, and a reply each.
func BenchmarkReadSynthetic5000(b *testing.B) {
	path := filepath.Join(b.TempDir(), "33333333-3333-4333-8333-333333333333.jsonl")
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(fh)
	parent := "null"
	result := strings.Repeat("output line of a command\\n", 80)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 5000; i++ {
		ts := t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		u := func(k int) string { return fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", i, k) }
		fmt.Fprintf(w, `{"type":"user","uuid":"%s","parentUuid":%s,"sessionId":"33333333-3333-4333-8333-333333333333","timestamp":"%s","cwd":"/nonexistent/bench","isSidechain":false,"message":{"role":"user","content":"please fix bug number %d in the parser"}}`+"\n", u(1), parent, ts, i)
		fmt.Fprintf(w, `{"type":"assistant","uuid":"%s","parentUuid":"%s","sessionId":"33333333-3333-4333-8333-333333333333","timestamp":"%s","isSidechain":false,"message":{"id":"msg_%d","role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"Edit","input":{"file_path":"/src/parser_%d.go","old_string":"a","new_string":"b"}}]}}`+"\n", u(2), u(1), ts, i, i, i%50)
		fmt.Fprintf(w, `{"type":"user","uuid":"%s","parentUuid":"%s","sessionId":"33333333-3333-4333-8333-333333333333","timestamp":"%s","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"%s"}]},"toolUseResult":{"filePath":"/src/parser.go","originalFile":"%s"}}`+"\n", u(3), u(2), ts, i, result, result)
		fmt.Fprintf(w, `{"type":"assistant","uuid":"%s","parentUuid":"%s","sessionId":"33333333-3333-4333-8333-333333333333","timestamp":"%s","isSidechain":false,"message":{"id":"msg_%db","role":"assistant","content":[{"type":"text","text":"Fixed bug %d by changing a to b."}]}}`+"\n", u(4), u(3), ts, i, i)
		parent = `"` + u(4) + `"`
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	fh.Close()
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := ReadClaudeCode(path, Options{SessionEnded: true})
		if err != nil || len(res.Exchanges) != 5000 {
			b.Fatalf("%v: %d exchanges", err, len(res.Exchanges))
		}
	}
}

// checkSlim: cutting toolUseResult out of a valid line changes nothing the
// reader decodes.
func checkSlim(t *testing.T, line []byte) {
	if !json.Valid(line) {
		return
	}
	slim := slimToolUseResult(line)
	if !json.Valid(slim) {
		t.Fatalf("slim line is not JSON:\n%s\n%s", line, slim)
	}
	var a, b ccRecord
	errA := json.Unmarshal(line, &a)
	errB := json.Unmarshal(slim, &b)
	if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
		t.Fatalf("slim line decodes differently (%v / %v):\n%s\n%s", errA, errB, line, slim)
	}
}

func TestSlimToolUseResult(t *testing.T) {
	files, _ := filepath.Glob("testdata/claude/*.jsonl")
	shared, _ := filepath.Glob(sharedFixtures + "/claude-code/*.jsonl")
	for _, p := range append(files, shared...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkSlim(t, line)
		}
	}
	big := `{"type":"user","toolUseResult":{"originalFile":"` + strings.Repeat(`x\"}{[`, 100) + `","agentId":"a1"},"uuid":"u"}`
	if got := string(slimToolUseResult([]byte(big))); got != `{"type":"user","toolUseResult":{"agentId":"a1"},"uuid":"u"}` {
		t.Errorf("slim = %s", got)
	}
}
