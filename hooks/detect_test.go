package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Detect reads only a head of the file: a first record longer than it is
// cut, and goes by the first key that names a format.
func TestDetectCutAndBOM(t *testing.T) {
	big := strings.Repeat("x", 4<<20) // past the 256 KB head, as the 50 MB line that failed
	for _, tc := range []struct {
		name, content, want string
	}{
		{"bom", "\xEF\xBB\xBF{\"id\": \"a\", \"turns\": [{\"role\": \"user\", \"text\": \"Why?\"}]}\n", FormatExchange},
		{"long exchange", `{"id":"big","turns":[{"role":"user","text":"` + big + `"}]}` + "\n", FormatExchange},
		{"long exchange quoting a transcript", `{"turns":[{"role":"user","text":"\"sessionId\" ` + big + `"}]}` + "\n", FormatExchange},
		{"long claude record", `{"parentUuid":null,"sessionId":"s","type":"user","message":{"content":"` + big + `"}}` + "\n", FormatClaudeCode},
		{"long qwen-code record", `{"uuid":"u","parentUuid":null,"sessionId":"s","timestamp":"t","type":"user","cwd":"/p","version":"0.24.4","message":{"role":"user","parts":[{"text":"` + big + `"}]}}` + "\n", FormatQwenCode},
		{"qwen-code system record first", `{"uuid":"u","parentUuid":null,"sessionId":"s","timestamp":"t","type":"system","subtype":"session_source","cwd":"/p","version":"0.24.4","systemPayload":{"sourceType":"cli"}}` + "\n", FormatQwenCode},
		{"claude record with a version", `{"parentUuid":null,"sessionId":"s","version":"2.0.1","type":"user","message":{"role":"user","content":"hi"}}` + "\n", FormatClaudeCode},
		{"long codex record", `{"timestamp":"t","type":"session_meta","payload":{"x":"` + big + `"}}` + "\n", FormatCodex},
	} {
		p := filepath.Join(t.TempDir(), "in.jsonl")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Detect(p)
		if err != nil || got != tc.want {
			t.Errorf("%s: Detect = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
