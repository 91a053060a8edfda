package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExcluded(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	c := Config{Exclude: ExcludeConfig{
		Projects: []string{"~/work/client-*", "/srv/secret", "scratch", "/data/**"},
		Agents:   []string{"aider"},
	}}
	for _, tc := range []struct {
		agent, cwd string
		excluded   bool
	}{
		{"claude-code", filepath.Join(home, "work/client-acme"), true},
		{"claude-code", filepath.Join(home, "work/client-acme/api/internal"), true},
		{"claude-code", filepath.Join(home, "work/clientele"), false},
		{"codex", "/srv/secret", true},
		{"codex", "/srv/secret/x", true},
		{"codex", "/srv/secretive", false},
		{"codex", "/home/me/scratch/tmp", true},
		{"codex", "/home/me/scratchpad", false},
		{"codex", "/data/lake/2026", true},
		{"codex", "/database", false},
		{"aider", "/anything", true},
		{"aider", "", true},
		{"claude-code", "", false},
	} {
		got := c.Excluded(tc.agent, tc.cwd)
		if (got != "") != tc.excluded {
			t.Errorf("Excluded(%q, %q) = %q, want excluded %v", tc.agent, tc.cwd, got, tc.excluded)
		}
	}
}

func TestExcludeConfigErrors(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, tc := range []struct{ yaml, want string }{
		{"exclude:\n  agents: [cursor]\n", `unknown agent "cursor"`},
		{"exclude:\n  projects: ['/a/[b']\n", `bad pattern "/a/[b"`},
		{"exclude:\n  projects: ['~/ok/*']\n  agents: [codex]\n", ""},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(tc.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(dir)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestCaptureDisabled(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "yes": true, "true": true} {
		t.Setenv(DisableEnv, v)
		if got := CaptureDisabled(); got != want {
			t.Errorf("%s=%q: disabled %v, want %v", DisableEnv, v, got, want)
		}
	}
}
