package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Codex's config.toml is edited as text: only the top-level notify line and
// the [mcp_servers.git-mem] table are added or removed, every other byte is
// kept (comments, order, formatting).

// tomlScan walks a TOML document and reports top-level "key = value" spans
// and table headers, skipping strings, comments and multi-line arrays.
type tomlItem struct {
	header     bool   // a [table] or [[array]] line
	name       string // key or table name as written (trimmed)
	start, end int    // byte span, end after the line's newline
	value      string // raw value text for keys
}

func scanTOML(src string) []tomlItem {
	var items []tomlItem
	i := 0
	n := len(src)
	for i < n {
		// At a line start.
		ls := i
		for i < n && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		if i >= n {
			break
		}
		switch {
		case src[i] == '\n' || src[i] == '\r' || src[i] == '#':
			i = lineEnd(src, i)
			continue
		case src[i] == '[':
			e := lineEnd(src, i)
			h := strings.TrimSpace(stripComment(src[i:e]))
			items = append(items, tomlItem{header: true, name: h, start: ls, end: e})
			i = e
			continue
		}
		// key = value (the value may span lines inside brackets or
		// multi-line strings).
		eq := strings.IndexByte(src[i:lineEnd(src, i)], '=')
		if eq < 0 {
			i = lineEnd(src, i)
			continue
		}
		key := strings.TrimSpace(src[i : i+eq])
		vs := i + eq + 1
		ve := skipValue(src, vs)
		e := lineEnd(src, ve)
		items = append(items, tomlItem{name: key, start: ls, end: e, value: strings.TrimSpace(stripComment(src[vs:e]))})
		i = e
	}
	return items
}

// lineEnd is the index just past the newline ending the line holding i.
func lineEnd(src string, i int) int {
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(src)
}

// skipValue returns the index where a value starting at i ends (before any
// trailing comment and newline).
func skipValue(src string, i int) int {
	depth := 0
	n := len(src)
	for i < n {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], `"""`) || strings.HasPrefix(src[i:], `'''`):
			q := src[i : i+3]
			j := strings.Index(src[i+3:], q)
			if j < 0 {
				return n
			}
			i += 3 + j + 3
			for i < n && src[i] == q[0] { // """ may end with extra quotes
				i++
			}
			continue
		case c == '"':
			i++
			for i < n && src[i] != '"' && src[i] != '\n' {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			i++
			continue
		case c == '\'':
			j := strings.IndexAny(src[i+1:], "'\n")
			if j < 0 {
				return n
			}
			i += j + 2
			continue
		case c == '#':
			if depth == 0 {
				return i
			}
			i = lineEnd(src, i)
			continue
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == '\n':
			if depth <= 0 {
				return i
			}
		}
		i++
	}
	return n
}

func stripComment(s string) string {
	// Good enough for the lines we compare: headers and simple arrays.
	inStr := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr != 0:
			if c == '\\' && inStr == '"' {
				i++
			} else if c == inStr {
				inStr = 0
			}
		case c == '"' || c == '\'':
			inStr = c
		case c == '#':
			return s[:i]
		}
	}
	return s
}

// parseStringArray reads a TOML array of basic or literal strings.
func parseStringArray(v string) ([]string, bool) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
		return nil, false
	}
	body := v[1 : len(v)-1]
	var out []string
	i := 0
	for {
		for i < len(body) && strings.ContainsRune(" \t\r\n,", rune(body[i])) {
			i++
		}
		if i >= len(body) {
			return out, true
		}
		switch body[i] {
		case '"':
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(body) {
				return nil, false
			}
			s, err := strconv.Unquote(body[i : j+1])
			if err != nil {
				return nil, false
			}
			out = append(out, s)
			i = j + 1
		case '\'':
			j := strings.IndexByte(body[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			out = append(out, body[i+1:i+1+j])
			i += j + 2
		default:
			return nil, false
		}
	}
}

func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlArray(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// codexNotifyArgv is the notify command git mem installs.
func codexNotifyArgv(gitMemCmd string, opt InstallOptions) []string {
	return append(opt.argvFor(gitMemCmd), "hook", "codex")
}

// isOurNotify recognises a notify git mem installed, whatever the path.
func isOurNotify(argv []string) bool {
	n := len(argv)
	if n < 3 || argv[n-2] != "hook" || argv[n-1] != "codex" {
		return false
	}
	prog := stripMemDirArgv(argv[:n-2])
	return len(prog) == 1 && filepath.Base(prog[0]) == "git-mem" ||
		len(prog) == 2 && prog[0] == "git" && prog[1] == "mem"
}

// isOurMCPTable says whether a [mcp_servers.git-mem] table holds only the
// command and args lines git mem writes, so it may be rewritten.
func isOurMCPTable(table string) bool {
	for _, it := range scanTOML(table) {
		if !it.header && it.name != "command" && it.name != "args" {
			return false
		}
	}
	return true
}

func isMCPHeader(h string) bool {
	h = strings.Join(strings.Fields(h), "")
	return h == "[mcp_servers.git-mem]" || h == `[mcp_servers."git-mem"]` || h == `[mcp_servers.'git-mem']`
}

type textFile struct {
	path   string
	exists bool
	src    string
	mode   fs.FileMode
}

func loadText(path string) (*textFile, error) {
	tf := &textFile{path: path, mode: 0o644}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		tf.path = real
	}
	b, err := os.ReadFile(tf.path)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if st, err := os.Stat(tf.path); err == nil {
		tf.mode = st.Mode().Perm()
	}
	tf.exists, tf.src = true, string(b)
	return tf, nil
}

// InstallCodex sets notify = ["git-mem", "hook", "codex"] at the top of
// Codex's config.toml (and with MCP a [mcp_servers.git-mem] table). It
// refuses to replace a notify another program set. Codex reads notify only
// from the user config, so the project scope is refused.
func InstallCodex(configTomlPath, gitMemCmd string, opt InstallOptions) (string, error) {
	if opt.Scope == ScopeProject {
		return "", errors.New("install codex hook: Codex reads notify only from ~/.codex/config.toml; use --scope user")
	}
	if err := checkScope(opt.Scope); err != nil {
		return "", fmt.Errorf("install codex hook: %w", err)
	}
	tf, err := loadText(configTomlPath)
	if err != nil {
		return "", fmt.Errorf("install codex hook: %w", err)
	}
	src := tf.src
	want := codexNotifyArgv(gitMemCmd, opt)
	line := "notify = " + tomlArray(want) + "\n"
	items := scanTOML(src)
	firstHeader := len(src)
	var notify *tomlItem
	for i := range items {
		it := &items[i]
		if it.header {
			firstHeader = it.start
			break
		}
		if it.name == "notify" {
			notify = it
		}
	}
	switch {
	case notify != nil:
		argv, ok := parseStringArray(notify.value)
		if !ok || !isOurNotify(argv) {
			return "", fmt.Errorf("install codex hook: %s already sets notify = %s; git mem will not replace another program's notify: remove that line (or make your notify program also run `git-mem hook codex <json>`), then run the install again", configTomlPath, strings.TrimSpace(notify.value))
		}
		if !equalStrings(argv, want) {
			src = src[:notify.start] + line + src[notify.end:]
		}
	default:
		ins := line
		if firstHeader < len(src) {
			ins += "\n"
		}
		before := src[:firstHeader]
		if before != "" && !strings.HasSuffix(before, "\n") {
			ins = "\n" + ins
		}
		src = before + ins + src[firstHeader:]
	}
	if opt.MCP {
		argv := opt.argvFor(gitMemCmd)
		table := "[mcp_servers.git-mem]\ncommand = " + tomlString(argv[0]) + "\nargs = " + tomlArray(append(argv[1:], "mcp")) + "\n"
		has := false
		items := scanTOML(src)
		for i, it := range items {
			if !it.header || !isMCPHeader(it.name) {
				continue
			}
			has = true
			end := len(src)
			for _, nx := range items[i+1:] {
				if nx.header {
					end = nx.start
					break
				}
			}
			// A table we wrote for another memory (or command) is
			// rewritten; one the user extended is left alone.
			old := src[it.start:end]
			body := strings.TrimRight(old, "\n")
			blank := strings.TrimPrefix(old[len(body):], "\n")
			if body+"\n" != table && isOurMCPTable(old) {
				src = src[:it.start] + table + blank + src[end:]
			}
			break
		}
		if !has {
			if src != "" && !strings.HasSuffix(src, "\n") {
				src += "\n"
			}
			if src != "" {
				src += "\n"
			}
			src += table
		}
	}
	if tf.exists && src == tf.src {
		return "codex notify already set in " + configTomlPath, nil
	}
	if _, err := writeIfChanged(tf.path, tf.exists, []byte(tf.src), []byte(src), tf.mode); err != nil {
		return "", fmt.Errorf("install codex hook: %w", err)
	}
	msg := "wrote notify = " + tomlArray(want) + " to " + configTomlPath
	if opt.MCP {
		msg += " with [mcp_servers.git-mem]"
	}
	return msg, nil
}

// UninstallCodex removes git mem's notify line and [mcp_servers.git-mem]
// table; a notify of another program is left alone.
func UninstallCodex(configTomlPath string, opt InstallOptions) (string, error) {
	tf, err := loadText(configTomlPath)
	if err != nil {
		return "", fmt.Errorf("uninstall codex hook: %w", err)
	}
	if !tf.exists {
		return "nothing to remove: " + configTomlPath + " does not exist", nil
	}
	src := tf.src
	items := scanTOML(src)
	var removed []string
	// Remove from the end so earlier spans stay valid.
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		if it.header && isMCPHeader(it.name) {
			end := len(src)
			for _, nx := range items[i+1:] {
				if nx.header {
					end = nx.start
					break
				}
			}
			start := it.start
			// Take the blank line we put before the table with it.
			if start >= 2 && src[start-1] == '\n' && src[start-2] == '\n' {
				start--
			}
			src = src[:start] + src[end:]
			removed = append(removed, "[mcp_servers.git-mem]")
		}
	}
	for _, it := range scanTOML(src) {
		if it.header {
			break
		}
		if it.name != "notify" {
			continue
		}
		if argv, ok := parseStringArray(it.value); ok && isOurNotify(argv) {
			end := it.end
			// Drop the blank line InstallCodex put after the line.
			if end < len(src) && src[end] == '\n' && (it.start == 0 || src[it.start-1] == '\n') {
				end++
			}
			src = src[:it.start] + src[end:]
			removed = append(removed, "notify")
		}
		break
	}
	if len(removed) == 0 {
		return "no git mem notify in " + configTomlPath, nil
	}
	what := "removed " + strings.Join(removed, " and ")
	if strings.TrimSpace(src) == "" {
		// Left empty: removed, as saveUninstalled does for a JSON file.
		if err := os.Remove(tf.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("uninstall codex hook: remove %s: %w", configTomlPath, err)
		}
		return what + " and the file " + configTomlPath + ", left empty", nil
	}
	if _, err := writeIfChanged(tf.path, true, []byte(tf.src), []byte(src), tf.mode); err != nil {
		return "", fmt.Errorf("uninstall codex hook: %w", err)
	}
	return what + " from " + configTomlPath, nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
