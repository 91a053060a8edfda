package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/lazy"
)

// ccRecord is one line of a Claude Code transcript, reduced to what the
// reader needs. The bulky UI copies (toolUseResult's originalFile and
// structuredPatch, thinking signatures) are never kept.
type ccRecord struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	UUID              string          `json:"uuid"`
	ParentUUID        string          `json:"parentUuid"`
	LogicalParentUUID string          `json:"logicalParentUuid"`
	SessionID         string          `json:"sessionId"`
	Timestamp         string          `json:"timestamp"`
	Cwd               string          `json:"cwd"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
	IsCompactSummary  bool            `json:"isCompactSummary"`
	Message           *ccMessage      `json:"message"`
	ToolUseResult     agentRef        `json:"toolUseResult"`
	Attachment        json.RawMessage `json:"attachment"`

	line int
	kind promptKind
	text string // the prompt text, for prompts and commands
	side string // text riding along with the prompt (IDE context)
}

type ccMessage struct {
	ID      string    `json:"id"`
	Content ccContent `json:"content"`
}

// ccContent is a message's content: a plain string (one text block) or a
// list of blocks. Any other shape reads as no content rather than failing
// the record.
type ccContent []ccBlock

func (c *ccContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if json.Unmarshal(b, &s) == nil {
			*c = ccContent{{Type: "text", Text: s}}
		}
	case '[':
		var blocks []ccBlock
		if json.Unmarshal(b, &blocks) == nil {
			*c = blocks
		}
	}
	return nil
}

// ccResult is a tool_result's content rendered as the model saw it: a
// string, or text blocks joined (images as a placeholder).
type ccResult string

func (r *ccResult) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if json.Unmarshal(b, &s) == nil {
			*r = ccResult(validUTF8(s))
		}
	case '[':
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(b, &blocks) != nil {
			*r = ccResult(validUTF8(string(b)))
			return nil
		}
		var parts []string
		for _, bl := range blocks {
			switch bl.Type {
			case "text":
				parts = append(parts, validUTF8(bl.Text))
			case "image":
				parts = append(parts, "[image]")
			}
		}
		*r = ccResult(strings.Join(parts, "\n"))
	case 'n':
	default:
		*r = ccResult(validUTF8(string(b)))
	}
	return nil
}

type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   ccResult        `json:"content"`
	IsError   bool            `json:"is_error"`
}

// agentRef picks the subagent id out of toolUseResult, whatever its shape
// (an object, a plain string on errors), without keeping the rest.
type agentRef struct{ AgentID string }

func (a *agentRef) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' && bytes.Contains(b, []byte(`"agentId"`)) {
		var x struct {
			AgentID string `json:"agentId"`
		}
		if json.Unmarshal(b, &x) == nil {
			a.AgentID = x.AgentID
		}
	}
	return nil
}

type promptKind int

const (
	notPrompt promptKind = iota
	realPrompt
	commandPrompt // a slash command or !cmd: a prompt only if the agent replies
)

// Record types the reader knows; any other is reported and skipped.
var claudeKnown = map[string]bool{
	"user": true, "assistant": true, "system": true, "summary": true, "attachment": true,
	"progress": true, "file-history-snapshot": true, "queue-operation": true,
	"permission-mode": true, "last-prompt": true, "custom-title": true, "agent-name": true,
}

// User text starting with one of these is injected or UI output, never a prompt.
var claudeNoise = []string{
	"<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>",
	"Caveat: The messages below", "<bash-stdout>", "<bash-stderr>",
	"[Request interrupted by user", "<task-notification>", "<system-reminder>",
	"This session is being continued from a previous conversation",
	"<user-prompt-submit-hook>",
}

// Blocks that ride along with a typed prompt: IDE context (VS Code) and
// hook reminders. They are kept beside the prompt as a system turn.
var ideBlockRe = lazy.Regexp(`(?s)<(ide_opened_file|ide_selection|ide_diagnostics|system-reminder)>.*?</(?:ide_opened_file|ide_selection|ide_diagnostics|system-reminder)>`)
var commandNameRe = lazy.Regexp(`(?s)<command-name>(.*?)</command-name>`)
var commandArgsRe = lazy.Regexp(`(?s)<command-args>(.*?)</command-args>`)

// ReadClaudeCode reads a Claude Code session transcript (~/.claude/projects/
// <slug>/<session>.jsonl). It follows the live thread after a rewind, keeps
// every branch of parallel tool calls, and attaches subagent transcripts
// (<session>/subagents/agent-<id>.jsonl beside the file) to the exchange
// whose Task/Agent call launched them.
func ReadClaudeCode(path string, opt Options) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("read claude-code transcript %s: %w", path, err)
	}
	defer f.Close()
	stem := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	dir := filepath.Dir(path)
	sub := func(agentID string) string {
		if !safeID(agentID) {
			return ""
		}
		for _, p := range []string{
			filepath.Join(dir, stem, "subagents", "agent-"+agentID+".jsonl"),
			filepath.Join(dir, "agent-"+agentID+".jsonl"),
		} {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
		return ""
	}
	res, err := readClaude(f, path, stem, sub, opt)
	if err != nil {
		return res, fmt.Errorf("read claude-code transcript %s: %w", path, err)
	}
	return res, nil
}

var safeIDRe = lazy.Regexp(`^[A-Za-z0-9_-]{1,128}$`)

func safeID(s string) bool { return safeIDRe().MatchString(s) }

// readClaude is the reader proper; sub finds a subagent transcript by id
// ("" when there is none).
func readClaude(r io.Reader, name, stem string, sub func(string) string, opt Options) (Result, error) {
	var res Result
	recs, err := parseClaude(r, name, &res.Problems)
	if err != nil {
		return res, err
	}
	live := liveRecords(recs)

	session, cwd := stem, ""
	for _, rec := range recs {
		if cwd == "" && rec.Cwd != "" {
			cwd = rec.Cwd
		}
	}
	project := ""
	if cwd != "" {
		project = ProjectFromCwd(cwd)
	}

	var bs []*builder
	var cur *builder
	agentOf := map[*builder]map[int]string{}
	for _, rec := range live {
		if rec.kind != notPrompt {
			sid := rec.SessionID
			if sid == "" {
				sid = session
			}
			ex := &exchange.Exchange{
				ID:      sid + "/" + rec.UUID,
				Session: sid,
				Project: project,
				Agent:   AgentClaudeCode,
			}
			if rec.UUID == "" {
				ex.ID = fmt.Sprintf("%s/line-%d", sid, rec.line)
			}
			if _, err := exchange.ParseTime(rec.Timestamp); err == nil {
				ex.Time = rec.Timestamp
			}
			cur = newBuilder(ex)
			cur.command = rec.kind == commandPrompt
			cur.text(exchange.RoleUser, rec.text, nil)
			cur.text(exchange.RoleSystem, rec.side, nil)
			bs = append(bs, cur)
			continue
		}
		if cur == nil {
			continue // before the first prompt: session-start context
		}
		if aid := addClaudeRecord(cur, rec); aid != nil {
			if agentOf[cur] == nil {
				agentOf[cur] = map[int]string{}
			}
			agentOf[cur][aid.turn] = aid.id
		}
	}
	out := finish(bs, opt)
	// Subagents: only for exchanges that are returned, read once each.
	if sub != nil && len(agentOf) > 0 {
		returned := make(map[*exchange.Exchange]bool, len(out))
		for _, ex := range out {
			returned[ex] = true
		}
		for _, b := range bs {
			if len(agentOf[b]) == 0 || !returned[b.ex] {
				continue
			}
			attachSubagents(b, agentOf[b], sub, &res.Problems)
		}
	}
	res.Exchanges = out
	res.Cwd = cwd
	return res, nil
}

// parseClaude decodes and classifies every record, reporting bad ones.
func parseClaude(r io.Reader, name string, probs *[]Problem) ([]*ccRecord, error) {
	var recs []*ccRecord
	seen := map[string]bool{}
	err := readLines(r, name, probs, func(l line) {
		rec := &ccRecord{line: l.n}
		if err := json.Unmarshal(slimToolUseResult(l.data), rec); err != nil {
			*probs = append(*probs, badLine(name, l, err))
			return
		}
		if rec.Type == "" || !claudeKnown[rec.Type] {
			*probs = append(*probs, Problem{name, l.n, fmt.Sprintf("unknown record type %q; skipped", rec.Type)})
			return
		}
		if rec.UUID != "" {
			if seen[rec.UUID] {
				return // a fork or resume copied it: keep the first
			}
			seen[rec.UUID] = true
		}
		if rec.Type == "user" && !rec.IsSidechain {
			classifyPrompt(rec)
		}
		recs = append(recs, rec)
	})
	return recs, err
}

// classifyPrompt decides whether a user record is a real prompt, a slash
// command, or something the user did not type.
func classifyPrompt(rec *ccRecord) {
	if rec.IsMeta || rec.IsCompactSummary || rec.Message == nil {
		return
	}
	text, hasToolResult := userText(rec.Message.Content)
	if hasToolResult {
		return
	}
	var side []string
	for _, m := range ideBlockRe().FindAllString(text, -1) {
		side = append(side, m)
	}
	text = strings.TrimSpace(ideBlockRe().ReplaceAllString(text, ""))
	text = cutGitMemContext(text)
	if text == "" {
		return
	}
	for _, p := range claudeNoise {
		if strings.HasPrefix(text, p) {
			return
		}
	}
	rec.side = clip(cutGitMemContext(strings.Join(side, "\n")))
	switch {
	case strings.Contains(text, "<command-name>"):
		m := commandNameRe().FindStringSubmatch(text)
		if m == nil {
			return
		}
		cmd := strings.TrimSpace(m[1])
		if a := commandArgsRe().FindStringSubmatch(text); a != nil && strings.TrimSpace(a[1]) != "" {
			cmd += " " + strings.TrimSpace(a[1])
		}
		if cmd == "" {
			return
		}
		rec.kind, rec.text = commandPrompt, cmd
	case strings.HasPrefix(text, "<bash-input>"):
		rec.kind, rec.text = commandPrompt, clip(text)
	default:
		rec.kind, rec.text = realPrompt, clip(text)
	}
}

// userText joins the text blocks of a user message and says whether it
// carries a tool result.
func userText(blocks ccContent) (string, bool) {
	var parts []string
	tool := false
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, validUTF8(b.Text))
		case "tool_result":
			tool = true
		}
	}
	return strings.Join(parts, "\n"), tool
}

// liveRecords returns, in file order, the main-thread records that are not
// on a branch abandoned by a rewind. A rewind shows as a second user input
// hanging off the same parent as an earlier one; only the input on the
// thread that leads to the newest record survives, with everything below
// it. Forks made by parallel tool calls are not prompt forks and are kept
// whole.
func liveRecords(recs []*ccRecord) []*ccRecord {
	byID := make(map[string]*ccRecord, len(recs))
	var main []*ccRecord
	for _, r := range recs {
		if r.IsSidechain {
			continue
		}
		switch r.Type {
		case "user", "assistant", "system", "attachment", "progress":
		default:
			continue
		}
		main = append(main, r)
		if r.UUID != "" {
			byID[r.UUID] = r
		}
	}
	parentOf := func(r *ccRecord) string {
		if r.ParentUUID != "" {
			return r.ParentUUID
		}
		return r.LogicalParentUUID
	}
	// The live thread: ancestors of the newest record.
	onThread := map[string]bool{}
	for i := len(main) - 1; i >= 0; i-- {
		if main[i].UUID == "" {
			continue
		}
		for r := main[i]; r != nil && r.UUID != "" && !onThread[r.UUID]; r = byID[parentOf(r)] {
			onThread[r.UUID] = true
		}
		break
	}
	// Prompt forks: user inputs sharing a parent.
	inputs := map[string][]*ccRecord{}
	children := map[string][]*ccRecord{}
	for _, r := range main {
		p := parentOf(r)
		if p == "" {
			continue
		}
		children[p] = append(children[p], r)
		if r.kind != notPrompt && r.UUID != "" {
			inputs[p] = append(inputs[p], r)
		}
	}
	dead := map[*ccRecord]bool{}
	var stack []*ccRecord
	for _, in := range inputs {
		if len(in) < 2 {
			continue
		}
		live := false
		for _, r := range in {
			if onThread[r.UUID] {
				live = true
			}
		}
		if !live {
			continue
		}
		for _, r := range in {
			if !onThread[r.UUID] {
				stack = append(stack, r)
			}
		}
	}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if dead[r] {
			continue
		}
		dead[r] = true
		if r.UUID != "" {
			stack = append(stack, children[r.UUID]...)
		}
	}
	if len(dead) == 0 {
		return main
	}
	out := make([]*ccRecord, 0, len(main)-len(dead))
	for _, r := range main {
		if !dead[r] {
			out = append(out, r)
		}
	}
	return out
}

type agentLaunch struct {
	turn int
	id   string
}

// addClaudeRecord adds a non-prompt record to the current exchange. It
// returns the launching tool turn when the record is a subagent's result.
func addClaudeRecord(b *builder, rec *ccRecord) *agentLaunch {
	switch rec.Type {
	case "assistant":
		if rec.Message == nil {
			return nil
		}
		for _, bl := range rec.Message.Content {
			switch bl.Type {
			case "text":
				b.text(exchange.RoleAssistant, validUTF8(bl.Text), nil)
			case "thinking":
				b.text(exchange.RoleAssistant, validUTF8(bl.Thinking), map[string]any{"thinking": true})
			case "tool_use", "server_tool_use":
				var input any
				if len(bl.Input) > 0 {
					if v, err := decodeAny(bl.Input); err == nil {
						input = v
					}
				}
				b.toolCall(bl.ID, validUTF8(bl.Name), input)
			}
		}
	case "user":
		if rec.Message == nil {
			return nil
		}
		var launch *agentLaunch
		for _, bl := range rec.Message.Content {
			switch bl.Type {
			case "tool_result", "web_search_tool_result":
				i := b.toolResult(bl.ToolUseID, string(bl.Content), bl.IsError)
				if id := rec.ToolUseResult.AgentID; id != "" {
					launch = &agentLaunch{turn: i, id: id}
				}
			case "text":
				t := cutGitMemContext(validUTF8(bl.Text))
				if strings.HasPrefix(t, "<local-command-caveat>") || strings.HasPrefix(t, "Caveat: The messages below") {
					continue
				}
				b.text(exchange.RoleSystem, clip(t), nil)
			case "image":
				b.text(exchange.RoleSystem, "[image]", nil)
			}
		}
		return launch
	case "attachment":
		var a struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(rec.Attachment, &a) != nil || a.Type != "hook_additional_context" {
			return nil
		}
		var lines []string
		if json.Unmarshal(a.Content, &lines) != nil {
			var s string
			if json.Unmarshal(a.Content, &s) != nil {
				return nil
			}
			lines = []string{s}
		}
		b.text(exchange.RoleSystem, clip(cutGitMemContext(validUTF8(strings.Join(lines, "\n")))), nil)
	case "system":
		if rec.Subtype == "compact_boundary" {
			b.text(exchange.RoleSystem, "[conversation compacted]", nil)
		}
	}
	return nil
}

// attachSubagents inserts each subagent's own steps right after the tool
// turn that launched it, marked with the agent id.
func attachSubagents(b *builder, launches map[int]string, sub func(string) string, probs *[]Problem) {
	var turns []exchange.Turn
	for i, t := range b.ex.Turns {
		turns = append(turns, t)
		id, ok := launches[i]
		if !ok {
			continue
		}
		p := sub(id)
		if p == "" {
			continue
		}
		turns = append(turns, readSubagent(p, id, probs)...)
	}
	b.ex.Turns = turns
}

func readSubagent(path, agentID string, probs *[]Problem) []exchange.Turn {
	f, err := os.Open(path)
	if err != nil {
		*probs = append(*probs, Problem{path, 0, "subagent transcript: " + err.Error()})
		return nil
	}
	defer f.Close()
	recs, err := parseClaude(f, path, probs)
	if err != nil {
		*probs = append(*probs, Problem{path, 0, "subagent transcript: " + err.Error()})
		return nil
	}
	b := newBuilder(&exchange.Exchange{})
	first := true
	for _, rec := range recs {
		if rec.Type == "user" && first {
			// The subagent's task: already in the launching tool's input.
			if _, tool := userText(messageContent(rec)); !tool {
				first = false
				continue
			}
		}
		first = false
		addClaudeRecord(b, rec)
	}
	for i := range b.ex.Turns {
		t := &b.ex.Turns[i]
		if t.Extra == nil {
			t.Extra = map[string]any{}
		}
		t.Extra["subagent"] = agentID
		if t.Role != exchange.RoleTool {
			t.Extra["speaker"] = "subagent " + agentID
		}
	}
	return b.ex.Turns
}

func messageContent(rec *ccRecord) ccContent {
	if rec.Message == nil {
		return nil
	}
	return rec.Message.Content
}
