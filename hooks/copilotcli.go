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
// session.info, hook.*) that are left out. The file is append-only.

const (
	AgentCopilotCLI  = "copilot-cli"
	FormatCopilotCLI = "copilot-cli"
)

type ghEvent struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
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
	ToolRequests []struct {
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
	err = readLines(f, path, &res.Problems, func(l line) {
		var ev ghEvent
		if err := json.Unmarshal(l.data, &ev); err != nil {
			res.Problems = append(res.Problems, badLine(path, l, err))
			return
		}
		var d ghData
		if len(ev.Data) > 0 {
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				res.Problems = append(res.Problems, badLine(path, l, err))
				return
			}
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
			if cur != nil {
				cur.closed = false
			}
		case "assistant.reasoning":
			if cur != nil {
				cur.text(exchange.RoleAssistant, clip(validUTF8(partsText(d.Content))), map[string]any{"thinking": true})
			}
		case "assistant.message":
			if cur == nil {
				return
			}
			cur.text(exchange.RoleAssistant, clip(validUTF8(partsText(d.Content))), nil)
			askedTools = len(d.ToolRequests) > 0
			for _, r := range d.ToolRequests {
				if _, seen := cur.tools[r.ToolCallID]; seen && r.ToolCallID != "" {
					continue
				}
				cur.toolCall(r.ToolCallID, validUTF8(r.Name), sanitize(ghArgs(r.Arguments)))
			}
		case "tool.execution_start":
			if cur == nil {
				return
			}
			askedTools = true
			if _, seen := cur.tools[d.ToolCallID]; !seen || d.ToolCallID == "" {
				cur.toolCall(d.ToolCallID, validUTF8(d.ToolName), sanitize(ghArgs(d.Arguments)))
			}
		case "tool.execution_complete":
			if cur == nil {
				return
			}
			failed := d.Success != nil && !*d.Success
			text := ghText(d.Result)
			if failed && text == "" {
				text = ghText(d.Error)
			}
			cur.toolResult(d.ToolCallID, validUTF8(text), failed)
		case "assistant.turn_end":
			// The agent waits for the user once a model step ends without
			// asking for tools.
			if cur != nil && !askedTools {
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
	res.Exchanges = finish(bs, opt)
	return res, nil
}

// copilotCLISessionID is the session folder's name (…/<id>/events.jsonl),
// or the legacy file's (…/<id>.jsonl).
func copilotCLISessionID(path string) string {
	if filepath.Base(path) == "events.jsonl" {
		return filepath.Base(filepath.Dir(path))
	}
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}

// CopilotCLISessionsDir is where Copilot CLI keeps its session logs.
func CopilotCLISessionsDir(home string) string {
	return filepath.Join(home, ".copilot", "session-state")
}

func isCopilotCLISession(p string, d fs.DirEntry) bool {
	n := d.Name()
	if n == "events.jsonl" {
		return filepath.Base(filepath.Dir(filepath.Dir(p))) == "session-state"
	}
	return strings.HasSuffix(n, ".jsonl") && filepath.Base(filepath.Dir(p)) == "session-state"
}
