package hooks

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitmem/git-mem/exchange"
)

// GitHub Copilot CLI (the `copilot` command) logs each session as JSON
// Lines of events, ~/.copilot/session-state/<sessionId>/events.jsonl
// (older builds: session-state/<sessionId>.jsonl), with workspace.yaml
// (id, cwd, …) beside it. Every line is {type, data, id, timestamp,
// parentId}: session.start {sessionId, copilotVersion, context {cwd}},
// user.message {content, transformedContent, attachments}, assistant.turn_start
// / assistant.turn_end {turnId} around each model call, assistant.message
// {messageId, content, toolRequests [{toolCallId, name, arguments}]},
// assistant.reasoning {content}, tool.execution_start {toolCallId, toolName,
// arguments}, tool.execution_complete {toolCallId, success, result {content,
// detailedContent}, error {message}}, abort, session.error, session.shutdown,
// and UI or bookkeeping events (system.message, session.model_change,
// session.info, hook.*, model.*) that are left out, not even decoded. The
// file is append-only, except that /undo and /rewind rewrite it without the
// undone turns (the kept events keep their ids).
//
// Seen in files 1.0.102 wrote (hooks/testdata/copilot-cli/generated; field
// meanings from the package's copilot-sdk/generated/session-events.d.ts):
//   - A resumed session (`--resume`) appends session.resume, not a second
//     session.start; every `-p` run ends with session.shutdown.
//   - The step's reasoning is the message's reasoningText (chat completions
//     and Anthropic alike), with no assistant.reasoning event.
//   - A model call that fails writes turn_start, turn_end and then
//     session.error, with no assistant.message between: that turn_end does
//     not end the exchange.
//   - A subagent (the task tool) writes its events into the same file, each
//     with the envelope's agentId ("absent for events from the root/main
//     agent") and, past its user.message and system.message,
//     data.parentToolCallId. Its user.message is its task, already the
//     launching call's input; its turn_start/turn_end say nothing of the
//     main agent's step. Its steps are kept after the launching call
//     (subagent.started {toolCallId} names it), marked Extra["subagent"] =
//     agentId, as for Claude Code. Until subagent.completed (or .failed) the
//     exchange stays open: a background one outlasts the main agent's reply,
//     and the runtime's system.notification then makes the agent go on.
//   - skill.invoked {name, content} is the skill text the model is given;
//     session.compaction_complete while the agent works marks the exchange.

const (
	AgentCopilotCLI  = "copilot-cli"
	FormatCopilotCLI = "copilot-cli"
)

type ghEvent struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	AgentID   string          `json:"agentId"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// ghTypes are the events the reader looks into.
var ghTypes = map[string]bool{
	"session.start": true, "user.message": true, "assistant.turn_start": true,
	"assistant.reasoning": true, "assistant.message": true, "tool.execution_start": true,
	"tool.execution_complete": true, "assistant.turn_end": true, "abort": true,
	"session.shutdown": true, "session.error": true, "session.compaction_complete": true,
	"subagent.started": true, "subagent.completed": true, "subagent.failed": true,
	"skill.invoked": true, "system.notification": true,
}

type ghData struct {
	SessionID string `json:"sessionId"`
	Context   struct {
		Cwd string `json:"cwd"`
	} `json:"context"`
	Content     json.RawMessage `json:"content"`
	Attachments []struct {
		Type        string `json:"type"`
		Path        string `json:"path"`
		DisplayName string `json:"displayName"`
	} `json:"attachments"`
	ReasoningText string `json:"reasoningText"`
	ToolRequests  []struct {
		ToolCallID string          `json:"toolCallId"`
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
	} `json:"toolRequests"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Arguments  json.RawMessage `json:"arguments"`
	Success    *bool           `json:"success"`
	Result     json.RawMessage `json:"result"`
	Error      json.RawMessage `json:"error"`
	Message    string          `json:"message"`
	Name       string          `json:"name"` // skill.invoked
	// ParentToolCallID: a subagent's event, and the call that launched it.
	ParentToolCallID string `json:"parentToolCallId"`
}

// ghArgs decodes tool arguments, an object or (some builds) a JSON string
// holding one.
func ghArgs(raw json.RawMessage) any {
	v, err := decodeAny(raw)
	if err != nil {
		return nil
	}
	if s, ok := v.(string); ok {
		if w, err := decodeAny([]byte(s)); err == nil {
			if _, ok := w.(map[string]any); ok {
				return w
			}
		}
	}
	return v
}

// ghText is a result or error: a string, or an object whose content (or
// message) is the text the model saw.
func ghText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content json.RawMessage `json:"content"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil {
		if t := partsText(o.Content); t != "" {
			return t
		}
		if o.Message != "" {
			return o.Message
		}
	}
	return string(raw)
}

// ReadCopilotCLI reads a Copilot CLI session's events.jsonl.
func ReadCopilotCLI(path string, opt Options) (Result, error) {
	var res Result
	f, err := os.Open(path)
	if err != nil {
		return res, fmt.Errorf("read copilot cli session %s: %w", path, err)
	}
	defer f.Close()
	session, cwd := "", opt.Cwd
	var bs []*builder
	var cur *builder
	prompts := 0
	// askedTools: the last model step asked for tools, so another step
	// follows their results.
	askedTools := false
	// replied: the main agent's current model step gave a message; one
	// that failed (a provider error, then session.error) gave none.
	replied := false
	// running: the exchange's subagents started and not yet completed (in
	// the background they outlast the main agent's reply, which then is
	// not the end: the runtime notifies it when they are done).
	running := map[string]bool{}
	// reasoned: the reasoning texts of this exchange's assistant.reasoning
	// events; an assistant.message's reasoningText repeating one is the
	// same reasoning.
	reasoned := map[string]bool{}
	subsOf := map[*builder]*ghSubagents{}
	err = readLines(f, path, &res.Problems, func(l line) {
		var ev ghEvent
		if err := json.Unmarshal(l.data, &ev); err != nil {
			res.Problems = append(res.Problems, badLine(path, l, err))
			return
		}
		if !ghTypes[ev.Type] {
			// Bookkeeping and UI events, whose data may have another
			// shape (model.message's message is an object).
			return
		}
		var d ghData
		if len(ev.Data) > 0 {
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				res.Problems = append(res.Problems, badLine(path, l, err))
				return
			}
		}
		if agent := ghAgent(ev, d); agent != "" {
			// A subagent's step: its own, beside the main agent's.
			if cur != nil {
				subsOf[cur] = subsOf[cur].event(agent, ev.Type, d)
				switch ev.Type {
				case "subagent.started":
					running[agent] = true
				case "subagent.completed", "subagent.failed":
					delete(running, agent)
				}
			}
			return
		}
		switch ev.Type {
		case "session.start":
			if session == "" {
				session = d.SessionID
			}
			if cwd == "" {
				cwd = d.Context.Cwd
			}
		case "user.message":
			prompts++
			prompt := strings.TrimSpace(cutGitMemContext(validUTF8(partsText(d.Content))))
			cur = endTurn(cur)
			askedTools = false
			clear(reasoned)
			clear(running)
			if prompt == "" {
				return
			}
			if session == "" {
				session = copilotCLISessionID(path)
			}
			id := ev.ID
			if id == "" {
				id = fmt.Sprint(prompts)
			}
			ex := &exchange.Exchange{ID: "copilot-cli:" + session + "/" + id, Session: session, Agent: AgentCopilotCLI}
			if _, err := exchange.ParseTime(ev.Timestamp); err == nil {
				ex.Time = ev.Timestamp
			}
			cur = promptBuilder(ex, prompt)
			var side []string
			for _, a := range d.Attachments {
				if p := validUTF8(a.Path); p != "" {
					side = append(side, "["+a.Type+" "+p+"]")
				}
			}
			cur.text(exchange.RoleSystem, strings.Join(side, "\n"), nil)
			bs = append(bs, cur)
		case "assistant.turn_start":
			replied = false
			if cur != nil {
				cur.closed = false
			}
		case "assistant.reasoning", "assistant.message", "tool.execution_start", "tool.execution_complete":
			if cur == nil {
				return
			}
			if asked, ok := ghStep(cur, ev.Type, d, reasoned); ok {
				askedTools = asked
			}
			if ev.Type == "assistant.message" {
				replied = true
			}
		case "assistant.turn_end":
			// The agent waits for the user once a model step ends with a
			// reply that asks for no tools and no subagent of the exchange
			// still runs. A step without a message failed: its
			// session.error (or a retry) follows.
			if cur != nil && replied && !askedTools && len(running) == 0 {
				cur.closed = true
			}
		case "abort", "session.shutdown":
			// A tool still running when the user aborts was stopped: it
			// is kept as failed (and touched no file).
			if cur != nil && ev.Type == "abort" {
				for _, i := range cur.tools {
					if t := &cur.ex.Turns[i]; t.Text == "" && t.Extra["is_error"] == nil {
						t.Text = "(aborted by the user)"
						t.Extra = map[string]any{"is_error": true}
					}
				}
			}
			cur = endTurn(cur)
		case "system.notification":
			// What the runtime tells the model (a background subagent is
			// done, a shell finished).
			if cur != nil && !cur.closed {
				cur.text(exchange.RoleSystem, clip(validUTF8(partsText(d.Content))), nil)
			}
		case "skill.invoked":
			// The skill's instructions, which the model is given next.
			if cur != nil && !cur.closed {
				if t := strings.TrimSpace(validUTF8(partsText(d.Content))); t != "" {
					cur.text(exchange.RoleSystem, clip("[skill "+validUTF8(d.Name)+"]\n"+t), nil)
				}
			}
		case "session.compaction_complete":
			// The agent compacted its context while working (as for
			// Codex: a /compact between exchanges marks none).
			if cur != nil && !cur.closed && d.Success != nil && *d.Success {
				cur.text(exchange.RoleSystem, "[conversation compacted]", nil)
			}
		case "session.error":
			if cur != nil {
				cur.text(exchange.RoleSystem, clip(validUTF8(d.Message)), nil)
			}
		}
	})
	if err != nil {
		return res, fmt.Errorf("read copilot cli session %s: %w", path, err)
	}
	if cwd == "" {
		cwd = fileField(filepath.Join(filepath.Dir(path), "workspace.yaml"), "cwd")
	}
	res.Cwd = cwd
	if cwd != "" {
		project := ProjectFromCwd(cwd)
		for _, b := range bs {
			b.ex.Project = project
		}
	}
	for _, b := range bs {
		if s := subsOf[b]; s != nil {
			b.ex.Turns = s.splice(b)
		}
	}
	res.Exchanges = finish(bs, opt)
	return res, nil
}

// ghStep adds a model step or a tool's run to b: reasoning, a message and
// the calls it asks for, a call starting, a call's result. asked says
// whether the step leaves tools to run (ok: it says anything of it).
func ghStep(b *builder, typ string, d ghData, reasoned map[string]bool) (asked, ok bool) {
	switch typ {
	case "assistant.reasoning":
		t := validUTF8(partsText(d.Content))
		reasoned[strings.TrimSpace(t)] = true
		b.text(exchange.RoleAssistant, clip(t), map[string]any{"thinking": true})
	case "assistant.message":
		// Reasoning the provider streamed with the reply is kept on the
		// message itself (1.0.102, chat completions).
		if t := validUTF8(d.ReasoningText); strings.TrimSpace(t) != "" && !reasoned[strings.TrimSpace(t)] {
			reasoned[strings.TrimSpace(t)] = true
			b.text(exchange.RoleAssistant, clip(t), map[string]any{"thinking": true})
		}
		b.text(exchange.RoleAssistant, clip(validUTF8(partsText(d.Content))), nil)
		for _, r := range d.ToolRequests {
			if _, seen := b.tools[r.ToolCallID]; seen && r.ToolCallID != "" {
				continue
			}
			b.toolCall(r.ToolCallID, validUTF8(r.Name), sanitize(ghArgs(r.Arguments)))
		}
		return len(d.ToolRequests) > 0, true
	case "tool.execution_start":
		if _, seen := b.tools[d.ToolCallID]; !seen || d.ToolCallID == "" {
			b.toolCall(d.ToolCallID, validUTF8(d.ToolName), sanitize(ghArgs(d.Arguments)))
		}
		return true, true
	case "tool.execution_complete":
		failed := d.Success != nil && !*d.Success
		text := ghText(d.Result)
		if failed && text == "" {
			text = ghText(d.Error)
		}
		b.toolResult(d.ToolCallID, validUTF8(text), failed)
	}
	return false, false
}

// ghAgent names the subagent an event is from: the envelope's agentId, or
// (without one) the call that launched it; "" for the main agent.
func ghAgent(ev ghEvent, d ghData) string {
	if ev.AgentID != "" {
		return validUTF8(ev.AgentID)
	}
	if d.ParentToolCallID != "" {
		return "call:" + validUTF8(d.ParentToolCallID)
	}
	return ""
}

// ghSubagents are the subagents of one exchange, in the order they first
// wrote: their steps, and the call that launched each.
type ghSubagents struct {
	order    []string
	steps    map[string]*builder
	launch   map[string]string
	reasoned map[string]map[string]bool
}

// event adds a subagent's event; the receiver may be nil (the exchange's
// first subagent event).
func (s *ghSubagents) event(agent, typ string, d ghData) *ghSubagents {
	if s == nil {
		s = &ghSubagents{steps: map[string]*builder{}, launch: map[string]string{}, reasoned: map[string]map[string]bool{}}
	}
	b := s.steps[agent]
	if b == nil {
		b = newBuilder(&exchange.Exchange{})
		s.steps[agent] = b
		s.reasoned[agent] = map[string]bool{}
		s.order = append(s.order, agent)
		if id, ok := strings.CutPrefix(agent, "call:"); ok {
			s.launch[agent] = id
		}
	}
	switch typ {
	case "subagent.started":
		if d.ToolCallID != "" {
			s.launch[agent] = d.ToolCallID
		}
	case "user.message", "system.message":
		// Its task (the launching call's input) and its instructions.
	default:
		ghStep(b, typ, d, s.reasoned[agent])
	}
	return s
}

// splice is b's turns with each subagent's steps after the call that
// launched it (at the end when that call is not in b), marked with the
// agent, as attachSubagents marks Claude Code's.
func (s *ghSubagents) splice(b *builder) []exchange.Turn {
	at := map[int][]string{}
	var tail []string
	for _, a := range s.order {
		if i, ok := b.tools[s.launch[a]]; ok && s.launch[a] != "" {
			at[i] = append(at[i], a)
		} else {
			tail = append(tail, a)
		}
	}
	out := make([]exchange.Turn, 0, len(b.ex.Turns))
	add := func(a string) {
		for _, t := range s.steps[a].ex.Turns {
			extra := map[string]any{"subagent": a}
			for k, v := range t.Extra {
				extra[k] = v
			}
			if t.Role != exchange.RoleTool {
				extra["speaker"] = "subagent " + a
			}
			t.Extra = extra
			out = append(out, t)
		}
	}
	for i, t := range b.ex.Turns {
		out = append(out, t)
		for _, a := range at[i] {
			add(a)
		}
	}
	for _, a := range tail {
		add(a)
	}
	return out
}

// copilotCLISessionID is the session folder's name (…/<id>/events.jsonl),
// or the legacy file's (…/<id>.jsonl).
func copilotCLISessionID(path string) string {
	if filepath.Base(path) == "events.jsonl" {
		return filepath.Base(filepath.Dir(path))
	}
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}

// CopilotCLISessionsDir is where Copilot CLI keeps its session logs:
// <copilot home>/session-state, the home being $COPILOT_HOME, else
// ~/.copilot (CopilotCLIHome, the one place that decides it: the hook
// installer, the hook's sessionEnd lookup and import all use it).
//
// Copilot CLI 1.0.102 resolves the session folder from --config-dir, then
// $COPILOT_HOME, then ~/.copilot (its cli-main.js: configDir ??
// COPILOT_HOME ?? the OS home, and "session-state" under it), and
// --config-dir, now deprecated in favour of COPILOT_HOME (changelog
// 1.0.40), also sets COPILOT_HOME for the process, so hooks it runs see
// it. The XDG variables no longer move it: older builds (up to about
// 0.0.421-1.0.4; the changelog gives no version) kept state in
// $XDG_STATE_HOME/.copilot and config in $XDG_CONFIG_HOME/.copilot; a
// current build, when neither COPILOT_HOME nor --config-dir is given,
// moves session-state (and session-store.db, hooks, …) from there into
// ~/.copilot at startup and leaves symlinks behind (its "XDG migration"; docs: "Previous XDG-based configuration
// locations are migrated to ~/.copilot at startup when COPILOT_HOME isn't
// set"). So git mem reads no XDG folder: sessions of an old build not yet
// migrated are imported by naming the folder (`git mem import copilot-cli
// DIR`). A session started with --config-dir DIR is found only with
// COPILOT_HOME=DIR set for git mem, or DIR/session-state named.
func CopilotCLISessionsDir(home string) string {
	return filepath.Join(CopilotCLIHome(home), "session-state")
}

func isCopilotCLISession(p string, d fs.DirEntry) bool {
	n := d.Name()
	if n == "events.jsonl" {
		return filepath.Base(filepath.Dir(filepath.Dir(p))) == "session-state"
	}
	return strings.HasSuffix(n, ".jsonl") && filepath.Base(filepath.Dir(p)) == "session-state"
}
