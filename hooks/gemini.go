package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/lazy"
)

// Gemini CLI records each session under ~/.gemini/tmp/<project>/chats/:
// up to 0.2x as one JSON document (session-<time>-<id8>.json, rewritten on
// every message), since then as JSON Lines (….jsonl) of a metadata record,
// message records (a message is appended again whenever it changes: same
// id, later wins), {"$set": {…}} metadata updates (one may carry the whole
// message list) and {"$rewindTo": id} (drop that message and all after).
// Messages: type user (a prompt), gemini (the model's reply: content,
// thoughts, toolCalls with their results), info / warning / error (the
// UI's own notes). Tool results live in the call that made them.
//
// As Gemini CLI 0.61 writes it (seen in the generated fixtures): the first
// message is a user message of the CLI's own <session_context> (not a
// prompt); text from hooks' additionalContext is wrapped in <hook_context>
// (SessionStart's prepended to the prompt in -p mode, BeforeAgent's a part
// after it: not the user's words); every tool round adds a user message of
// functionResponse parts (not a prompt either: it must not end the turn).
// Whole-list $sets are the CLI syncing the file with the model's history:
// on resume (with its original records, or, when the resumed session's
// stub lands in the same file, rebuilt: new timestamps, calls and thoughts
// as functionCall / thought parts, an extra "<id>_response" message, and
// without prompts that began with <hook_context>) and after compression
// (a <state_snapshot> user message, a canned reply, and the kept turns
// under new ids). None adds anything the lines did not already record, so
// once a message has been appended on a line of its own, later $sets of
// the list are ignored (only $rewindTo drops messages).

// AgentGemini is Exchange.Agent for Gemini CLI.
const (
	AgentGemini  = "gemini"
	FormatGemini = "gemini"
)

type gmMessage struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Thoughts  []struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
	} `json:"thoughts"`
	ToolCalls []struct {
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		Args   json.RawMessage `json:"args"`
		Result json.RawMessage `json:"result"`
		Status string          `json:"status"`
	} `json:"toolCalls"`
	line int
}

// geminiHookContextRe matches the text Gemini CLI adds from a hook's
// additionalContext.
var geminiHookContextRe = lazy.Regexp(`(?s)<hook_context>.*?(?:</hook_context>|\z)`)

// ReadGemini reads a Gemini CLI chat file, legacy JSON or JSON Lines.
func ReadGemini(path string, opt Options) (Result, error) {
	data, err := readDoc(path)
	if err != nil {
		return Result{}, fmt.Errorf("read gemini chat %s: %w", path, err)
	}
	var res Result
	var msgs []*gmMessage
	session := ""
	trim := bytes.TrimSpace(data)
	firstLine, _, _ := bytes.Cut(trim, []byte("\n"))
	var first map[string]json.RawMessage
	firstOK := json.Unmarshal(bytes.TrimSpace(firstLine), &first) == nil
	_, hasMessages := first["messages"]
	switch {
	case len(trim) == 0:
		return res, nil
	case !firstOK || hasMessages:
		// Legacy: one document (pretty-printed, so its first line is "{").
		var head struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(trim, &head); err != nil {
			res.Problems = append(res.Problems, docProblem(path, data, err))
			return res, nil
		}
		session = head.SessionID
		elems, err := arrayAt(data, "messages")
		if err != nil {
			res.Problems = append(res.Problems, docProblem(path, data, err))
			return res, nil
		}
		for _, e := range elems {
			var m gmMessage
			if err := json.Unmarshal(e.raw, &m); err != nil {
				res.Problems = append(res.Problems, badElem(path, e, err))
				continue
			}
			m.line = e.line
			msgs = append(msgs, &m)
		}
	default:
		session, msgs = readGeminiLines(data, path, &res)
	}
	session = sessionOr(session, path)
	project := geminiProject(path, opt.Cwd)
	var bs []*builder
	var cur *builder
	resulted := map[string]bool{} // tool call ids whose result is read
	for _, m := range msgs {
		switch m.Type {
		case "user":
			parts := geminiParts(m.Content)
			if len(parts.responses) > 0 {
				// Tool results sent back to the model: part of the turn.
				if cur != nil {
					for _, r := range parts.responses {
						if r.id != "" && !resulted[r.id] {
							resulted[r.id] = true
							cur.toolResult(r.id, r.text, r.isError)
						}
					}
				}
				continue
			}
			text := strings.TrimSpace(partsText(m.Content))
			if strings.HasPrefix(text, "<session_context>") || strings.HasPrefix(text, "<state_snapshot>") {
				continue // the CLI's own context or its summary of a compressed history, not a prompt
			}
			// Hooks' additionalContext (SessionStart's prepended to the
			// prompt in -p mode, BeforeAgent's as a part after it, or a
			// message of its own) is not the user's.
			prompt := strings.TrimSpace(cutGitMemContext(text))
			if strings.Contains(prompt, "<hook_context>") {
				if prompt = strings.TrimSpace(geminiHookContextRe().ReplaceAllString(prompt, "")); prompt == "" {
					continue
				}
			}
			cur = endTurn(cur)
			if prompt == "" {
				continue
			}
			if m.ID == "" {
				res.Problems = append(res.Problems, Problem{path, m.line, "user message without an id; skipped"})
				continue
			}
			ex := &exchange.Exchange{ID: session + "/" + m.ID, Session: session, Project: project, Agent: AgentGemini}
			if _, err := exchange.ParseTime(m.Timestamp); err == nil {
				ex.Time = m.Timestamp
			}
			cur = promptBuilder(ex, prompt)
			bs = append(bs, cur)
		case "gemini":
			if cur == nil {
				continue
			}
			parts := geminiParts(m.Content)
			var th []string
			for _, t := range m.Thoughts {
				th = append(th, strings.TrimSpace(validUTF8(t.Subject+": "+t.Description)))
			}
			th = append(th, parts.thoughts...)
			cur.text(exchange.RoleAssistant, clip(strings.Join(th, "\n")), map[string]any{"thinking": true})
			cur.text(exchange.RoleAssistant, clip(parts.text), nil)
			called := map[string]bool{}
			for _, tc := range m.ToolCalls {
				var input any
				if v, err := decodeAny(tc.Args); err == nil {
					input = v
				}
				called[tc.ID] = true
				cur.toolCall(tc.ID, validUTF8(tc.Name), input)
				if len(tc.Result) > 0 && string(tc.Result) != "null" {
					resulted[tc.ID] = true
				}
				cur.toolResult(tc.ID, geminiResult(tc.Result), tc.Status == "error" || tc.Status == "cancelled")
			}
			// A rebuilt history keeps its calls as functionCall parts; their
			// results come in the user message after it.
			for _, fc := range parts.calls {
				if fc.id != "" && called[fc.id] {
					continue
				}
				called[fc.id] = true
				cur.toolCall(fc.id, fc.name, fc.input)
			}
		case "error":
			if cur != nil {
				cur.text(exchange.RoleSystem, clip(partsText(m.Content)), nil)
			}
		}
	}
	res.Exchanges = finish(bs, opt)
	return res, nil
}

// readGeminiLines replays a JSON Lines chat into its message list.
func readGeminiLines(data []byte, name string, res *Result) (string, []*gmMessage) {
	session := ""
	var order []string
	byID := map[string]*gmMessage{}
	// fromSet takes a $set of the whole list, but only while no message
	// has been appended on a line of its own: once one has, the lines are
	// the record and a $set is the CLI's rebuilt copy (see the top of the
	// file), which adds nothing of the user's and may lose some.
	written := false
	fromSet := func(raws []json.RawMessage, line int) {
		if written {
			return
		}
		order, byID = nil, map[string]*gmMessage{}
		for _, r := range raws {
			var m gmMessage
			if json.Unmarshal(r, &m) == nil && m.ID != "" {
				m.line = line
				if _, ok := byID[m.ID]; !ok {
					order = append(order, m.ID)
				}
				byID[m.ID] = &m
			}
		}
	}
	_ = readLines(bytes.NewReader(data), name, &res.Problems, func(l line) {
		var probe struct {
			ID        *string         `json:"id"`
			SessionID string          `json:"sessionId"`
			Rewind    *string         `json:"$rewindTo"`
			Set       json.RawMessage `json:"$set"`
		}
		if err := json.Unmarshal(l.data, &probe); err != nil {
			res.Problems = append(res.Problems, badLine(name, l, err))
			return
		}
		switch {
		case probe.Rewind != nil:
			for i, id := range order {
				if id == *probe.Rewind {
					for _, d := range order[i:] {
						delete(byID, d)
					}
					order = order[:i]
					return
				}
			}
			order, byID = nil, map[string]*gmMessage{}
		case probe.Set != nil:
			var set struct {
				SessionID string             `json:"sessionId"`
				Messages  *[]json.RawMessage `json:"messages"`
			}
			if json.Unmarshal(probe.Set, &set) == nil {
				if set.SessionID != "" {
					session = set.SessionID
				}
				if set.Messages != nil {
					fromSet(*set.Messages, l.n)
				}
			}
		case probe.ID != nil:
			var m gmMessage
			if err := json.Unmarshal(l.data, &m); err != nil {
				res.Problems = append(res.Problems, badLine(name, l, err))
				return
			}
			m.line = l.n
			if _, ok := byID[m.ID]; !ok {
				order = append(order, m.ID)
			}
			byID[m.ID] = &m
			written = true
		case probe.SessionID != "":
			session = probe.SessionID
		}
	})
	out := make([]*gmMessage, 0, len(order))
	for _, id := range order {
		out = append(out, byID[id])
	}
	return session, out
}

// gmParts is a message's content split by kind of part.
type gmParts struct {
	text     string   // the text parts (and markers for images), thoughts excluded
	thoughts []string // parts with "thought": true
	calls    []struct {
		id, name string
		input    any
	}
	responses []struct {
		id, text string
		isError  bool
	}
}

// geminiParts splits content (a string or a list of parts) into text,
// thoughts, functionCall and functionResponse parts.
func geminiParts(raw json.RawMessage) gmParts {
	var out gmParts
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		out.text = partsText(raw)
		return out
	}
	var plain []json.RawMessage
	for _, p := range list {
		var part struct {
			Text         *string `json:"text"`
			Thought      bool    `json:"thought"`
			FunctionCall *struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
			FunctionResponse *struct {
				ID       string                     `json:"id"`
				Response map[string]json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		}
		if json.Unmarshal(p, &part) != nil {
			plain = append(plain, p)
			continue
		}
		switch {
		case part.FunctionCall != nil:
			var input any
			if v, err := decodeAny(part.FunctionCall.Args); err == nil {
				input = v
			}
			out.calls = append(out.calls, struct {
				id, name string
				input    any
			}{part.FunctionCall.ID, validUTF8(part.FunctionCall.Name), input})
		case part.FunctionResponse != nil:
			_, isErr := part.FunctionResponse.Response["error"]
			out.responses = append(out.responses, struct {
				id, text string
				isError  bool
			}{part.FunctionResponse.ID, geminiResult(p), isErr})
		case part.Thought && part.Text != nil:
			if t := strings.TrimSpace(validUTF8(*part.Text)); t != "" {
				out.thoughts = append(out.thoughts, t)
			}
		default:
			plain = append(plain, p)
		}
	}
	if len(plain) > 0 {
		b, _ := json.Marshal(plain)
		out.text = partsText(b)
	}
	return out
}

// geminiResult renders what a tool returned to the model: the text of its
// functionResponse parts ({"response": {"output": …}} or {"error": …}).
func geminiResult(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		parts = []json.RawMessage{raw}
	}
	var out []string
	for _, p := range parts {
		var fr struct {
			FunctionResponse *struct {
				Response map[string]json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		}
		if json.Unmarshal(p, &fr) == nil && fr.FunctionResponse != nil {
			for _, k := range []string{"output", "error", "content"} {
				if v, ok := fr.FunctionResponse.Response[k]; ok {
					if t := partsText(v); t != "" {
						out = append(out, t)
					} else {
						out = append(out, validUTF8(string(v)))
					}
				}
			}
			continue
		}
		if t := partsText(p); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// geminiProject names the project of a chat file: the hook's cwd when
// known, else the folder Gemini CLI recorded in <project>/.project_root
// (0.2x slugs), else the slug itself (older builds name the folder by a
// SHA-256 of the path, which says nothing: then no project).
func geminiProject(path, cwd string) string {
	if cwd != "" {
		return ProjectFromCwd(cwd)
	}
	dir := filepath.Dir(filepath.Dir(path)) // …/tmp/<project>/chats/x.json
	if filepath.Base(filepath.Dir(path)) != "chats" {
		return ""
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".project_root")); err == nil {
		if root := strings.TrimSpace(string(b)); root != "" {
			return ProjectFromCwd(root)
		}
	}
	slug := filepath.Base(dir)
	if len(slug) == 64 && strings.Trim(slug, "0123456789abcdef") == "" {
		return ""
	}
	return slug
}

// GeminiSessionsDir is where Gemini CLI keeps its per-project folders.
func GeminiSessionsDir(home string) string {
	return filepath.Join(home, ".gemini", "tmp")
}
