package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// InstallOptions says where and what to install.
type InstallOptions struct {
	Scope     string // "user" (default) or "project"
	NoContext bool   // do not inject recalled memories at session start
	MCP       bool   // also register git mem's MCP server
	// MCPPath overrides where the MCP server is registered (default: see
	// ClaudeMCPPath, derived from the settings path).
	MCPPath string
	// MemDir, when set, is written into every installed command
	// (--mem-dir DIR), so hooks and the MCP server use the memory they were
	// installed for, not the default ~/.git-mem.
	MemDir string
}

// Scopes of an installation.
const (
	ScopeUser    = "user"
	ScopeProject = "project"
)

// Handler timeouts in seconds. Claude Code gives SessionEnd hooks 1.5 s in
// all unless a handler asks for more; our command returns in under a second
// and queues slow work, so 5 s is headroom, not a wait.
const (
	claudeHookTimeout    = 5
	claudeContextTimeout = 5
)

// ClaudeSettingsPath is the settings file of a scope: ~/.claude/settings.json
// (user) or <cwd>/.claude/settings.json (project).
func ClaudeSettingsPath(scope, home, cwd string) string {
	if scope == ScopeProject {
		return filepath.Join(cwd, ".claude", "settings.json")
	}
	return filepath.Join(ClaudeConfigDir(home), "settings.json")
}

// ClaudeMCPPath is where Claude Code reads MCP servers of a scope:
// ~/.claude.json (user) or <cwd>/.mcp.json (project).
func ClaudeMCPPath(scope, home, cwd string) string {
	if scope == ScopeProject {
		return filepath.Join(cwd, ".mcp.json")
	}
	return filepath.Join(home, ".claude.json")
}

// mcpPathFor derives the MCP file from a settings path laid out as
// ClaudeSettingsPath does: <root>/.claude/settings.json → <root>/.claude.json
// (user) or <root>/.mcp.json (project).
func mcpPathFor(settingsPath string, opt InstallOptions) string {
	if opt.MCPPath != "" {
		return opt.MCPPath
	}
	root := filepath.Dir(filepath.Dir(settingsPath))
	if opt.Scope == ScopeProject {
		return filepath.Join(root, ".mcp.json")
	}
	return filepath.Join(root, ".claude.json")
}

func checkScope(scope string) error {
	switch scope {
	case "", ScopeUser, ScopeProject:
		return nil
	}
	return fmt.Errorf("unknown scope %q (use user or project)", scope)
}

// shellWord quotes a command path for a shell command line when needed.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// gitMemCommand is the shell command prefix that runs git mem: "git mem"
// (git finds git-mem on PATH) is kept as is, anything else is one program.
func gitMemCommand(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" {
		return "git-mem"
	}
	if cmd == "git mem" {
		return cmd
	}
	return shellWord(cmd)
}

// gitMemArgv is the argv prefix for exec-form configs (Codex notify, MCP).
func gitMemArgv(cmd string) []string {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" {
		return []string{"git-mem"}
	}
	if cmd == "git mem" {
		return []string{"git", "mem"}
	}
	return []string{cmd}
}

// commandFor is gitMemCommand with the memory named (see MemDir).
func (o InstallOptions) commandFor(cmd string) string {
	c := gitMemCommand(cmd)
	if o.MemDir != "" {
		c += " --mem-dir " + shellWord(o.MemDir)
	}
	return c
}

// argvFor is gitMemArgv with the memory named (see MemDir).
func (o InstallOptions) argvFor(cmd string) []string {
	argv := gitMemArgv(cmd)
	if o.MemDir != "" {
		argv = append(argv, "--mem-dir", o.MemDir)
	}
	return argv
}

// stripMemDirArg removes a trailing " --mem-dir WORD" from a shell command
// prefix, WORD plain or single-quoted as shellWord writes it.
func stripMemDirArg(prog string) string {
	i := strings.LastIndex(prog, " --mem-dir ")
	if i < 0 {
		return prog
	}
	w := strings.TrimSpace(prog[i+len(" --mem-dir "):])
	if shellWord(shellUnquote(w)) != w {
		return prog
	}
	return strings.TrimSpace(prog[:i])
}

func shellUnquote(w string) string {
	if len(w) >= 2 && w[0] == '\'' && w[len(w)-1] == '\'' {
		return strings.ReplaceAll(w[1:len(w)-1], `'\''`, "'")
	}
	return w
}

// stripMemDirArgv removes a trailing "--mem-dir", DIR from an argv prefix.
func stripMemDirArgv(argv []string) []string {
	if n := len(argv); n >= 2 && argv[n-2] == "--mem-dir" {
		return argv[:n-2]
	}
	return argv
}

// --- ordered JSON: settings files are edited, not regenerated, so every key
// keeps its place and value.

type jobj struct {
	keys []string
	vals map[string]any
}

func (o *jobj) get(k string) (any, bool) { v, ok := o.vals[k]; return v, ok }

// empty: no keys, or only a "version" of 1 (a versioned hooks file with no hooks).
func (o *jobj) empty() bool {
	if len(o.keys) == 1 {
		v, _ := o.get("version")
		return o.keys[0] == "version" && fmt.Sprint(v) == "1"
	}
	return len(o.keys) == 0
}

func (o *jobj) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *jobj) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

func newObj() *jobj { return &jobj{vals: map[string]any{}} }

func (o *jobj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalNoEscape(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// parseOrdered decodes one JSON value keeping object key order and numbers.
func parseOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObj()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

// encodeOrdered writes v with two-space indentation, as Claude Code does.
func encodeOrdered(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// jsonFile is a settings file read for editing.
type jsonFile struct {
	path   string // the real file (symlinks resolved)
	exists bool
	orig   []byte
	base   []byte // orig re-encoded: a save that yields the same bytes changes nothing
	root   *jobj
	mode   fs.FileMode
}

// loadJSON reads a JSON object file; a missing or empty file is an empty
// object. Invalid JSON is an error that leaves the file alone.
func loadJSON(path string) (*jsonFile, error) {
	jf := &jsonFile{path: path, mode: 0o644}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		jf.path = real
	}
	data, err := os.ReadFile(jf.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		jf.root = newObj()
		return jf, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	jf.exists, jf.orig = true, data
	if st, err := os.Stat(jf.path); err == nil {
		jf.mode = st.Mode().Perm()
	}
	if len(bytes.TrimSpace(data)) == 0 {
		jf.root = newObj()
		return jf, nil
	}
	v, err := parseOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v): fix or move it, then run the install again; it was not changed", path, jsonErrPos(data, err))
	}
	o, ok := v.(*jobj)
	if !ok {
		return nil, fmt.Errorf("%s does not hold a JSON object: fix or move it, then run the install again; it was not changed", path)
	}
	jf.root = o
	if jf.base, err = encodeOrdered(o); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return jf, nil
}

func jsonErrPos(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Sprintf("line %d: %v", line, se)
	}
	return err.Error()
}

// save writes the file when its content changed, after a backup of the old
// one; it reports whether anything was written.
func (jf *jsonFile) save() (bool, error) {
	data, err := encodeOrdered(jf.root)
	if err != nil {
		return false, fmt.Errorf("encode %s: %w", jf.path, err)
	}
	if jf.exists && jf.base != nil && bytes.Equal(jf.base, data) {
		return false, nil // same content; keep the file's own formatting
	}
	return writeIfChanged(jf.path, jf.exists, jf.orig, data, jf.mode)
}

// saveUninstalled is save for an uninstall that took git mem's entries
// out (removed says which), and says so. A file left holding nothing (an empty object, or
// the bare {"version": 1} of Cursor's and Copilot CLI's hooks files) is
// removed, not written: to the agent no file and an empty one mean the same,
// and install made it (or every other entry is gone). Nothing of the user's
// goes with it — what it held was git mem's entries and containers they
// emptied; when install changed a file that existed, install's backup holds
// the bytes from before.
func (jf *jsonFile) saveUninstalled(removed, path string) (string, error) {
	if jf.root.empty() {
		if err := os.Remove(jf.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("remove %s: %w", path, err)
		}
		return removed + " and the file " + path + ", left empty", nil
	}
	if _, err := jf.save(); err != nil {
		return "", err
	}
	return removed + " from " + path, nil
}

// writeIfChanged replaces path atomically (temp file + rename in the same
// folder) when data differs, keeping a timestamped backup of the old file.
func writeIfChanged(path string, exists bool, orig, data []byte, mode fs.FileMode) (bool, error) {
	if exists && bytes.Equal(orig, data) {
		return false, nil
	}
	if exists {
		if _, err := backup(path, orig, mode); err != nil {
			return false, err
		}
	}
	if err := atomicWrite(path, data, mode); err != nil {
		return false, err
	}
	return true, nil
}

// backup writes <path>.bak-<UTC timestamp>, never overwriting an older one.
func backup(path string, data []byte, mode fs.FileMode) (string, error) {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for i := 0; i < 100; i++ {
		name := path + ".bak-" + stamp
		if i > 0 {
			name = fmt.Sprintf("%s.%d", name, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode|0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		_, werr := f.Write(data)
		cerr := f.Close()
		if werr != nil || cerr != nil {
			return "", fmt.Errorf("back up %s: %w", path, errors.Join(werr, cerr))
		}
		return name, nil
	}
	return "", fmt.Errorf("back up %s: too many backups with stamp %s", path, stamp)
}

func atomicWrite(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(name, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	return nil
}

// --- Claude Code

type claudeHook struct {
	event   string
	command string
	timeout int
	// ours recognises a handler git mem installed for this agent (default
	// isOurClaudeCommand).
	ours func(string) bool
}

func claudeHooks(gitMemCmd string, opt InstallOptions) []claudeHook {
	c := opt.commandFor(gitMemCmd)
	hs := []claudeHook{
		{"SessionEnd", c + " hook claude-code", claudeHookTimeout, nil},
		{"PreCompact", c + " hook claude-code", claudeHookTimeout, nil},
	}
	if !opt.NoContext {
		hs = append(hs, claudeHook{"SessionStart", c + " context --hook claude-code", claudeContextTimeout, nil})
	}
	return hs
}

// isOurClaudeCommand recognises a handler git mem installed, whatever path
// it was installed with.
func isOurClaudeCommand(cmd string) bool {
	return isOurCommand(cmd, " hook claude-code", " context --hook claude-code")
}

// isOurCommand says whether cmd is git mem (any path, with or without
// --mem-dir) followed by one of the given argument tails.
func isOurCommand(cmd string, tails ...string) bool {
	cmd = strings.TrimSpace(cmd)
	for _, tail := range tails {
		if !strings.HasSuffix(cmd, tail) {
			continue
		}
		prog := strings.Trim(stripMemDirArg(strings.TrimSpace(strings.TrimSuffix(cmd, tail))), `'"`)
		if isGitMemProgram(prog) {
			return true
		}
	}
	return false
}

// isGitMemProgram says whether prog runs git mem: "git mem", or a program
// named git-mem (git-mem.exe on Windows) at any path, / or \ separated.
func isGitMemProgram(prog string) bool {
	if prog == "git mem" {
		return true
	}
	base := prog[strings.LastIndexAny(prog, `/\`)+1:]
	return base == "git-mem" || strings.EqualFold(base, "git-mem.exe") || filepath.Base(prog) == "git-mem"
}

func isContextCommand(cmd string) bool {
	return strings.HasSuffix(strings.TrimSpace(cmd), " context --hook claude-code")
}

// InstallClaudeCode adds git mem's hooks to a Claude Code settings file:
// SessionEnd and PreCompact run `git mem hook claude-code`, SessionStart
// runs `git mem context --hook claude-code` (unless NoContext). Every other
// key and hook is kept; running it twice changes nothing; a changed file is
// backed up first and replaced atomically.
func InstallClaudeCode(settingsPath, gitMemCmd string, opt InstallOptions) (string, error) {
	if err := checkScope(opt.Scope); err != nil {
		return "", fmt.Errorf("install claude-code hooks: %w", err)
	}
	jf, err := loadJSON(settingsPath)
	if err != nil {
		return "", fmt.Errorf("install claude-code hooks: %w", err)
	}
	hooks, err := hooksObject(jf, true)
	if err != nil {
		return "", fmt.Errorf("install claude-code hooks: %w", err)
	}
	want := claudeHooks(gitMemCmd, opt)
	var events []string
	for _, h := range want {
		if err := ensureClaudeHook(hooks, h); err != nil {
			return "", fmt.Errorf("install claude-code hooks in %s: %w", settingsPath, err)
		}
		events = append(events, h.event)
	}
	if opt.NoContext {
		// An earlier install may have added the context hook: take it out.
		removeClaudeHooks(hooks, func(cmd string) bool { return isOurClaudeCommand(cmd) && isContextCommand(cmd) })
		cleanHooks(jf.root, hooks)
	}
	changed, err := jf.save()
	if err != nil {
		return "", fmt.Errorf("install claude-code hooks: %w", err)
	}
	msg := fmt.Sprintf("claude-code hooks (%s) already in %s", strings.Join(events, ", "), settingsPath)
	if changed {
		msg = fmt.Sprintf("wrote claude-code hooks (%s) to %s", strings.Join(events, ", "), settingsPath)
	}
	if opt.MCP {
		m, err := installClaudeMCP(mcpPathFor(settingsPath, opt), opt.argvFor(gitMemCmd))
		if err != nil {
			return "", err
		}
		msg += "; " + m
	}
	return msg, nil
}

// UninstallClaudeCode removes git mem's hooks (and its MCP server entry, if
// registered) and nothing else.
func UninstallClaudeCode(settingsPath string, opt InstallOptions) (string, error) {
	if err := checkScope(opt.Scope); err != nil {
		return "", fmt.Errorf("uninstall claude-code hooks: %w", err)
	}
	jf, err := loadJSON(settingsPath)
	if err != nil {
		return "", fmt.Errorf("uninstall claude-code hooks: %w", err)
	}
	msg := "no git mem hooks in " + settingsPath
	if jf.exists {
		hooks, err := hooksObject(jf, false)
		if err != nil {
			return "", fmt.Errorf("uninstall claude-code hooks: %w", err)
		}
		if hooks != nil {
			n := removeClaudeHooks(hooks, isOurClaudeCommand)
			cleanHooks(jf.root, hooks)
			if n > 0 {
				if msg, err = jf.saveUninstalled(fmt.Sprintf("removed %d git mem hook(s)", n), settingsPath); err != nil {
					return "", fmt.Errorf("uninstall claude-code hooks: %w", err)
				}
			}
		}
	}
	m, err := uninstallClaudeMCP(mcpPathFor(settingsPath, opt))
	if err != nil {
		return "", err
	}
	if m != "" {
		msg += "; " + m
	}
	return msg, nil
}

// openVersionedHooks loads a hooks file of the {"version": 1, "hooks":
// {...}} shape (Cursor's, Copilot CLI's) for an install, with its hooks
// object made if missing.
func openVersionedHooks(path string, opt InstallOptions) (*jsonFile, *jobj, error) {
	if err := checkScope(opt.Scope); err != nil {
		return nil, nil, err
	}
	jf, err := loadJSON(path)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := jf.root.get("version"); !ok {
		jf.root.set("version", json.Number("1"))
	}
	hooks, err := hooksObject(jf, true)
	return jf, hooks, err
}

func hooksObject(jf *jsonFile, create bool) (*jobj, error) {
	v, ok := jf.root.get("hooks")
	if !ok || v == nil {
		if !create {
			return nil, nil
		}
		h := newObj()
		jf.root.set("hooks", h)
		return h, nil
	}
	h, ok := v.(*jobj)
	if !ok {
		return nil, fmt.Errorf(`%s: "hooks" is not an object; fix it by hand, the file was not changed`, jf.path)
	}
	return h, nil
}

// ensureClaudeHook makes sure exactly our handler for h.event exists with
// h's command and timeout, updating an older git mem handler in place.
func ensureClaudeHook(hooks *jobj, h claudeHook) error {
	var groups []any
	if v, ok := hooks.get(h.event); ok && v != nil {
		g, ok := v.([]any)
		if !ok {
			return fmt.Errorf(`hooks.%s is not a list; fix it by hand`, h.event)
		}
		groups = g
	}
	found := false
	for _, g := range groups {
		group, ok := g.(*jobj)
		if !ok {
			continue
		}
		hv, _ := group.get("hooks")
		handlers, _ := hv.([]any)
		for _, hd := range handlers {
			handler, ok := hd.(*jobj)
			if !ok {
				continue
			}
			cmd, _ := handler.vals["command"].(string)
			ours := isOurClaudeCommand
			if h.ours != nil {
				ours = h.ours
			}
			if !ours(cmd) || isContextCommand(cmd) != isContextCommand(h.command) {
				continue
			}
			if found {
				continue // a duplicate; leave it, Claude Code de-duplicates
			}
			found = true
			if cmd != h.command {
				handler.set("command", h.command)
			}
			if t, ok := handler.vals["timeout"].(json.Number); !ok || t.String() != fmt.Sprint(h.timeout) {
				handler.set("timeout", json.Number(fmt.Sprint(h.timeout)))
			}
			if typ, _ := handler.vals["type"].(string); typ != "command" {
				handler.set("type", "command")
			}
		}
	}
	if found {
		return nil
	}
	handler := newObj()
	handler.set("type", "command")
	handler.set("command", h.command)
	handler.set("timeout", json.Number(fmt.Sprint(h.timeout)))
	group := newObj()
	group.set("hooks", []any{handler})
	hooks.set(h.event, append(groups, group))
	return nil
}

// removeClaudeHooks drops matching handlers, then groups and events left
// empty by that; it returns how many handlers went.
func removeClaudeHooks(hooks *jobj, match func(string) bool) int {
	n := 0
	for _, event := range append([]string(nil), hooks.keys...) {
		groups, ok := hooks.vals[event].([]any)
		if !ok {
			continue
		}
		var keptGroups []any
		removedHere := false
		for _, g := range groups {
			group, ok := g.(*jobj)
			if !ok {
				keptGroups = append(keptGroups, g)
				continue
			}
			handlers, ok := group.vals["hooks"].([]any)
			if !ok {
				keptGroups = append(keptGroups, g)
				continue
			}
			var kept []any
			for _, hd := range handlers {
				if handler, ok := hd.(*jobj); ok {
					if cmd, _ := handler.vals["command"].(string); match(cmd) {
						n++
						removedHere = true
						continue
					}
				}
				kept = append(kept, hd)
			}
			if len(kept) == 0 && len(handlers) > 0 {
				continue // the group only held ours
			}
			if len(kept) != len(handlers) {
				group.set("hooks", kept)
			}
			keptGroups = append(keptGroups, group)
		}
		if !removedHere {
			continue
		}
		if len(keptGroups) == 0 {
			hooks.del(event)
		} else {
			hooks.set(event, keptGroups)
		}
	}
	return n
}

// cleanHooks drops a "hooks" object left empty.
func cleanHooks(root, hooks *jobj) {
	if hooks != nil && len(hooks.keys) == 0 {
		root.del("hooks")
	}
}

func installClaudeMCP(path string, argv []string) (string, error) {
	jf, err := loadJSON(path)
	if err != nil {
		return "", fmt.Errorf("register git mem MCP server: %w", err)
	}
	servers := newObj()
	if v, ok := jf.root.get("mcpServers"); ok && v != nil {
		s, ok := v.(*jobj)
		if !ok {
			return "", fmt.Errorf(`register git mem MCP server: %s: "mcpServers" is not an object; it was not changed`, path)
		}
		servers = s
	}
	args := []any{}
	for _, a := range argv[1:] {
		args = append(args, a)
	}
	args = append(args, "mcp")
	entry := newObj()
	if old, ok := servers.get("git-mem"); ok {
		if o, ok := old.(*jobj); ok {
			entry = o
		}
	}
	entry.set("command", argv[0])
	entry.set("args", args)
	servers.set("git-mem", entry)
	jf.root.set("mcpServers", servers)
	changed, err := jf.save()
	if err != nil {
		return "", fmt.Errorf("register git mem MCP server: %w", err)
	}
	if !changed {
		return "MCP server git-mem already in " + path, nil
	}
	return "registered MCP server git-mem in " + path, nil
}

func uninstallClaudeMCP(path string) (string, error) {
	if _, err := os.Stat(path); err != nil {
		return "", nil
	}
	jf, err := loadJSON(path)
	if err != nil {
		return "", fmt.Errorf("unregister git mem MCP server: %w", err)
	}
	servers, ok := jf.root.vals["mcpServers"].(*jobj)
	if !ok {
		return "", nil
	}
	if _, ok := servers.get("git-mem"); !ok {
		return "", nil
	}
	servers.del("git-mem")
	if len(servers.keys) == 0 {
		jf.root.del("mcpServers")
	}
	msg, err := jf.saveUninstalled("removed MCP server git-mem", path)
	if err != nil {
		return "", fmt.Errorf("unregister git mem MCP server: %w", err)
	}
	return msg, nil
}
