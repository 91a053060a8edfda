package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// GitHub Copilot CLI runs command hooks from every *.json in its hooks
// folders: ~/.copilot/hooks/ ($COPILOT_HOME/hooks/) for the user, and the
// repository's .github/hooks/ (read only once the folder is trusted). The
// "hooks" key of ~/.copilot/settings.json holds the same schema inline; git
// mem writes a file of its own instead, so the settings Copilot CLI itself
// rewrites are never touched:
//
//	{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": …,
//	 "powershell": …, "cwd": …, "env": {…}, "timeoutSec": 30}, …]}}
//
// Each hook gets one JSON object on stdin (seen from 1.0.102): every event
// has sessionId, timestamp (ms) and cwd; agentStop (the main agent ended
// its turn, after the turn's assistant.turn_end is in events.jsonl) adds
// transcriptPath (…/session-state/<id>/events.jsonl) and stopReason;
// sessionEnd (before session.shutdown is written; also after a provider
// error, where no agentStop fires) adds reason ("complete", "error", …) and
// names no transcript. git mem installs agentStop and sessionEnd.
//
// Each handler has both commands: Copilot CLI runs "bash" on Linux and
// macOS and "powershell" on Windows (hookSelectShellScript(bash,
// powershell, platform == win32) in 1.0.102; the docs' hooks reference:
// "One of bash/powershell", "Shell command for Windows"), so a handler
// with bash alone does nothing on Windows. Both run the same `git mem hook
// copilot-cli` (with --mem-dir when installed with one), each quoted for
// its shell (shellWord, psWord).
const copilotCLIHookTimeoutSec = 5

// copilotCLIHookFile is git mem's own hooks file in a hooks folder.
const copilotCLIHookFile = "git-mem.json"

var copilotCLIEvents = []string{"agentStop", "sessionEnd"}

// CopilotCLIHome is Copilot CLI's folder: $COPILOT_HOME, else ~/.copilot.
func CopilotCLIHome(home string) string {
	if d := os.Getenv("COPILOT_HOME"); d != "" {
		return d
	}
	return filepath.Join(home, ".copilot")
}

// CopilotCLIHooksPath is git mem's hooks file: <copilot home>/hooks/git-mem.json
// (user) or <repository root>/.github/hooks/git-mem.json (project; Copilot
// CLI reads .github/hooks at the git root of its folder).
func CopilotCLIHooksPath(scope, home, cwd string) string {
	if scope == ScopeProject {
		return filepath.Join(gitRootOf(cwd), ".github", "hooks", copilotCLIHookFile)
	}
	return filepath.Join(CopilotCLIHome(home), "hooks", copilotCLIHookFile)
}

// gitRootOf is the nearest folder at or above dir holding .git, else dir.
func gitRootOf(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}

const copilotCLIHookTail = " hook copilot-cli"

func isOurCopilotCLICommand(cmd string) bool { return isOurCommand(cmd, copilotCLIHookTail) }

// psWord quotes a word for a PowerShell command line when needed. A
// single-quoted string is literal ($, ` and " are not special in it); a
// quote in it is doubled, and PowerShell takes the typographic single
// quotes (U+2018 to U+201B) for quotes too. A bare word must start with a
// letter or a slash: one PowerShell reads as a number (1e3, 0x10) would
// reach the program rewritten.
func psWord(s string) string {
	bare := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(`-_./:\`, r))
	}) < 0
	if bare {
		c := s[0]
		bare = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '\\'
	}
	if bare {
		return s
	}
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		if isPSQuote(r) {
			b.WriteRune(r)
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
	return b.String()
}

func isPSQuote(r rune) bool { return r == '\'' || r >= '\u2018' && r <= '\u201b' }

// psUnquote undoes psWord.
func psUnquote(w string) string {
	rs := []rune(w)
	if len(rs) < 2 || !isPSQuote(rs[0]) || !isPSQuote(rs[len(rs)-1]) {
		return w
	}
	rs = rs[1 : len(rs)-1]
	var b strings.Builder
	for i := 0; i < len(rs); i++ {
		if isPSQuote(rs[i]) && i+1 < len(rs) && isPSQuote(rs[i+1]) {
			i++
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}

// copilotCLIPowerShell is the "powershell" command of a handler whose
// "bash" is commandFor(cmd) + copilotCLIHookTail: the same program and
// arguments, quoted for PowerShell; a quoted program is run with the call
// operator (& 'C:\Program Files\git-mem\git-mem.exe' hook copilot-cli), as
// a quoted string alone is a value, not a command.
func copilotCLIPowerShell(cmd string, opt InstallOptions) string {
	cmd = strings.TrimSpace(cmd)
	var c string
	switch cmd {
	case "":
		c = "git-mem"
	case "git mem":
		c = cmd
	default:
		if c = psWord(cmd); c != cmd {
			c = "& " + c
		}
	}
	if opt.MemDir != "" {
		c += " --mem-dir " + psWord(opt.MemDir)
	}
	return c + copilotCLIHookTail
}

// isOurCopilotCLIPowerShell recognises a "powershell" command
// copilotCLIPowerShell wrote, whatever path and memory it names.
func isOurCopilotCLIPowerShell(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	if !strings.HasSuffix(cmd, copilotCLIHookTail) {
		return false
	}
	prog := strings.TrimSpace(strings.TrimSuffix(cmd, copilotCLIHookTail))
	if i := strings.LastIndex(prog, " --mem-dir "); i >= 0 {
		if w := strings.TrimSpace(prog[i+len(" --mem-dir "):]); psWord(psUnquote(w)) == w {
			prog = strings.TrimSpace(prog[:i])
		}
	}
	if strings.HasPrefix(prog, "& ") {
		prog = strings.TrimSpace(prog[2:])
	}
	return isGitMemProgram(psUnquote(prog))
}

// InstallCopilotCLI adds git mem's agentStop and sessionEnd handlers to its
// Copilot CLI hooks file, keeping every other key and handler; twice
// changes nothing.
func InstallCopilotCLI(hooksPath, gitMemCmd string, opt InstallOptions) (string, error) {
	jf, hooks, err := openVersionedHooks(hooksPath, opt)
	if err != nil {
		return "", fmt.Errorf("install copilot-cli hooks: %w", err)
	}
	c := opt.commandFor(gitMemCmd) + copilotCLIHookTail
	ps := copilotCLIPowerShell(gitMemCmd, opt)
	for _, ev := range copilotCLIEvents {
		if err := ensureCopilotCLIHook(hooks, ev, c, ps); err != nil {
			return "", fmt.Errorf("install copilot-cli hooks in %s: %w", hooksPath, err)
		}
	}
	changed, err := jf.save()
	if err != nil {
		return "", fmt.Errorf("install copilot-cli hooks: %w", err)
	}
	evs := strings.Join(copilotCLIEvents, ", ")
	if !changed {
		return fmt.Sprintf("copilot-cli hooks (%s) already in %s", evs, hooksPath), nil
	}
	return fmt.Sprintf("wrote copilot-cli hooks (%s) to %s", evs, hooksPath), nil
}

// ensureCopilotCLIHook makes sure exactly one of our handlers for event
// exists, running command (bash) and psCommand (powershell), updating an
// older git mem handler in place (its other keys kept; one from before the
// powershell command gets it).
func ensureCopilotCLIHook(hooks *jobj, event, command, psCommand string) error {
	var list []any
	if v, ok := hooks.get(event); ok && v != nil {
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("hooks.%s is not a list; fix it by hand", event)
		}
		list = l
	}
	for _, h := range list {
		if handler, ok := h.(*jobj); ok && isOurCopilotCLIHandler(handler) {
			if cmd, _ := handler.vals["bash"].(string); cmd != command {
				handler.set("bash", command)
			}
			if cmd, _ := handler.vals["powershell"].(string); cmd != psCommand {
				handler.set("powershell", psCommand)
			}
			return nil
		}
	}
	handler := newObj()
	handler.set("type", "command")
	handler.set("bash", command)
	handler.set("powershell", psCommand)
	handler.set("timeoutSec", json.Number(fmt.Sprint(copilotCLIHookTimeoutSec)))
	hooks.set(event, append(list, handler))
	return nil
}

// isOurCopilotCLIHandler: a handler whose bash command is git mem's, or,
// with no bash command, whose powershell command is. A handler with a bash
// command of someone else's is never ours, whatever its powershell says.
func isOurCopilotCLIHandler(h *jobj) bool {
	if cmd, ok := h.vals["bash"].(string); ok {
		return isOurCopilotCLICommand(cmd)
	}
	cmd, _ := h.vals["powershell"].(string)
	return isOurCopilotCLIPowerShell(cmd)
}

// UninstallCopilotCLI removes git mem's handlers and nothing else. The file
// left holding only {"version": 1} (install created it, and nobody added a
// hook to it since) is removed.
func UninstallCopilotCLI(hooksPath string, opt InstallOptions) (string, error) {
	jf, err := loadJSON(hooksPath)
	if err != nil {
		return "", fmt.Errorf("uninstall copilot-cli hooks: %w", err)
	}
	none := "no git mem hooks in " + hooksPath
	if !jf.exists {
		return none, nil
	}
	hooks, err := hooksObject(jf, false)
	if err != nil || hooks == nil {
		return none, err
	}
	n := 0
	for _, event := range append([]string(nil), hooks.keys...) {
		list, ok := hooks.vals[event].([]any)
		if !ok {
			continue
		}
		var kept []any
		for _, h := range list {
			if handler, ok := h.(*jobj); ok && isOurCopilotCLIHandler(handler) {
				n++
				continue
			}
			kept = append(kept, h)
		}
		switch {
		case len(kept) == len(list):
		case len(kept) == 0:
			hooks.del(event)
		default:
			hooks.set(event, kept)
		}
	}
	if n == 0 {
		return none, nil
	}
	cleanHooks(jf.root, hooks)
	msg, err := jf.saveUninstalled(fmt.Sprintf("removed %d git mem hook(s)", n), hooksPath)
	if err != nil {
		return "", fmt.Errorf("uninstall copilot-cli hooks: %w", err)
	}
	return msg, nil
}

// CopilotCLIHook is the JSON Copilot CLI gives a hook on stdin (the fields
// git mem uses). It names no event: agentStop has transcriptPath and
// stopReason, sessionEnd has reason.
type CopilotCLIHook struct {
	SessionID      string `json:"sessionId"`
	Cwd            string `json:"cwd"`
	TranscriptPath string `json:"transcriptPath"`
	StopReason     string `json:"stopReason"`
	Reason         string `json:"reason"`
	Timestamp      int64  `json:"timestamp"` // ms; the transcript's hook.start of this run has it too
	// Event is "sessionEnd" (a reason and no stopReason) or "agentStop".
	Event string `json:"-"`
}

// ParseCopilotCLIHook reads the hook's stdin JSON (giving up after wait, so
// a stdin never closed cannot hold the agent) and names its event. A
// sessionEnd's transcript is found from its sessionId: <copilot
// home>/session-state/<id>/events.jsonl (or the older <id>.jsonl).
func ParseCopilotCLIHook(r io.Reader, wait time.Duration, home string) (CopilotCLIHook, error) {
	var in CopilotCLIHook
	b, err := ReadHookInput(r, wait)
	if err != nil {
		return in, fmt.Errorf("read copilot-cli hook input: %w", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return in, fmt.Errorf("read copilot-cli hook input: stdin is empty (Copilot CLI passes the hook's JSON on stdin)")
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("read copilot-cli hook input: not JSON: %w", err)
	}
	in.Event = "agentStop"
	if in.Reason != "" && in.StopReason == "" {
		in.Event = "sessionEnd"
	}
	if in.TranscriptPath == "" && in.SessionID != "" {
		if strings.ContainsAny(in.SessionID, `/\`) || in.SessionID == "." || in.SessionID == ".." {
			return in, fmt.Errorf("copilot-cli hook input: sessionId %q is not a session id", in.SessionID)
		}
		dir := CopilotCLISessionsDir(home)
		in.TranscriptPath = filepath.Join(dir, in.SessionID, "events.jsonl")
		if _, err := os.Stat(in.TranscriptPath); err != nil {
			if legacy := filepath.Join(dir, in.SessionID+".jsonl"); fileExists(legacy) {
				in.TranscriptPath = legacy
			}
		}
	}
	if in.TranscriptPath == "" {
		return in, fmt.Errorf("copilot-cli hook input has no transcriptPath and no sessionId")
	}
	return in, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// WaitCopilotCLIHook waits, up to max, until the session file at path
// records the hook run a payload came from: a hook.start event of that
// hookType whose input has the payload's timestamp. Copilot CLI writes
// events.jsonl in batches (about every 100 ms; a new session's file may
// not exist yet when its first hook runs), so the events before the hook
// (the turn_end agentStop follows) are on disk once it is. It reports
// whether it saw the run.
func WaitCopilotCLIHook(ctx context.Context, path, event string, ts int64, max time.Duration) bool {
	deadline := time.Now().Add(max)
	var off int64
	var rest []byte
	for {
		found, n, tail := scanCopilotCLIHook(path, off, rest, event, ts)
		if found {
			return true
		}
		off, rest = n, tail
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// scanCopilotCLIHook reads path from off (rest: the incomplete line read
// before) for the hook.start of event at ts; it returns the offset read to
// and the incomplete last line.
func scanCopilotCLIHook(path string, off int64, rest []byte, event string, ts int64) (bool, int64, []byte) {
	f, err := os.Open(path)
	if err != nil {
		return false, off, rest
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < off {
		// Rewritten (/undo): read it again from the start.
		off, rest = 0, nil
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return false, off, rest
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return false, off, rest
	}
	off += int64(len(b))
	data := append(rest, b...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		l := data[:i]
		data = data[i+1:]
		if !bytes.Contains(l, []byte(`"hook.start"`)) {
			continue
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				HookType string `json:"hookType"`
				Input    struct {
					Timestamp int64 `json:"timestamp"`
				} `json:"input"`
			} `json:"data"`
		}
		if json.Unmarshal(l, &ev) == nil && ev.Type == "hook.start" && ev.Data.HookType == event && ev.Data.Input.Timestamp == ts {
			return true, off, nil
		}
	}
	return false, off, append([]byte(nil), data...)
}
