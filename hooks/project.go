package hooks

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/hooks/hookinput"
	"github.com/gitmem/git-mem/internal/lazy"
)

// ProjectFromCwd names the project a session ran in: the repository name of
// the git remote "origin" when the folder (or a parent) is a git checkout
// with one, else the checkout's (or folder's) base name. A cwd that does not
// exist on this machine (an imported transcript) gives its base name.
func ProjectFromCwd(cwd string) string {
	return projectFor(cwd, "")
}

// projectFor is ProjectFromCwd with a fallback remote URL recorded in the
// transcript itself (Codex session_meta.git), used when the checkout is not
// on this machine.
func projectFor(cwd, remote string) string {
	cwd = filepath.Clean(cwd)
	if filepath.IsAbs(cwd) {
		if st, err := os.Stat(cwd); err == nil && st.IsDir() {
			for dir := cwd; ; {
				if name, ok := repoName(dir); ok {
					return name
				}
				parent := filepath.Dir(dir)
				if parent == dir {
					break
				}
				dir = parent
			}
		}
	}
	if name := repoFromURL(remote); name != "" {
		return name
	}
	base := filepath.Base(cwd)
	if base == "." || base == string(filepath.Separator) {
		return ""
	}
	return base
}

// repoName reads dir/.git: the origin's repository name, else dir's name.
// ok is false when dir is not a checkout.
func repoName(dir string) (string, bool) {
	gitPath := filepath.Join(dir, ".git")
	st, err := os.Stat(gitPath)
	if err != nil {
		return "", false
	}
	gitDir := gitPath
	if !st.IsDir() {
		// A worktree or submodule: ".git" is a file "gitdir: <path>".
		b, err := os.ReadFile(gitPath)
		if err != nil {
			return filepath.Base(dir), true
		}
		line := strings.TrimSpace(string(b))
		if !strings.HasPrefix(line, "gitdir:") {
			return filepath.Base(dir), true
		}
		gitDir = strings.TrimSpace(strings.TrimPrefix(line, "gitdir:"))
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(dir, gitDir)
		}
		if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			common := strings.TrimSpace(string(c))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gitDir, common)
			}
			gitDir = common
		}
	}
	if u := originURL(filepath.Join(gitDir, "config")); u != "" {
		if name := repoFromURL(u); name != "" {
			return name, true
		}
	}
	return filepath.Base(dir), true
}

// originURL returns remote.origin.url from a git config file.
func originURL(configPath string) string {
	f, err := os.Open(configPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	in := false
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "[") {
			h := strings.ToLower(strings.Join(strings.Fields(strings.Trim(l, "[]")), " "))
			in = h == `remote "origin"`
			continue
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "url") {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

var scpURLRe = lazy.Regexp(`^(?:[^@/]+@)?[^:/]+:(.+)$`)

// repoFromURL is the repository name of a remote URL, credentials dropped:
// https://user:tok@host/org/repo.git, git@host:org/repo.git, /srv/repo.git
// all give "repo".
func repoFromURL(u string) string {
	u = strings.TrimSpace(u)
	if u == "" {
		return ""
	}
	var p string
	if pu, err := url.Parse(u); err == nil && pu.Scheme != "" && pu.Host != "" {
		p = pu.Path
	} else if m := scpURLRe().FindStringSubmatch(u); m != nil && !strings.HasPrefix(u, "/") {
		p = m[1]
	} else {
		p = filepath.ToSlash(u)
	}
	p = strings.TrimRight(p, "/")
	name := strings.TrimSuffix(path.Base(p), ".git")
	if name == "." || name == "/" || name == "" || strings.ContainsAny(name, "@:") {
		return ""
	}
	return name
}

// ClaudeHookInput is what Claude Code writes on a hook's stdin.
type ClaudeHookInput = hookinput.Claude

// ParseClaudeHook decodes a hook's stdin (at most 16 MiB).
func ParseClaudeHook(r io.Reader) (ClaudeHookInput, error) { return hookinput.ParseClaude(r) }

// ClaudeConfigDir is $CLAUDE_CONFIG_DIR, else ~/.claude.
func ClaudeConfigDir(home string) string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(home, ".claude")
}

// CodexHome is $CODEX_HOME, else ~/.codex.
func CodexHome(home string) string {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(home, ".codex")
}

// CodexSessionsDir is where Codex keeps its rollouts.
func CodexSessionsDir(home string) string { return filepath.Join(CodexHome(home), "sessions") }

// CodexConfigPath is Codex's user config; notify is only read from there.
func CodexConfigPath(home string) string { return filepath.Join(CodexHome(home), "config.toml") }

// ListSessions lists the transcripts an importer should read, oldest first:
// kind "claude-code" (root default ~/.claude/projects; subagent transcripts
// are left out, they are read with their parent) or "codex" (root default
// ~/.codex/sessions and ~/.codex/archived_sessions, rollout-*.jsonl).
func ListSessions(kind, root string) ([]string, error) {
	var extra []string // default roots that may be absent
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("list %s sessions: %w", kind, err)
		}
		switch kind {
		case FormatClaudeCode:
			root = filepath.Join(ClaudeConfigDir(home), "projects")
		case FormatCodex:
			root = CodexSessionsDir(home)
			extra = append(extra, filepath.Join(CodexHome(home), "archived_sessions"))
		}
	}
	type entry struct {
		path string
		mod  int64
	}
	var list []entry
	var keep func(p string, d fs.DirEntry) bool
	switch kind {
	case FormatClaudeCode:
		keep = func(p string, d fs.DirEntry) bool {
			n := d.Name()
			return strings.HasSuffix(n, ".jsonl") && !strings.HasPrefix(n, "agent-") &&
				filepath.Base(filepath.Dir(p)) != "subagents"
		}
	case FormatCodex:
		keep = func(p string, d fs.DirEntry) bool {
			n := d.Name()
			return strings.HasPrefix(n, "rollout-") && strings.HasSuffix(n, ".jsonl")
		}
	default:
		a, ok := docAgents[kind]
		if !ok {
			return nil, fmt.Errorf("list sessions: unknown agent %q (use %s)", kind, strings.Join(Formats(), ", "))
		}
		keep = a.keep
		if root == "" {
			home, _ := os.UserHomeDir()
			roots := a.roots(home)
			if len(roots) == 0 {
				return nil, nil // found only where the user points (SpecStory)
			}
			root, extra = roots[0], roots[1:]
			if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
				// Only the other roots may exist (another editor, an older layout).
				extra = roots
				root = ""
			}
		}
	}
	walk := func(root string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == root {
					return err
				}
				return nil // an unreadable subfolder should not stop an import
			}
			if d.IsDir() {
				if d.Name() == "subagents" || d.Name() == "tool-results" || d.Name() == "node_modules" {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !keep(p, d) {
				return nil
			}
			var mod int64
			if info, err := d.Info(); err == nil {
				mod = info.ModTime().UnixNano()
			}
			list = append(list, entry{p, mod})
			return nil
		})
	}
	if root != "" {
		if err := walk(root); err != nil {
			return nil, fmt.Errorf("list %s sessions under %s: %w", kind, root, err)
		}
	}
	for _, r := range extra {
		if err := walk(r); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("list %s sessions under %s: %w", kind, r, err)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if kind == FormatCodex {
			// Codex names start with the time; archived ones live elsewhere.
			bi, bj := filepath.Base(list[i].path), filepath.Base(list[j].path)
			if bi != bj {
				return bi < bj
			}
			return list[i].path < list[j].path
		}
		if list[i].mod == list[j].mod {
			return list[i].path < list[j].path
		}
		return list[i].mod < list[j].mod
	})
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.path
	}
	return out, nil
}

// editTools name the tools that modify the file named in their input, by
// agent, with the input keys that may hold its path (first found wins).
var editTools = map[string][]string{
	// (Continue's CLI names its tools Edit, MultiEdit and Write too, but
	// its Write takes "filepath".)
	"Edit": {"file_path"}, "MultiEdit": {"file_path"}, "Write": {"file_path", "path", "filepath"},
	"NotebookEdit": {"notebook_path"},
	// Gemini CLI (Qwen Code: write_file, and edit below)
	"replace": {"file_path"}, "write_file": {"file_path"},
	// Cline, Roo Code
	"write_to_file": {"path"}, "replace_in_file": {"path"}, "apply_diff": {"path"},
	"insert_content": {"path"}, "search_and_replace": {"path"},
	// Cline SDK (apply_patch: through its headers, below)
	"editor": {"path"},
	// Cursor (database; its transcripts: StrReplace, Write, Delete by path);
	// Roo Code's edit_file, edit and search_replace take file_path
	"edit_file": {"target_file", "file_path"}, "search_replace": {"file_path"}, "StrReplace": {"path"}, "Delete": {"path"},
	// OpenCode (filePath), Copilot CLI (path), Qwen Code (file_path)
	"edit": {"filePath", "path", "file_path"}, "write": {"filePath"}, "multiedit": {"filePath"},
	"create": {"path"}, "str_replace_editor": {"path"},
	// Continue
	"edit_existing_file": {"filepath"}, "create_new_file": {"filepath"},
	"single_find_and_replace": {"filepath"}, "multi_edit": {"filepath"},
}

var patchHeaderRe = lazy.Regexp(`(?m)^\*\*\* (?:Update File|Add File|Delete File|Move to): *(.+?)\s*$`)
var aiderAppliedRe = lazy.Regexp(`(?m)^Applied edit to (.+?)\s*$`)

// FilesTouched lists the files an exchange modified, in first-seen order:
// Claude Code Edit/MultiEdit/Write/NotebookEdit inputs, apply_patch headers
// in any tool input (Codex), and Aider's "Applied edit to" lines. Files only
// read, and edits that failed or were refused, are not included. Paths are
// as the agent wrote them.
func FilesTouched(ex *exchange.Exchange) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = strings.TrimSpace(p)
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, t := range ex.Turns {
		switch t.Role {
		case exchange.RoleTool:
			if t.Extra["is_error"] == true {
				continue // a refused or failed edit left the file as it was
			}
			if m, ok := t.Input.(map[string]any); ok {
				for _, key := range editTools[t.Name] {
					if s, ok := m[key].(string); ok {
						add(s)
						break
					}
				}
			}
			walkStrings(t.Input, func(s string) {
				if strings.Contains(s, "*** ") {
					for _, m := range patchHeaderRe().FindAllStringSubmatch(s, -1) {
						add(m[1])
					}
				}
			})
		case exchange.RoleSystem:
			if ex.Agent == AgentAider {
				for _, m := range aiderAppliedRe().FindAllStringSubmatch(t.Text, -1) {
					add(m[1])
				}
			}
		}
	}
	return out
}

func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(x[k], fn)
		}
	}
}
