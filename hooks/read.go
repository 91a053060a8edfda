// Package hooks turns coding-agent transcripts (Claude Code, Codex, Aider,
// Gemini CLI, Qwen Code, Cline and Roo Code, Continue, Cursor, Copilot Chat and CLI, OpenCode,
// SpecStory exports; docs/AGENTS.md) into exchanges — one real user prompt
// plus the agent's whole reply — and installs the agent hooks that feed
// them to git mem.
//
// Readers only ever return closed exchanges: one whose next prompt exists,
// or whose session the caller says has ended, or whose final reply matches
// the hook's last assistant message. An exchange still being written is
// never returned, so a hook may re-read a growing transcript as often as it
// likes: exchange ids are stable across re-reads and closed exchanges come
// back byte for byte the same.
//
// Decisions a reader of the memory should know:
//   - Ids: Claude Code "<sessionId>/<prompt record uuid>", Codex
//     "<thread id>/<n>" (n-th user_message event, 1-based, counting every
//     event so later ids never shift), Aider "aider:<project>:<session
//     start>/<n>" (the history has no ids; it is append-only).
//   - A slash command (/init, /model) or a `!cmd` ends the previous exchange
//     and starts one that is kept only if the agent replied: /init stays
//     (its text is "/init"), /exit and /model are dropped.
//   - The verbatim keeps what the model saw: prompts, replies, reasoning
//     (assistant turns with Extra["thinking"]), tool calls and results (over
//     MaxToolResultBytes cut to head and tail), and injected text (isMeta
//     expansions, compaction summaries, IDE context, hook context) as system
//     turns. UI copies (toolUseResult, event_msg duplicates, encrypted
//     reasoning, token counts) are left out.
//   - Subagent turns (Claude Code) follow the Task/Agent call that launched
//     them, with Extra["subagent"] = agent id.
//   - Text fenced as <git-mem-context …>…</git-mem-context> is git mem's own
//     recall: it is cut from prompts and injected text (a prompt holding
//     nothing else is no prompt) and replaced by a marker in tool results.
//   - Exchange carries no files field: FilesTouched derives them (modified
//     files only) from the turns, the same way for every agent.
package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/hooks/hookinput"
	"github.com/gitmem/git-mem/internal/lazy"
)

// Agent names written into Exchange.Agent.
const (
	AgentClaudeCode = "claude-code"
	AgentCodex      = "codex"
	AgentAider      = "aider"
)

// Formats understood by ReadFile and returned by Detect.
const (
	FormatExchange   = "exchange"
	FormatClaudeCode = "claude-code"
	FormatCodex      = "codex"
	FormatAider      = "aider"
)

// MaxToolResultBytes bounds one tool result (and one string inside a tool
// input) in the verbatim. Larger texts keep their head and tail around a
// marker: what matters (the command's first lines, the error at the end)
// survives, a 5 MB file dump does not bloat the memory.
const MaxToolResultBytes = 64 << 10

// Options says what the caller knows about the session beyond the file.
type Options struct {
	// SessionEnded closes the last exchange: the agent will write no more.
	SessionEnded bool
	// LastAssistantMessage is the final reply a hook received (Claude Code
	// Stop, Codex notify). When the last exchange's final reply matches it,
	// that exchange is closed.
	LastAssistantMessage string
	// LastAssistantDigest is LastDigest(LastAssistantMessage), for callers
	// that must not keep the text (the hook's queue files: a reply may
	// quote a secret, and the queue is written before any redaction).
	LastAssistantDigest string
	// TurnComplete says the agent reported its current turn finished
	// (Codex notify agent-turn-complete): the last exchange is closed if it
	// has a reply and, when InputMessages are given, its prompt is one of
	// them — a notify for a turn the file does not show yet closes nothing.
	TurnComplete  bool
	InputMessages []string
	// InputDigests are PromptDigest of the turn's prompts: what a queue
	// file keeps instead of them (a prompt redacted before it was written
	// would never equal the transcript's again).
	InputDigests []string
	// Cwd is the session's folder when a hook says it (Gemini CLI's files
	// do not name their project).
	Cwd string
	// OnlySession, when set, reads just that session of a store holding
	// many (Cursor's and OpenCode's databases): a hook names its own.
	OnlySession string
}

// LastDigest is the hex SHA-256 of a final reply with its white space
// squashed: what matchesLast compares when only a digest was kept.
func LastDigest(s string) string { return hookinput.Digest(s) }

// PromptDigest is the digest a hook's prompt is compared by (turnReported).
func PromptDigest(m string) string {
	m, _ = splitIDEContext(cutGitMemContext(m))
	return LastDigest(squash(m))
}

// Result is what a reader found: the closed exchanges in session order and
// the records it had to skip.
type Result struct {
	Exchanges []*exchange.Exchange
	Problems  []Problem
	// Cwd is the session's working directory as the transcript records it
	// ("" when it does not): what the config's project exclusions match.
	Cwd string
}

// Problem is a record that was skipped. The rest of the file is still read.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) Error() string {
	if p.Line <= 0 {
		return p.File + ": " + p.Msg
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

// ReadFile reads path in the given format ("" or "auto" sniffs it). The plain
// exchange format is read by exchange.ReadJSONL, not here.
func ReadFile(path, format string, opt Options) (Result, error) {
	if format == "" || format == "auto" {
		f, err := Detect(path)
		if err != nil {
			return Result{}, err
		}
		format = f
	}
	switch format {
	case FormatClaudeCode:
		return ReadClaudeCode(path, opt)
	case FormatCodex:
		return ReadCodex(path, opt)
	case FormatAider:
		return ReadAider(path, opt)
	case FormatExchange:
		return Result{}, fmt.Errorf("read %s: the plain exchange format is read with exchange.ReadJSONL, not by the transcript readers", path)
	default:
		if a, ok := docAgents[format]; ok {
			return a.read(path, opt)
		}
		return Result{}, fmt.Errorf("read %s: unknown format %q (use exchange, %s)", path, format, strings.Join(Formats(), ", "))
	}
}

// Detect sniffs the first records of path and names its format.
func Detect(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("detect format of %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, 256<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("detect format of %s: %w", path, err)
	}
	if bytes.Contains(head[:min(n, 4096)], []byte(`"projectHash"`)) && bytes.Contains(head[:min(n, 4096)], []byte(`"sessionId"`)) {
		return FormatGemini, nil
	}
	// A Copilot Chat log's first line names a sessionId deep inside it: a
	// line too long to parse whole would pass for Claude Code's.
	if isCopilotLogHead(head[:n]) {
		return FormatCopilot, nil
	}
	// Qwen Code's records look like Claude Code's (uuid, parentUuid,
	// sessionId) around Gemini's message shape.
	if isQwenHead(head[:n]) {
		return FormatQwenCode, nil
	}
	if format := detectBytes(head[:n]); format != "" {
		return format, nil
	}
	for _, name := range docAgentOrder {
		if a := docAgents[name]; a.sniff != nil && a.sniff(path, head[:n]) {
			return name, nil
		}
	}
	return "", fmt.Errorf("detect format of %s: not a transcript git mem knows (pass --format exchange, %s)", path, strings.Join(Formats(), ", "))
}

var claudeTypes = map[string]bool{
	"user": true, "assistant": true, "system": true, "summary": true, "attachment": true,
	"progress": true, "file-history-snapshot": true, "queue-operation": true,
	"permission-mode": true, "last-prompt": true, "custom-title": true,
}

func detectBytes(head []byte) string {
	head = bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF")) // a UTF-8 BOM some editors write
	lines := bytes.Split(head, []byte("\n"))
	jsonSeen := 0
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' {
			if bytes.HasPrefix(line, []byte("# aider chat started at")) || bytes.HasPrefix(line, []byte("#### ")) {
				return FormatAider
			}
			if i > 50 {
				break
			}
			continue
		}
		var rec map[string]json.RawMessage
		if json.Unmarshal(line, &rec) != nil {
			// A first record larger than the sniffed head is cut off: go
			// by the key that names each format, the first one in the
			// line (a 50 MB exchange may quote a transcript's keys).
			if f := firstKeyFormat(line); f != "" {
				return f
			}
			continue
		}
		jsonSeen++
		if _, ok := rec["turns"]; ok {
			return FormatExchange
		}
		var typ string
		_ = json.Unmarshal(rec["type"], &typ)
		if _, ok := rec["payload"]; ok {
			switch typ {
			case "session_meta", "response_item", "event_msg", "turn_context", "compacted":
				return FormatCodex
			}
		}
		if _, ok := rec["sessionId"]; ok || claudeTypes[typ] {
			return FormatClaudeCode
		}
		if jsonSeen > 20 {
			break
		}
	}
	return ""
}

// formatKeys are keys that only one format has at its top level.
var formatKeys = []struct {
	key, format string
}{
	{`"type":"session_meta"`, FormatCodex},
	{`"parentUuid"`, FormatClaudeCode},
	{`"sessionId"`, FormatClaudeCode},
	{`"turns"`, FormatExchange},
}

// firstKeyFormat is the format of the format key that comes first in line.
func firstKeyFormat(line []byte) string {
	best, format := -1, ""
	for _, k := range formatKeys {
		if i := bytes.Index(line, []byte(k.key)); i >= 0 && (best < 0 || i < best) {
			best, format = i, k.format
		}
	}
	return format
}

// line is one record of a JSON Lines transcript.
type line struct {
	n    int
	data []byte
	// last is set on the final line of the file when it has no newline:
	// possibly a record the agent is still writing.
	last bool
}

// readLines reads a JSON Lines stream, skipping blank lines. Lines over
// exchange.MaxRecordBytes are reported, not loaded.
func readLines(r io.Reader, name string, probs *[]Problem, fn func(line)) error {
	br := bufio.NewReaderSize(r, 256<<10)
	n := 0
	for {
		data, tooLong, err := readRawLine(br)
		if err != nil && err != io.EOF {
			return err
		}
		if len(data) > 0 || tooLong || err == nil {
			n++
		}
		if tooLong {
			*probs = append(*probs, Problem{name, n, fmt.Sprintf("record over %d MiB skipped", exchange.MaxRecordBytes>>20)})
		} else if t := bytes.TrimSpace(data); len(t) > 0 {
			fn(line{n: n, data: t, last: err == io.EOF})
		}
		if err == io.EOF {
			return nil
		}
	}
}

func readRawLine(br *bufio.Reader) ([]byte, bool, error) {
	var out []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(out)+len(chunk) > exchange.MaxRecordBytes {
				tooLong = true
				out = nil
			} else {
				out = append(out, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(out, "\r\n"), tooLong, err
	}
}

// badLine reports a line that is not a JSON record. A torn last line is the
// agent still writing, said so plainly.
func badLine(name string, l line, err error) Problem {
	if l.last {
		return Problem{name, l.n, "incomplete last record (the agent may still be writing it); skipped"}
	}
	msg := err.Error()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg = fmt.Sprintf("not JSON: %v (byte %d)", se, se.Offset)
	} else if errors.As(err, new(*json.UnmarshalTypeError)) {
		msg = "unexpected record shape: " + msg
	}
	return Problem{name, l.n, msg + "; skipped"}
}

// decodeAny decodes JSON keeping numbers exact, as exchange.Turn.Input wants.
func decodeAny(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return sanitize(v), nil
}

// sanitize bounds long strings and turns numbers JSON allows but float64
// cannot hold (1e999) into strings, so canonical JSON never fails later.
func sanitize(v any) any {
	switch x := v.(type) {
	case string:
		return clip(x)
	case json.Number:
		if _, err := x.Float64(); err != nil {
			return string(x)
		}
		return x
	case []any:
		for i := range x {
			x[i] = sanitize(x[i])
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = sanitize(e)
		}
		return x
	}
	return v
}

// clip keeps the head and tail of a huge text around a marker.
func clip(s string) string {
	s = validUTF8(s)
	if len(s) <= MaxToolResultBytes {
		return s
	}
	head := MaxToolResultBytes * 3 / 4
	tail := MaxToolResultBytes / 4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	ts := len(s) - tail
	for ts < len(s) && !utf8.RuneStart(s[ts]) {
		ts++
	}
	return s[:head] + fmt.Sprintf("\n[… %d bytes cut by git mem …]\n", ts-head) + s[ts:]
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Text git mem injects into a session (recalled memories) is fenced so it
// can be cut out again and never re-ingested. An unclosed fence runs to the
// end of the text.
var gitMemContextRe = lazy.Regexp(`(?s)<git-mem-context(?:\s[^>]*)?>.*?(?:</git-mem-context>|\z)`)

// cutGitMemContext removes git mem's own injected context.
func cutGitMemContext(s string) string {
	if !strings.Contains(s, "<git-mem-context") {
		return s
	}
	return strings.TrimSpace(gitMemContextRe().ReplaceAllString(s, ""))
}

// squash normalises whitespace for comparing a final reply with the hook's
// last_assistant_message.
func squash(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// builder accumulates the turns of one exchange.
type builder struct {
	ex      *exchange.Exchange
	command bool           // started by a slash command: kept only if the agent replied
	tools   map[string]int // tool call id -> index in ex.Turns
	closed  bool           // a later marker says the turn is finished
}

func newBuilder(ex *exchange.Exchange) *builder {
	return &builder{ex: ex, tools: map[string]int{}}
}

func (b *builder) add(t exchange.Turn) int {
	b.ex.Turns = append(b.ex.Turns, t)
	return len(b.ex.Turns) - 1
}

func (b *builder) text(role, text string, extra map[string]any) {
	if strings.TrimSpace(text) == "" {
		return
	}
	b.add(exchange.Turn{Role: role, Text: text, Extra: extra})
}

func (b *builder) toolCall(id, name string, input any) {
	i := b.add(exchange.Turn{Role: exchange.RoleTool, Name: name, Input: input})
	if id != "" {
		b.tools[id] = i
	}
}

// toolResult sets what the model saw back from call id. A result whose call
// is unknown (cut off by compaction) still gets a turn of its own.
func (b *builder) toolResult(id, text string, isError bool) int {
	text = clip(cutGitMemContextTool(text))
	i, ok := b.tools[id]
	if !ok {
		i = b.add(exchange.Turn{Role: exchange.RoleTool})
		if id != "" {
			b.tools[id] = i
		}
	}
	t := &b.ex.Turns[i]
	switch {
	case t.Text == "":
		t.Text = text
	case len(t.Text) < MaxToolResultBytes:
		// A second result for one call (never seen in practice): keep it,
		// but bounded, so a crafted file cannot grow a turn without end.
		t.Text = clip(t.Text + "\n" + text)
	}
	if isError {
		if t.Extra == nil {
			t.Extra = map[string]any{}
		}
		t.Extra["is_error"] = true
	}
	return i
}

// cutGitMemContextTool replaces git mem's context in a tool result with a
// marker, so the model's next step still reads sensibly.
func cutGitMemContextTool(s string) string {
	if !strings.Contains(s, "<git-mem-context") {
		return s
	}
	return gitMemContextRe().ReplaceAllString(s, "[git mem context omitted]")
}

func (b *builder) hasReply() bool {
	for _, t := range b.ex.Turns {
		if t.Role == exchange.RoleAssistant || t.Role == exchange.RoleTool {
			return true
		}
	}
	return false
}

// finalReply is the text of the last assistant message (thinking excluded).
func (b *builder) finalReply() string {
	start := len(b.ex.Turns)
	for start > 0 {
		r := b.ex.Turns[start-1].Role
		if r == exchange.RoleTool || r == exchange.RoleUser {
			break
		}
		start--
	}
	var parts []string
	for _, t := range b.ex.Turns[start:] {
		if t.Role == exchange.RoleAssistant && t.Extra["thinking"] == nil {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// matchesLast says whether the hook's last assistant message is this
// exchange's final reply (whole, or its last block).
func (b *builder) matchesLast(opt Options) bool {
	want := LastDigest(opt.LastAssistantMessage)
	if want == "" {
		want = opt.LastAssistantDigest
	}
	if want == "" {
		return false
	}
	if LastDigest(b.finalReply()) == want {
		return true
	}
	for i := len(b.ex.Turns) - 1; i >= 0; i-- {
		t := b.ex.Turns[i]
		if t.Role == exchange.RoleAssistant && t.Extra["thinking"] == nil {
			return LastDigest(t.Text) == want
		}
	}
	return false
}

// turnReported says whether the hook reported this exchange's turn as
// complete (see Options.TurnComplete).
func (b *builder) turnReported(opt Options) bool {
	if !opt.TurnComplete || !b.hasReply() {
		return false
	}
	if len(opt.InputMessages) == 0 && len(opt.InputDigests) == 0 {
		return true
	}
	prompt := squash(b.ex.UserText())
	if len(opt.InputDigests) > 0 {
		d := LastDigest(prompt)
		for _, x := range opt.InputDigests {
			if x == d {
				return true
			}
		}
	}
	for _, m := range opt.InputMessages {
		m, _ = splitIDEContext(cutGitMemContext(m))
		if squash(m) == prompt {
			return true
		}
	}
	return false
}

// finish returns the closed exchanges: all but the last, and the last too
// when the session ended, a marker closed it, or the hook's final reply
// matches. Command-only exchanges (/exit, /model) are dropped.
func finish(bs []*builder, opt Options) []*exchange.Exchange {
	var out []*exchange.Exchange
	for i, b := range bs {
		last := i == len(bs)-1
		if last && !(opt.SessionEnded || b.closed || b.matchesLast(opt) || b.turnReported(opt)) {
			break
		}
		if b.command && !b.hasReply() {
			continue
		}
		if b.ex.Validate() != nil {
			continue
		}
		out = append(out, b.ex)
	}
	return out
}

// endTurn closes the exchange being read (a new prompt, or a message of
// git mem's own context only, ends it); it returns nil for the reader's
// current builder.
func endTurn(cur *builder) *builder {
	if cur != nil {
		cur.closed = true
	}
	return nil
}

// promptBuilder starts an exchange with the user's prompt. A slash command
// is kept only if the agent replies to it.
func promptBuilder(ex *exchange.Exchange, prompt string) *builder {
	b := newBuilder(ex)
	b.command = strings.HasPrefix(prompt, "/")
	b.text(exchange.RoleUser, clip(prompt), nil)
	return b
}
