package hooks

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/lazy"
)

// SpecStory saves each chat of Cursor, VS Code Copilot, Claude Code, Codex
// or Gemini CLI as Markdown under <repo>/.specstory/history/<date>_<time>-
// <title>.md. Blocks start with a header line: _**User**_ (optionally
// with a time, "_**User (2026-09-17 10:02:51Z)**_") or _**Assistant**_ /
// _**Agent (model …)**_; "---" lines separate them. Markdown v2 writes
// tool calls as <tool-use data-tool-type=… data-tool-name=…><details>
// <summary>Tool use: **Name**</summary>… </details></tool-use> and
// reasoning as <think><details><summary>Thought Process</summary>…; the
// older layout has <details><summary>Tool use: **name** • …</summary> and
// "Read file: path" lines. A "<!-- <agent> Session <id> (…) -->" marker
// names the agent and the session.

const (
	FormatSpecStory = "specstory"
	AgentSpecStory  = "specstory"
)

var (
	ssUserRe     = lazy.Regexp(`^_\*\*User(?: \(([^)]*)\))?\*\*_\s*$`)
	ssAgentRe    = lazy.Regexp(`^_\*\*(?:Assistant|Agent)(?: \([^)]*\))?\*\*_\s*$`)
	ssSessionRe  = lazy.Regexp(`^<!-- (.+?) Session ([0-9A-Za-z-]+)(?: \(([^)]*)\))? -->`)
	ssToolRe     = lazy.Regexp(`(?s)<tool-use data-tool-type="([^"]*)" data-tool-name="([^"]*)">(.*?)</tool-use>`)
	ssOldToolRe  = lazy.Regexp(`(?s)<details>\s*<summary>Tool use: \*\*([^*]+)\*\*(?: • ([^<]*))?</summary>(.*?)</details>`)
	ssThinkRe    = lazy.Regexp(`(?s)<think><details><summary>Thought Process</summary>(.*?)</details></think>`)
	ssReadRe     = lazy.Regexp(`(?m)^Read file: (.+)$`)
	ssPathRe     = lazy.Regexp("(?m)^\\s*`([^`\\n]+)`\\s*$")
	ssUpdatedRe  = lazy.Regexp(`The file (\S+) has been (?:updated|created)`)
	ssFileTimeRe = lazy.Regexp(`^(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})(?:-(\d{2}))?Z?`)
)

// specStoryAgents maps the session marker's tool name to Exchange.Agent.
var specStoryAgents = map[string]string{
	"Claude Code": AgentClaudeCode, "Codex CLI": AgentCodex, "Gemini CLI": AgentGemini,
	"cursor": "cursor", "Cursor": "cursor", "vscode": "copilot", "VS Code Copilot IDE": "copilot",
}

// ReadSpecStory reads one SpecStory Markdown export.
func ReadSpecStory(path string, opt Options) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("read specstory history %s: %w", path, err)
	}
	defer f.Close()
	var res Result
	base := strings.TrimSuffix(filepath.Base(path), ".md")
	session := "specstory:" + base
	agent := AgentSpecStory
	when := ""
	if m := ssFileTimeRe().FindStringSubmatch(base); m != nil {
		sec := m[4]
		if sec == "" {
			sec = "00"
		}
		if t, err := time.Parse("2006-01-02T15:04:05Z", m[1]+"T"+m[2]+":"+m[3]+":"+sec+"Z"); err == nil {
			when = t.Format(time.RFC3339)
		}
	}
	project := ""
	if opt.Cwd != "" {
		project = ProjectFromCwd(opt.Cwd)
	} else if abs, err := filepath.Abs(path); err == nil && filepath.Base(filepath.Dir(abs)) == "history" && filepath.Base(filepath.Dir(filepath.Dir(abs))) == ".specstory" {
		project = ProjectFromCwd(filepath.Dir(filepath.Dir(filepath.Dir(abs))))
	}
	var bs []*builder
	var cur *builder
	n := 0
	kind := "" // "user" or "agent": the block being read
	var buf []string
	flush := func() {
		text := strings.Join(buf, "\n")
		buf = buf[:0]
		text = strings.TrimSpace(text)
		text = strings.TrimSpace(strings.TrimSuffix(text, "---")) // the separator before the next header
		switch kind {
		case "user":
			prompt := strings.TrimSpace(cutGitMemContext(text))
			cur = endTurn(cur)
			n++
			if prompt == "" {
				return
			}
			ex := &exchange.Exchange{ID: session + "/" + strconv.Itoa(n), Session: session, Time: when, Project: project, Agent: agent}
			cur = promptBuilder(ex, prompt)
			bs = append(bs, cur)
		case "agent":
			if cur != nil && text != "" {
				addSpecStoryReply(cur, text)
			}
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), exchange.MaxRecordBytes)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		ln := validUTF8(strings.TrimRight(sc.Text(), "\r"))
		if kind == "" {
			if m := ssSessionRe().FindStringSubmatch(ln); m != nil {
				session = "specstory:" + m[2]
				if a, ok := specStoryAgents[m[1]]; ok {
					agent = a
				}
			}
		}
		switch {
		case ssUserRe().MatchString(ln):
			flush()
			kind = "user"
		case ssAgentRe().MatchString(ln):
			if kind == "user" {
				flush()
			} else {
				// Consecutive agent blocks are one reply: keep collecting.
				buf = append(buf, "")
				kind = "agent"
				continue
			}
			kind = "agent"
		default:
			if kind != "" {
				buf = append(buf, ln)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("read specstory history %s: line %d: %w", path, lineNo+1, err)
	}
	flush()
	res.Exchanges = finish(bs, opt)
	return res, nil
}

// addSpecStoryReply splits an agent block into thinking, text and tool
// calls (with their rendered results).
func addSpecStoryReply(b *builder, text string) {
	for _, m := range ssThinkRe().FindAllStringSubmatch(text, -1) {
		b.text(exchange.RoleAssistant, clip(strings.TrimSpace(m[1])), map[string]any{"thinking": true})
	}
	text = ssThinkRe().ReplaceAllString(text, "")
	type span struct {
		start, end int
		name, kind string
		body, arg  string
	}
	var spans []span
	for _, m := range ssToolRe().FindAllStringSubmatchIndex(text, -1) {
		spans = append(spans, span{m[0], m[1], text[m[4]:m[5]], text[m[2]:m[3]], text[m[6]:m[7]], ""})
	}
	if len(spans) == 0 {
		for _, m := range ssOldToolRe().FindAllStringSubmatchIndex(text, -1) {
			s := span{start: m[0], end: m[1], name: text[m[2]:m[3]], body: text[m[6]:m[7]]}
			if m[4] >= 0 {
				s.arg = strings.TrimSpace(text[m[4]:m[5]])
			}
			spans = append(spans, s)
		}
	}
	prev := 0
	for k, s := range spans {
		b.text(exchange.RoleAssistant, clip(specStoryText(text[prev:s.start])), nil)
		prev = s.end
		body := strings.TrimSpace(s.body)
		body = strings.TrimPrefix(body, "<details>")
		if i := strings.Index(body, "</summary>"); i >= 0 {
			body = body[i+len("</summary>"):]
		}
		body = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(body), "</details>"))
		input := map[string]any{}
		if s.arg != "" {
			input["description"] = s.arg
		}
		// The file a tool worked on: the first line that is a lone
		// `path`, or Claude Code's "The file X has been updated".
		if m := ssUpdatedRe().FindStringSubmatch(body); m != nil {
			input["file_path"] = m[1]
		} else if m := ssPathRe().FindStringSubmatch(body); m != nil && !strings.ContainsAny(m[1], " \t") {
			input["file_path"] = m[1]
		}
		name := s.name
		if s.kind == "write" && name != "Edit" && name != "Write" && name != "MultiEdit" {
			// Record edits of other agents under the name FilesTouched
			// knows, keeping the original.
			input["tool"] = name
			name = "Write"
		}
		id := "ss-" + strconv.Itoa(k) + "-" + strconv.Itoa(s.start)
		b.toolCall(id, validUTF8(name), input)
		b.toolResult(id, body, false)
	}
	rest := specStoryText(text[prev:])
	for _, m := range ssReadRe().FindAllStringSubmatch(rest, -1) {
		b.toolCall("", "Read", map[string]any{"file_path": strings.TrimSpace(m[1])})
	}
	b.text(exchange.RoleAssistant, clip(rest), nil)
}

func specStoryText(s string) string {
	s = strings.TrimSpace(s)
	for strings.HasSuffix(s, "---") {
		s = strings.TrimSpace(strings.TrimSuffix(s, "---"))
	}
	return s
}

func isSpecStoryFile(p string, d fs.DirEntry) bool {
	return strings.HasSuffix(d.Name(), ".md") && filepath.Base(filepath.Dir(p)) == "history" &&
		filepath.Base(filepath.Dir(filepath.Dir(p))) == ".specstory"
}
