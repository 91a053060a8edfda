package distill

import (
	"path"
	"strings"

	"github.com/gitmem/git-mem/exchange"
)

// MaxFiles caps the files of a card: past a handful, a list of paths stops
// telling what the exchange was about (think `ls -R` output).
const MaxFiles = 20

// pathKeys are the tool-input keys that name a file across agents
// (Claude Code, Codex, Cursor exports; "filepath": Continue).
var pathKeys = map[string]bool{"file_path": true, "path": true, "filePath": true,
	"notebook_path": true, "target_file": true, "filename": true, "filepath": true}

// editTools are tool names that change a file: their paths are "edited".
var editTools = map[string]bool{"edit_file": true, "search_replace": true, "write": true,
	"apply_patch": true, "Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true,
	"str_replace_editor": true, "create_file": true, "delete_file": true, "write_file": true,
	"replace_in_file": true, "edit": true, "patch": true}

// FilesTouched returns every file path an exchange touches or names: first
// the tool inputs, diff and patch headers, prompt and replies in turn order,
// then paths found only in tool output, deduplicated in order of first
// appearance and capped at MaxFiles. Files are always found here, never
// invented by a model: the LLM distiller's answer is checked against this
// list.
func FilesTouched(ex *exchange.Exchange) []string {
	if ex == nil {
		return nil
	}
	fs := &fileSet{seen: map[string]bool{}}
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleTool {
			inputPaths(t.Input, fs)
			diffHeaders(t.Text, fs)
			if s, ok := t.Input.(string); ok {
				diffHeaders(s, fs)
				scanPaths(s, fs)
			}
			if m, ok := t.Input.(map[string]any); ok {
				for k, v := range m {
					if s, ok := v.(string); ok && !pathKeys[k] {
						diffHeaders(s, fs)
						if k == "command" || k == "patch" || k == "input" {
							scanPaths(s, fs)
						}
					}
				}
			}
			continue
		}
		if t.Role == exchange.RoleSystem {
			continue
		}
		text := t.Text
		if t.Role == exchange.RoleUser {
			text = stripInjected(text)
		}
		diffHeaders(text, fs)
		scanPaths(text, fs)
	}
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleTool && len(fs.list) < MaxFiles {
			scanPaths(t.Text, fs)
		}
	}
	return fs.result()
}

// editedFiles returns the paths named by file-changing tool calls.
func editedFiles(ex *exchange.Exchange) []string {
	fs := &fileSet{seen: map[string]bool{}}
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleTool && editTools[t.Name] {
			inputPaths(t.Input, fs)
			diffHeaders(t.Text, fs)
		}
	}
	return fs.result()
}

type fileSet struct {
	seen map[string]bool
	list []string
}

func (fs *fileSet) add(p string) {
	p = strings.TrimPrefix(strings.TrimSpace(p), "./")
	if p == "" || p == "undefined" || p == "null" || fs.seen[p] || len(fs.list) >= MaxFiles*2 {
		return
	}
	fs.seen[p] = true
	fs.list = append(fs.list, p)
}

// result drops a bare name when a longer path with the same base is listed,
// then caps the list.
func (fs *fileSet) result() []string {
	bases := map[string]bool{}
	for _, p := range fs.list {
		if strings.Contains(p, "/") {
			bases[path.Base(p)] = true
		}
	}
	var out []string
	for _, p := range fs.list {
		if !strings.Contains(p, "/") && bases[p] {
			continue
		}
		out = append(out, p)
		if len(out) == MaxFiles {
			break
		}
	}
	return out
}

// inputPaths collects path-valued keys of a tool input, at any depth.
func inputPaths(v any, fs *fileSet) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && pathKeys[k] {
				if !strings.Contains(s, "://") && !strings.ContainsAny(s, "\n*?") && len(s) < 300 {
					fs.add(s)
				}
				continue
			}
			inputPaths(e, fs)
		}
	case []any:
		for _, e := range x {
			inputPaths(e, fs)
		}
	}
}

// diffHeaders reads apply_patch ("*** Update File: x") and unified diff
// ("+++ b/x") headers.
func diffHeaders(s string, fs *fileSet) {
	if !strings.Contains(s, "*** ") && !strings.Contains(s, "+++ ") {
		return
	}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: "} {
			if strings.HasPrefix(line, p) {
				fs.add(strings.TrimSpace(line[len(p):]))
			}
		}
		if strings.HasPrefix(line, "+++ ") {
			p := strings.TrimSpace(line[4:])
			if i := strings.IndexByte(p, '\t'); i >= 0 {
				p = p[:i]
			}
			if p != "/dev/null" {
				p = strings.TrimPrefix(strings.TrimPrefix(p, "b/"), "a/")
				if looksLikePath(p) {
					fs.add(p)
				}
			}
		}
	}
}

// knownExt are extensions that make a bare name (no directory) a file.
var knownExt = map[string]bool{
	"go": true, "py": true, "ts": true, "tsx": true, "js": true, "jsx": true, "mjs": true, "cjs": true,
	"json": true, "jsonl": true, "md": true, "mdx": true, "mdc": true, "yaml": true, "yml": true, "toml": true,
	"cs": true, "csproj": true, "sln": true, "rs": true, "java": true, "kt": true, "swift": true,
	"rb": true, "php": true, "cpp": true, "hpp": true, "cc": true, "css": true, "scss": true,
	"sass": true, "less": true, "html": true, "vue": true, "svelte": true, "sql": true, "sh": true,
	"bash": true, "zsh": true, "ps1": true, "psm1": true, "txt": true, "xml": true, "ini": true,
	"cfg": true, "conf": true, "lock": true, "gradle": true, "prisma": true, "graphql": true,
	"proto": true, "dart": true, "lua": true, "exs": true, "ipynb": true, "csv": true, "tsv": true,
	"svg": true, "png": true, "jpg": true, "jpeg": true, "gif": true, "webp": true, "pdf": true,
	"tf": true, "razor": true, "cshtml": true, "xaml": true, "resx": true, "fs": true, "fsproj": true,
	"vbproj": true, "targets": true, "nuspec": true, "config": true, "scala": true, "zig": true,
	"vim": true, "el": true, "sol": true, "astro": true, "njk": true, "hbs": true, "ejs": true,
	"pyi": true, "mod": false, "c": false, "h": false, "log": false, "env": false,
}

// weakExt need a directory to count: bare "console.log" or "process.env" is
// code, not a file.
var weakExt = map[string]bool{"c": true, "h": true, "log": true, "env": true, "mod": true,
	"sum": true, "r": true, "ex": true, "props": true, "data": true, "out": true, "bak": true,
	"tmp": true, "dll": true, "exe": true, "so": true, "o": true, "a": true, "zip": true, "gz": true}

// bareNames are extensionless files worth recording.
var bareNames = map[string]bool{"Makefile": true, "Dockerfile": true, "Gemfile": true,
	"Rakefile": true, "Procfile": true, "Justfile": true, "Jenkinsfile": true, "Vagrantfile": true,
	".env": true, ".gitignore": true, ".dockerignore": true, ".editorconfig": true, ".npmrc": true,
	".env.local": true, ".env.example": true, "go.mod": true, "go.sum": true, ".gitattributes": true}

// techNames look like files but are product names in prose.
var techNames = map[string]bool{"node.js": true, "next.js": true, "nuxt.js": true, "vue.js": true,
	"react.js": true, "express.js": true, "three.js": true, "p5.js": true, "d3.js": true,
	"chart.js": true, "ember.js": true, "angular.js": true, "nest.js": true, "alpine.js": true,
	"socket.io": true, "deno.js": true, "bun.js": true, "asp.net": true, "ml.net": true,
	"vue.config.js": false}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '/' || c == '@' || c == '(' || c == ')' ||
		c == '[' || c == ']' || c == '~' || c == '+' || c == '%'
}

// scanPaths finds path-looking tokens in free text. It walks the bytes once,
// expanding around each '.' or '/', so it stays fast on megabytes of output.
func scanPaths(s string, fs *fileSet) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '.' && c != '/' {
			continue
		}
		a, e := i, i
		for a > 0 && isPathByte(s[a-1]) {
			a--
		}
		for e < len(s) && isPathByte(s[e]) {
			e++
		}
		i = e
		tok := s[a:e]
		// URLs (also file://) and e-mail-like tokens are not files.
		if e+2 < len(s) && s[e] == ':' && s[e+1] == '/' && s[e+2] == '/' {
			continue
		}
		if a >= 3 && s[a-3:a] == "://" || a >= 1 && s[a-1] == ':' && strings.HasPrefix(tok, "//") {
			continue
		}
		if e < len(s) && s[e] == '(' {
			continue
		}
		// host:path of scp-style git remotes (git@github.com:owner/repo.git)
		// and HTML attributes are not files of the project.
		if a >= 2 && s[a-1] == ':' && isPathByte(s[a-2]) || a >= 2 && s[a-1] == '"' && s[a-2] == '=' {
			continue
		}
		if p, ok := cleanPathToken(tok); ok {
			fs.add(p)
			if len(fs.list) >= MaxFiles*2 {
				return
			}
		}
	}
}

// cleanPathToken trims punctuation around a candidate and decides whether
// it names a file.
func cleanPathToken(tok string) (string, bool) {
	tok = strings.TrimLeft(tok, ",+~")
	// Compiler positions: src/Foo.cs(12,5) names src/Foo.cs.
	if i := strings.IndexByte(tok, '('); i > 0 && i+1 < len(tok) && tok[i+1] >= '0' && tok[i+1] <= '9' {
		tok = tok[:i]
	}
	if strings.HasPrefix(tok, "@") {
		// Editor mentions: @prompt.md, @/components/x.tsx.
		tok = strings.TrimPrefix(strings.TrimPrefix(tok, "@"), "/")
	}
	for {
		n := len(tok)
		tok = strings.TrimRight(tok, ".,:;")
		// Unbalanced closing brackets come from the surrounding prose.
		if strings.HasSuffix(tok, ")") && strings.Count(tok, "(") < strings.Count(tok, ")") {
			tok = tok[:len(tok)-1]
		}
		if strings.HasSuffix(tok, "]") && strings.Count(tok, "[") < strings.Count(tok, "]") {
			tok = tok[:len(tok)-1]
		}
		if strings.HasPrefix(tok, "(") && strings.Count(tok, "(") > strings.Count(tok, ")") {
			tok = tok[1:]
		}
		if strings.HasPrefix(tok, "[") && strings.Count(tok, "[") > strings.Count(tok, "]") {
			tok = tok[1:]
		}
		if len(tok) == n {
			break
		}
	}
	if strings.HasSuffix(tok, "()") || strings.HasPrefix(tok, "@") && !strings.Contains(tok, ".") {
		return "", false
	}
	if strings.HasPrefix(tok, "(") || strings.Contains(tok, "node_modules/") || strings.Contains(tok, "/_next/") {
		return "", false
	}
	if strings.HasPrefix(tok, "//") || strings.Contains(tok, "%") || strings.Contains(tok, "@") && !strings.HasPrefix(tok, "@") {
		return "", false
	}
	if !looksLikePath(tok) {
		return "", false
	}
	return tok, true
}

// looksLikePath accepts a name with a known extension, a path with a
// directory and a file extension, or a known extensionless file.
func looksLikePath(p string) bool {
	if len(p) < 3 || len(p) > 260 || strings.Contains(p, "://") || strings.Contains(p, "...") {
		return false
	}
	base := path.Base(strings.TrimRight(p, "/"))
	if strings.HasSuffix(p, "/") {
		return false
	}
	if bareNames[base] {
		return true
	}
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || dot == len(base)-1 {
		// Dotfiles like .eslintrc.json have a later dot; ".npmrc" is in bareNames.
		return false
	}
	stem, ext := base[:dot], base[dot+1:]
	if !hasLetter(stem) || strings.Trim(stem, "._-") == "" {
		return false
	}
	for i := 0; i < len(ext); i++ {
		c := ext[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	if !hasLetter(ext) {
		return false // versions: 1.2.3, v2.0
	}
	if techNames[strings.ToLower(base)] && !strings.Contains(p, "/") {
		return false
	}
	hasDir := strings.Contains(p, "/")
	if knownExt[ext] {
		return true
	}
	if weakExt[ext] || len(ext) > 6 {
		return hasDir && !strings.HasPrefix(p, "/") || hasDir && strings.Count(p, "/") >= 2
	}
	// An unknown extension needs a directory: "src/foo.xyz" is a file,
	// "e.g" and "ex.Project" are not.
	return hasDir && strings.Count(p, "/") >= 1 && len(ext) <= 5 && !strings.HasPrefix(p, "/")
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}
