package hooks

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/lazy"
)

// Cline's SDK (the Cline CLI 2 and the apps built on cline/cline's sdk/)
// keeps each session in a folder of its own,
// ~/.cline/data/sessions/<session id>/, not in a task folder: the messages
// are <session id>.messages.json, one document {version, updated_at, agent,
// sessionId, messages: [{id, role, content, ts, metadata?}], system_prompt}
// rewritten as the session grows, and <session id>.json is its manifest
// {session_id, status, started_at, ended_at?, cwd, workspace_root, …}
// (sdk/packages/core/src/services/session-artifacts.ts,
// session/models/session-manifest.ts). Content blocks are Anthropic's (text,
// thinking, tool_use, tool_result) plus {type: file, path, content} for a
// file the user attached. Compaction rewrites the list: a kept user message
// gains a <SYSTEM_NOTICE> text block summing up what was cut, or the whole
// start becomes one user message with metadata.kind "compaction_summary";
// message ids survive it. Subagents and teammates write
// <agent id>.messages.json in the same folder: not read (as Gemini's and
// Claude Code's subagents are not).

const clineSessionSuffix = ".messages.json"

var clineWorkdirRe = lazy.Regexp(`(?m)^\s*\d+\. Working Directory: (.+?)\s*$`)

// clineUserInputRe is the wrapper the Cline CLI 3 puts around a typed
// prompt, <user_input mode="act|plan|yolo">…</user_input> (its core's
// /<user_input\b[^>]*\bmode="(act|plan|yolo)"/): the words inside are the
// prompt.
var clineUserInputRe = lazy.Regexp(`(?s)^<user_input\b[^>]*>\n?(.*?)\n?</user_input>$`)

type clsHead struct {
	SessionID    string `json:"sessionId"`
	SystemPrompt string `json:"system_prompt"`
}

type clsManifest struct {
	SessionID     string `json:"session_id"`
	Status        string `json:"status"`
	StartedAt     string `json:"started_at"`
	Cwd           string `json:"cwd"`
	WorkspaceRoot string `json:"workspace_root"`
}

type clsMessage struct {
	ID       string          `json:"id"`
	Role     string          `json:"role"`
	Content  json.RawMessage `json:"content"`
	TS       *json.Number    `json:"ts"`
	Metadata struct {
		Kind string `json:"kind"`
	} `json:"metadata"`
}

type clsBlock struct {
	clBlock
	Thinking string `json:"thinking"`
	Path     string `json:"path"`
}

// isClineSession says whether p is the root session's messages file of a
// Cline SDK session folder.
func isClineSession(p string, d fs.DirEntry) bool {
	return d.Name() == filepath.Base(filepath.Dir(p))+clineSessionSuffix
}

// ClineSessionRoots are the folders holding the Cline SDK's sessions:
// $CLINE_SESSION_DATA_DIR, else $CLINE_DATA_DIR/sessions, else
// $CLINE_DIR/data/sessions, else ~/.cline/data/sessions
// (sdk/packages/shared/src/storage/paths.ts).
func ClineSessionRoots(home string) []string {
	if d := strings.TrimSpace(os.Getenv("CLINE_SESSION_DATA_DIR")); d != "" {
		return []string{d}
	}
	if d := strings.TrimSpace(os.Getenv("CLINE_DATA_DIR")); d != "" {
		return []string{filepath.Join(d, "sessions")}
	}
	if d := strings.TrimSpace(os.Getenv("CLINE_DIR")); d != "" {
		return []string{filepath.Join(d, "data", "sessions")}
	}
	return []string{filepath.Join(home, ".cline", "data", "sessions")}
}

// clineSessionEnded says whether a manifest status means the session will
// write no more (SESSION_STATUS_VALUES in sdk/packages/shared/src/session/
// records.ts: idle, running and pending may still go on).
func clineSessionEnded(status string) bool {
	switch status {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

// ReadClineSession reads a Cline SDK session's <id>.messages.json (and the
// manifest beside it, when there is one).
func ReadClineSession(path string, opt Options) (Result, error) {
	var head clsHead
	elems, res, ok, err := openDoc(path, "cline session", &head, "messages")
	if !ok {
		return res, err
	}
	dir := filepath.Dir(path)
	session := head.SessionID
	if session == "" {
		session = strings.TrimSuffix(filepath.Base(path), clineSessionSuffix)
	}
	var man clsManifest
	manPath := filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), clineSessionSuffix)+".json")
	if data, err := readDoc(manPath); err == nil {
		if err := json.Unmarshal(data, &man); err != nil {
			res.Problems = append(res.Problems, docProblem(manPath, data, err))
			man = clsManifest{}
		}
	}
	project := ""
	switch {
	case opt.Cwd != "":
		project = ProjectFromCwd(opt.Cwd)
	case man.Cwd != "":
		project = ProjectFromCwd(man.Cwd)
	case man.WorkspaceRoot != "":
		project = ProjectFromCwd(man.WorkspaceRoot)
	default:
		if m := clineWorkdirRe().FindStringSubmatch(head.SystemPrompt); m != nil {
			project = ProjectFromCwd(m[1])
		}
	}
	started := ""
	if t, err := time.Parse(time.RFC3339Nano, man.StartedAt); err == nil {
		started = t.UTC().Format(time.RFC3339)
	} else if ms, err := strconv.ParseInt(strings.SplitN(session, "_", 2)[0], 10, 64); err == nil && ms > 1e12 && ms < 1e14 {
		started = time.UnixMilli(ms).UTC().Format(time.RFC3339)
	}
	var bs []*builder
	var cur *builder
	for i, e := range elems {
		var m clsMessage
		if err := json.Unmarshal(e.raw, &m); err != nil {
			res.Problems = append(res.Problems, badElem(path, e, err))
			continue
		}
		var blocks []clsBlock
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			blocks = []clsBlock{{clBlock: clBlock{Type: "text", Text: s}}}
		} else if err := json.Unmarshal(m.Content, &blocks); err != nil {
			res.Problems = append(res.Problems, badElem(path, e, err))
			continue
		}
		switch m.Role {
		case "user":
			if m.Metadata.Kind == "compaction_summary" {
				// The summary of a compacted start: the model's context,
				// not the user's words (the exchanges it sums up were read
				// before the compaction).
				continue
			}
			var prompt, context, attached []string
			results := false
			for _, b := range blocks {
				switch b.Type {
				case "tool_result":
					results = true
					if cur != nil && !cur.closed {
						text, failed := clineOpsText(b.Content)
						cur.toolResult(b.ToolUseID, text, b.IsError || failed)
					}
				case "text":
					t := strings.TrimSpace(validUTF8(b.Text))
					if strings.HasPrefix(t, "<SYSTEM_NOTICE>") {
						context = append(context, t)
						continue
					}
					if m := clineUserInputRe().FindStringSubmatch(t); m != nil {
						t = strings.TrimSpace(m[1])
					}
					prompt = append(prompt, t)
				case "file":
					attached = append(attached, validUTF8(b.Path))
				case "image":
					prompt = append(prompt, "[image]")
				}
			}
			text := strings.TrimSpace(cutGitMemContext(joinNonEmpty(prompt, "\n\n")))
			if results {
				// Words sent beside tool results belong to the turn
				// under way.
				if cur != nil && !cur.closed {
					cur.text(exchange.RoleUser, clip(text), nil)
				}
				continue
			}
			if text == "" {
				continue
			}
			cur = endTurn(cur)
			id, when := strconv.Itoa(i), started
			if m.TS != nil {
				if ms, err := m.TS.Int64(); err == nil {
					id, when = m.TS.String(), time.UnixMilli(ms).UTC().Format(time.RFC3339)
				}
			}
			if m.ID != "" {
				id = m.ID
			}
			ex := &exchange.Exchange{ID: AgentCline + ":" + session + "/" + id, Session: session, Time: when, Project: project, Agent: AgentCline}
			cur = promptBuilder(ex, text)
			bs = append(bs, cur)
			if len(attached) > 0 {
				cur.text(exchange.RoleSystem, "Attached: "+strings.Join(attached, ", "), nil)
			}
			if len(context) > 0 {
				cur.text(exchange.RoleSystem, clip(strings.Join(context, "\n\n")), nil)
			}
		case "assistant":
			if cur == nil || cur.closed {
				continue
			}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					cur.text(exchange.RoleAssistant, clip(strings.TrimSpace(validUTF8(b.Text))), nil)
				case "thinking":
					cur.text(exchange.RoleAssistant, clip(strings.TrimSpace(validUTF8(b.Thinking))), map[string]any{"thinking": true})
				case "tool_use":
					var input any
					if v, err := decodeAny(b.Input); err == nil {
						input = v
					}
					cur.toolCall(b.ID, validUTF8(b.Name), input)
					if b.Name == "submit_and_exit" {
						cur.closed = true
					}
				}
			}
		}
	}
	if clineSessionEnded(man.Status) {
		opt.SessionEnded = true
	}
	res.Exchanges = finish(bs, opt)
	return res, nil
}

// clsOp is one operation of an SDK tool's result (ToolOperationResult in
// sdk/packages/core/src/extensions/tools/types.ts): the tools answer a list
// of them, stored as the list itself or as its JSON text.
type clsOp struct {
	Query   *string         `json:"query"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Success *bool           `json:"success"`
}

// clineOpsText renders a tool result: each operation's query and result (or
// error). failed is set when every operation failed. Content that is not a
// list of operations is read as text parts.
func clineOpsText(raw json.RawMessage) (text string, failed bool) {
	inner := raw
	var s string
	if json.Unmarshal(raw, &s) == nil {
		inner = json.RawMessage(s)
	}
	var ops []clsOp
	if json.Unmarshal(inner, &ops) != nil {
		var one clsOp
		if json.Unmarshal(inner, &one) != nil || one.Query == nil {
			return partsText(raw), false
		}
		ops = []clsOp{one}
	}
	var out []string
	nfail := 0
	for _, op := range ops {
		if op.Query == nil {
			return partsText(raw), false
		}
		body := ""
		if json.Unmarshal(op.Result, &body) != nil && len(op.Result) > 0 && string(op.Result) != "null" {
			body = string(op.Result)
		}
		if op.Error != "" || op.Success != nil && !*op.Success {
			nfail++
			body = joinNonEmpty([]string{body, "Error: " + op.Error}, "\n")
		}
		out = append(out, joinNonEmpty([]string{validUTF8(*op.Query), validUTF8(body)}, "\n"))
	}
	return strings.Join(out, "\n\n"), len(ops) > 0 && nfail == len(ops)
}
