package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitmem/git-mem/exchange"
)

// Qwen Code, the fork of Gemini CLI, does not keep Gemini's chat files: it
// records each session as JSON Lines at <runtime dir>/projects/<cwd with
// every character but [A-Za-z0-9] turned into "-">/chats/<session id>.jsonl
// (the runtime dir is $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen;
// archived sessions move to chats/archive/). A resumed session appends to
// the same file.
//
// Each line is a record in a tree, as Claude Code's: uuid, parentUuid (the
// record before it on the thread; null for the first), sessionId,
// timestamp, cwd, version, type and, for the conversation, message: the
// model API's Content in Gemini's shape ({"role": "user"|"model", "parts":
// [...]}). Types:
//   - user: a prompt (no subtype; provenance "real_user"), its text in
//     parts; systemPayload.displayText, when present, is what was typed
//     and hookContext what hooks added. Subtype cron is a scheduled
//     prompt (an exchange of its own); mid_turn_user_message (typed while
//     the agent worked), notification and goal_runtime join the turn
//     they arrive in.
//   - assistant: the model's reply: parts of text, thoughts ({"text": …,
//     "thought": true}) and functionCall {id, name, args}.
//   - tool_result: parts of functionResponse {id, name, response: {output}
//     or {error}}, and toolCallResult.status (success, error, cancelled).
//   - system: the agent's own records by subtype (ui_telemetry,
//     attribution_snapshot, chat_compression, slash_command, rewind, …).
//
// The live thread is what Qwen Code itself resumes: from the last record
// (bar artifact and sources snapshots) back through parentUuid. A rewind
// re-roots the chain at the turn it went back to, so the rewound records
// fall off the thread; records sharing a uuid are fragments of one message,
// their parts joined.

// AgentQwenCode is Exchange.Agent (and the format) for Qwen Code.
const (
	AgentQwenCode  = "qwen-code"
	FormatQwenCode = "qwen-code"
)

type qwPart struct {
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string                     `json:"id"`
		Name     string                     `json:"name"`
		Response map[string]json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	InlineData json.RawMessage `json:"inlineData"`
	FileData   json.RawMessage `json:"fileData"`
}

type qwRecord struct {
	UUID        string `json:"uuid"`
	ParentUUID  string `json:"parentUuid"`
	SessionID   string `json:"sessionId"`
	Timestamp   string `json:"timestamp"`
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	Cwd         string `json:"cwd"`
	IsSidechain bool   `json:"isSidechain"`
	Message     *struct {
		Role  string   `json:"role"`
		Parts []qwPart `json:"parts"`
	} `json:"message"`
	ToolCallResult *struct {
		CallID string `json:"callId"`
		Status string `json:"status"`
	} `json:"toolCallResult"`
	SystemPayload json.RawMessage `json:"systemPayload"`
	line          int
}

// qwOffThread are the subtypes Qwen Code never takes for the thread's
// leaf: artifacts and snapshots written beside the conversation.
var qwOffThread = map[string]bool{
	"session_artifact_event": true, "session_artifact_snapshot": true, "session_sources_snapshot": true,
	"managed_session_header_v1": true, "managed_session_event_v1": true, "managed_session_commit_v1": true,
}

// ReadQwenCode reads a Qwen Code session file.
func ReadQwenCode(path string, opt Options) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("read qwen-code session %s: %w", path, err)
	}
	defer f.Close()
	var res Result
	byID := map[string]*qwRecord{}
	var leaf string
	err = readLines(f, path, &res.Problems, func(l line) {
		rec := &qwRecord{line: l.n}
		if err := json.Unmarshal(l.data, rec); err != nil {
			res.Problems = append(res.Problems, badLine(path, l, err))
			return
		}
		if rec.UUID == "" {
			res.Problems = append(res.Problems, Problem{path, l.n, "record without a uuid; skipped"})
			return
		}
		if rec.Type != "user" {
			rec.SystemPayload = nil // only a prompt's is read; others hold snapshots
		}
		if first, ok := byID[rec.UUID]; ok {
			// A fragment of a message already seen: its parts follow.
			if rec.Message != nil {
				if first.Message == nil {
					first.Message = rec.Message
				} else {
					first.Message.Parts = append(first.Message.Parts, rec.Message.Parts...)
				}
			}
			if first.ToolCallResult == nil {
				first.ToolCallResult = rec.ToolCallResult
			}
		} else {
			byID[rec.UUID] = rec
		}
		if !(rec.Type == "system" && qwOffThread[rec.Subtype]) {
			leaf = rec.UUID
		}
	})
	if err != nil {
		return res, fmt.Errorf("read qwen-code session %s: %w", path, err)
	}
	// The thread: from the leaf back to the root.
	var thread []*qwRecord
	seen := map[string]bool{}
	for id := leaf; id != "" && !seen[id]; {
		seen[id] = true
		rec := byID[id]
		if rec == nil {
			res.Problems = append(res.Problems, Problem{path, thread[len(thread)-1].line, fmt.Sprintf("parent record %s is missing: the session before it is not read", id)})
			break
		}
		thread = append(thread, rec)
		id = rec.ParentUUID
	}
	for i, j := 0, len(thread)-1; i < j; i, j = i+1, j-1 {
		thread[i], thread[j] = thread[j], thread[i]
	}

	session, cwd := "", ""
	for _, rec := range thread {
		if session == "" {
			session = rec.SessionID
		}
		if cwd == "" {
			cwd = rec.Cwd
		}
	}
	session = sessionOr(session, path)
	project := ""
	switch {
	case opt.Cwd != "":
		project = ProjectFromCwd(opt.Cwd)
	case cwd != "":
		project = ProjectFromCwd(cwd)
	}
	var bs []*builder
	var cur *builder
	for _, rec := range thread {
		if rec.IsSidechain {
			continue
		}
		var parts []qwPart
		if rec.Message != nil {
			parts = rec.Message.Parts
		}
		switch rec.Type {
		case "user":
			if rec.Subtype != "" && rec.Subtype != "cron" {
				// Not a prompt: notifications, goal prompts, messages
				// typed while the agent worked (part of its turn).
				if cur != nil {
					role := exchange.RoleSystem
					if rec.Subtype == "mid_turn_user_message" {
						role = exchange.RoleUser
					}
					cur.text(role, clip(cutGitMemContext(qwText(parts, false))), nil)
				}
				continue
			}
			var payload struct {
				DisplayText string `json:"displayText"`
				HookContext string `json:"hookContext"`
			}
			_ = json.Unmarshal(rec.SystemPayload, &payload)
			text := qwText(parts, false)
			if strings.TrimSpace(payload.DisplayText) != "" {
				text = validUTF8(payload.DisplayText)
			}
			prompt := strings.TrimSpace(cutGitMemContext(text))
			cur = endTurn(cur)
			if prompt == "" {
				continue
			}
			ex := &exchange.Exchange{ID: session + "/" + rec.UUID, Session: session, Project: project, Agent: AgentQwenCode}
			if _, err := exchange.ParseTime(rec.Timestamp); err == nil {
				ex.Time = rec.Timestamp
			}
			cur = promptBuilder(ex, prompt)
			cur.text(exchange.RoleSystem, clip(cutGitMemContext(validUTF8(payload.HookContext))), nil)
			bs = append(bs, cur)
		case "assistant":
			if cur == nil {
				continue
			}
			for _, p := range parts {
				switch {
				case p.FunctionCall != nil:
					var input any
					if v, err := decodeAny(p.FunctionCall.Args); err == nil {
						input = v
					}
					cur.toolCall(p.FunctionCall.ID, validUTF8(p.FunctionCall.Name), input)
				case p.Text != nil && p.Thought:
					cur.text(exchange.RoleAssistant, clip(strings.TrimSpace(validUTF8(*p.Text))), map[string]any{"thinking": true})
				case p.Text != nil:
					cur.text(exchange.RoleAssistant, clip(validUTF8(*p.Text)), nil)
				}
			}
		case "tool_result":
			if cur == nil {
				continue
			}
			failed := rec.ToolCallResult != nil && (rec.ToolCallResult.Status == "error" || rec.ToolCallResult.Status == "cancelled")
			for _, p := range parts {
				fr := p.FunctionResponse
				if fr == nil {
					continue
				}
				var out []string
				_, isErr := fr.Response["error"]
				for _, k := range []string{"output", "error", "content"} {
					if v, ok := fr.Response[k]; ok {
						if t := partsText(v); t != "" {
							out = append(out, t)
						} else if s := string(v); s != "null" && s != `""` {
							out = append(out, validUTF8(s))
						}
					}
				}
				cur.toolResult(fr.ID, strings.Join(out, "\n"), failed || isErr)
			}
		}
	}
	res.Exchanges = finish(bs, opt)
	res.Cwd = cwd
	return res, nil
}

// qwText joins the text parts of a message (thoughts only when thoughts is
// set); images and files become a marker.
func qwText(parts []qwPart, thoughts bool) string {
	var out []string
	for _, p := range parts {
		switch {
		case p.Text != nil && p.Thought == thoughts:
			out = append(out, validUTF8(*p.Text))
		case p.InlineData != nil || p.FileData != nil:
			out = append(out, "[file]")
		}
	}
	return joinNonEmpty(out, "\n")
}

// QwenRuntimeDirs are where Qwen Code keeps its projects/ folder:
// $QWEN_RUNTIME_DIR, $QWEN_HOME and ~/.qwen, the ones set, each once.
func QwenRuntimeDirs(home string) []string {
	var out []string
	for _, d := range []string{os.Getenv("QWEN_RUNTIME_DIR"), os.Getenv("QWEN_HOME"), filepath.Join(home, ".qwen")} {
		if d == "" {
			continue
		}
		d = qwenHome(home, d)
		dup := false
		for _, o := range out {
			dup = dup || o == d
		}
		if !dup {
			out = append(out, d)
		}
	}
	return out
}

// QwenProjectsDirs are the folders holding Qwen Code's per-project chats.
func QwenProjectsDirs(home string) []string {
	var out []string
	for _, d := range QwenRuntimeDirs(home) {
		out = append(out, filepath.Join(d, "projects"))
	}
	return out
}

// isQwenSession keeps <project>/chats/<uuid>.jsonl and chats/archive/…,
// not the sidecars beside them (<id>.ledger.jsonl, <id>.worktree.json).
func isQwenSession(p string, d fs.DirEntry) bool {
	n := d.Name()
	stem, ok := strings.CutSuffix(n, ".jsonl")
	if !ok || len(stem) < 32 || len(stem) > 36 || strings.Trim(stem, "0123456789abcdefABCDEF-") != "" {
		return false
	}
	dir := filepath.Base(filepath.Dir(p))
	return dir == "chats" || dir == "archive" && filepath.Base(filepath.Dir(filepath.Dir(p))) == "chats"
}

// isQwenHead: a Qwen Code record is a Claude Code-like tree record whose
// message is Gemini Content (parts, role model) and which names the
// agent's version.
func isQwenHead(head []byte) bool {
	first, _, _ := bytes.Cut(head, []byte("\n"))
	return bytes.Contains(first, []byte(`"parentUuid"`)) && bytes.Contains(first, []byte(`"sessionId"`)) &&
		bytes.Contains(first, []byte(`"version"`)) &&
		(bytes.Contains(first, []byte(`"message":{"role":"user","parts":`)) || bytes.Contains(first, []byte(`"message":{"role":"model","parts":`)) ||
			bytes.Contains(first, []byte(`"type":"system"`)) && bytes.Contains(first, []byte(`"systemPayload"`)))
}
