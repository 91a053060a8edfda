package reader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitmem/git-mem/memory/queue"
)

// DisableEnv turns capture off for one session: set in an agent's
// environment, its hooks exit 0 and store nothing.
const DisableEnv = queue.DisableEnv

// CaptureDisabled reports whether DisableEnv is set to anything but "", "0",
// "false" or "no".
func CaptureDisabled() bool { return queue.CaptureDisabled() }

// ExcludeConfig names sessions the hooks and import skip.
type ExcludeConfig struct {
	// Projects are paths or globs (filepath.Match, ~ for the home folder)
	// of a session's working directory; a pattern also covers every
	// directory below what it matches. A pattern with no slash matches a
	// folder name at any depth.
	Projects []string `yaml:"projects"`
	// Agents are agent kinds (claude-code, codex, aider).
	Agents []string `yaml:"agents"`
}

func (x ExcludeConfig) validate() error {
	for _, a := range x.Agents {
		switch a {
		case "claude-code", "codex", "aider":
		default:
			return fmt.Errorf("config: exclude.agents: unknown agent %q (use claude-code, codex or aider)", a)
		}
	}
	for _, p := range x.Projects {
		if _, err := filepath.Match(p, ""); err != nil || strings.TrimSpace(p) == "" {
			return fmt.Errorf("config: exclude.projects: bad pattern %q: write a path or a glob like ~/work/client-*", p)
		}
	}
	return nil
}

// Excluded says why a session of agent run in cwd must not be stored, or
// "" when it may be.
func (c Config) Excluded(agent, cwd string) string {
	for _, a := range c.Exclude.Agents {
		if a == agent {
			return "agent " + agent + " is excluded in the config"
		}
	}
	if cwd == "" {
		return ""
	}
	home, _ := os.UserHomeDir()
	dir := filepath.Clean(cwd)
	for _, p := range c.Exclude.Projects {
		if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
			p = filepath.Join(home, p[1:])
		}
		for d := dir; ; d = filepath.Dir(d) {
			target := d
			if !strings.Contains(p, "/") {
				target = filepath.Base(d)
			}
			if ok, _ := filepath.Match(strings.TrimSuffix(filepath.Clean(p), "/**"), target); ok {
				return "project " + cwd + " is excluded in the config (" + p + ")"
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return ""
}
