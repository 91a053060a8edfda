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
)

// Continue keeps each chat as ~/.continue/sessions/<sessionId>.json:
// {sessionId, title, workspaceDirectory (a path or file:// URI), history:
// [{message: {role, content, toolCalls?, toolCallId?}, contextItems,
// toolCallStates?}]}, rewritten as the chat grows, plus an index
// sessions.json ([{sessionId, dateCreated (ms), …}]). Roles: user (a
// prompt; the files and snippets attached to it are contextItems),
// assistant (text, toolCalls [{id, function: {name, arguments}}]),
// thinking (reasoning), tool (a result, by toolCallId), system.

const (
	AgentContinue  = "continue"
	FormatContinue = "continue"
)

type ctSession struct {
	SessionID          string            `json:"sessionId"`
	WorkspaceDirectory string            `json:"workspaceDirectory"`
	History            []json.RawMessage `json:"history"`
}

type ctItem struct {
	Message struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"toolCallId"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"toolCalls"`
	} `json:"message"`
	ContextItems []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"contextItems"`
	ToolCallStates []struct {
		ToolCallID string `json:"toolCallId"`
		Status     string `json:"status"`
		Output     []struct {
			Content string `json:"content"`
		} `json:"output"`
	} `json:"toolCallStates"`
}

// ReadContinue reads a Continue session file.
func ReadContinue(path string, opt Options) (Result, error) {
	var head struct {
		SessionID          string `json:"sessionId"`
		WorkspaceDirectory string `json:"workspaceDirectory"`
	}
	elems, res, ok, err := openDoc(path, "continue session", &head, "history")
	if !ok {
		return res, err
	}
	session := sessionOr(head.SessionID, path)
	cwd := opt.Cwd
	if cwd == "" {
		cwd = fileURLPath(head.WorkspaceDirectory)
	}
	project := ""
	if cwd != "" {
		project = ProjectFromCwd(cwd)
	}
	when := continueCreated(filepath.Dir(path), session)
	var bs []*builder
	var cur *builder
	for i, e := range elems {
		var it ctItem
		if err := json.Unmarshal(e.raw, &it); err != nil {
			res.Problems = append(res.Problems, badElem(path, e, err))
			continue
		}
		m := it.Message
		switch m.Role {
		case "user":
			prompt := strings.TrimSpace(cutGitMemContext(partsText(m.Content)))
			cur = endTurn(cur)
			if prompt == "" {
				continue
			}
			ex := &exchange.Exchange{ID: session + "/" + strconv.Itoa(i), Session: session, Time: when, Project: project, Agent: AgentContinue}
			cur = promptBuilder(ex, prompt)
			var attached []string
			for _, c := range it.ContextItems {
				if c.Description != "" {
					attached = append(attached, validUTF8(c.Description))
				} else if c.Name != "" {
					attached = append(attached, validUTF8(c.Name))
				}
			}
			if len(attached) > 0 {
				cur.text(exchange.RoleSystem, clip("context: "+strings.Join(attached, ", ")), nil)
			}
			bs = append(bs, cur)
		case "assistant":
			if cur == nil {
				continue
			}
			cur.text(exchange.RoleAssistant, clip(partsText(m.Content)), nil)
			for _, tc := range m.ToolCalls {
				var input any = clip(tc.Function.Arguments)
				if v, err := decodeAny([]byte(tc.Function.Arguments)); err == nil {
					input = v
				}
				cur.toolCall(tc.ID, validUTF8(tc.Function.Name), input)
			}
			// Older builds keep results only in the item's tool call states.
			for _, st := range it.ToolCallStates {
				var out []string
				for _, o := range st.Output {
					out = append(out, validUTF8(o.Content))
				}
				if len(out) > 0 || st.Status == "errored" || st.Status == "canceled" {
					cur.toolResult(st.ToolCallID, strings.Join(out, "\n"), st.Status == "errored" || st.Status == "canceled")
				}
			}
		case "thinking":
			if cur != nil {
				cur.text(exchange.RoleAssistant, clip(partsText(m.Content)), map[string]any{"thinking": true})
			}
		case "tool":
			if cur != nil {
				if _, seen := cur.tools[m.ToolCallID]; seen && cur.ex.Turns[cur.tools[m.ToolCallID]].Text != "" {
					continue // already given by the call's state
				}
				cur.toolResult(m.ToolCallID, partsText(m.Content), false)
			}
		}
	}
	res.Exchanges = finish(bs, opt)
	return res, nil
}

// continueCreated is the session's dateCreated from the sessions.json
// index beside it, as RFC 3339 ("" when unknown).
func continueCreated(dir, session string) string {
	b, err := os.ReadFile(filepath.Join(dir, "sessions.json"))
	if err != nil {
		return ""
	}
	var index []struct {
		SessionID   string `json:"sessionId"`
		DateCreated any    `json:"dateCreated"`
	}
	if json.Unmarshal(b, &index) != nil {
		return ""
	}
	for _, s := range index {
		if s.SessionID != session {
			continue
		}
		switch v := s.DateCreated.(type) {
		case string:
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
				return time.UnixMilli(ms).UTC().Format(time.RFC3339)
			}
			if t, err := exchange.ParseTime(v); err == nil {
				return t.UTC().Format(time.RFC3339)
			}
		case float64:
			return time.UnixMilli(int64(v)).UTC().Format(time.RFC3339)
		}
	}
	return ""
}

// ContinueSessionsDir is $CONTINUE_GLOBAL_DIR/sessions, else
// ~/.continue/sessions.
func ContinueSessionsDir(home string) string {
	if d := os.Getenv("CONTINUE_GLOBAL_DIR"); d != "" {
		return filepath.Join(d, "sessions")
	}
	return filepath.Join(home, ".continue", "sessions")
}

func isContinueSession(p string, d fs.DirEntry) bool {
	n := d.Name()
	return strings.HasSuffix(n, ".json") && n != "sessions.json" && filepath.Base(filepath.Dir(p)) == "sessions"
}
