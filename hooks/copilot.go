package hooks

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gitmem/git-mem/exchange"
)

// GitHub Copilot Chat in VS Code saves each chat as
// <Code>/User/workspaceStorage/<workspace>/chatSessions/<sessionId>.json
// (chats outside a folder: globalStorage/emptyWindowChatSessions/), the
// serialised chat model of microsoft/vscode
// src/vs/workbench/contrib/chat/common/chatModel.ts: {version, sessionId,
// creationDate, requests: [{requestId, message: {text, parts}, response:
// [parts], result, isCanceled, timestamp, modelId}]}. Response parts: a
// markdown string ({value} or {kind: "markdownContent", content: {value}}),
// {kind: "thinking", value}, {kind: "toolInvocationSerialized", toolId,
// toolCallId, invocationMessage, pastTenseMessage, resultDetails}, {kind:
// "textEditGroup", uri, edits} (an edit of a file), and UI parts
// (inlineReference, codeblockUri, undoStop, …) that are left out. The
// workspace's folder is in workspace.json beside chatSessions/.

const (
	AgentCopilot  = "copilot"
	FormatCopilot = "copilot"
)

type cpRequest struct {
	RequestID string `json:"requestId"`
	Message   struct {
		Text string `json:"text"`
	} `json:"message"`
	Response   []json.RawMessage `json:"response"`
	Result     json.RawMessage   `json:"result"`
	IsCanceled bool              `json:"isCanceled"`
	Timestamp  int64             `json:"timestamp"`
	ModelState json.RawMessage   `json:"modelState"`
}

type cpPart struct {
	Kind    string          `json:"kind"`
	Value   json.RawMessage `json:"value"`
	Content *struct {
		Value string `json:"value"`
	} `json:"content"`
	ToolID            string          `json:"toolId"`
	ToolCallID        string          `json:"toolCallId"`
	InvocationMessage json.RawMessage `json:"invocationMessage"`
	PastTenseMessage  json.RawMessage `json:"pastTenseMessage"`
	ResultDetails     json.RawMessage `json:"resultDetails"`
	IsConfirmed       json.RawMessage `json:"isConfirmed"`
	ToolSpecificData  *struct {
		Kind        string `json:"kind"`
		RawInput    any    `json:"rawInput"`
		Command     string `json:"command"`
		CommandLine *struct {
			Original string `json:"original"`
		} `json:"commandLine"`
	} `json:"toolSpecificData"`
	URI             json.RawMessage `json:"uri"`
	InlineReference json.RawMessage `json:"inlineReference"`
	Name            json.RawMessage `json:"name"`
}

// cpHead is the top of a serialised chat.
type cpHead struct {
	SessionID    string `json:"sessionId"`
	CreationDate int64  `json:"creationDate"`
}

// ReadCopilot reads a VS Code Copilot Chat session file: the serialised
// chat (<id>.json) or the mutation log newer builds write (<id>.jsonl,
// see ReadCopilotLog).
func ReadCopilot(path string, opt Options) (Result, error) {
	if strings.HasSuffix(path, ".jsonl") {
		return ReadCopilotLog(path, opt)
	}
	var head cpHead
	elems, res, ok, err := openDoc(path, "copilot chat", &head, "requests")
	if !ok {
		return res, err
	}
	res.Exchanges = copilotExchanges(path, head, elems, opt, &res)
	return res, nil
}

// copilotExchanges turns the requests of a chat into exchanges.
func copilotExchanges(path string, head cpHead, elems []docElem, opt Options, res *Result) []*exchange.Exchange {
	session := sessionOr(head.SessionID, path)
	cwd := opt.Cwd
	if cwd == "" {
		cwd = vscodeWorkspaceFolder(filepath.Dir(filepath.Dir(path)))
	}
	project := ""
	if cwd != "" {
		project = ProjectFromCwd(cwd)
	}
	var bs []*builder
	seen := map[string]bool{}
	for _, e := range elems {
		var r cpRequest
		if err := json.Unmarshal(e.raw, &r); err != nil {
			res.Problems = append(res.Problems, badElem(path, e, err))
			continue
		}
		prompt := strings.TrimSpace(cutGitMemContext(validUTF8(r.Message.Text)))
		if prompt == "" || r.RequestID == "" {
			continue
		}
		if seen[r.RequestID] {
			// Ids must be unique: a copy of a request is not a second one.
			res.Problems = append(res.Problems, Problem{path, e.line, fmt.Sprintf("a second request %q; skipped", r.RequestID)})
			continue
		}
		seen[r.RequestID] = true
		when := ""
		if r.Timestamp > 0 {
			when = time.UnixMilli(r.Timestamp).UTC().Format(time.RFC3339)
		} else if head.CreationDate > 0 {
			when = time.UnixMilli(head.CreationDate).UTC().Format(time.RFC3339)
		}
		ex := &exchange.Exchange{ID: session + "/" + r.RequestID, Session: session, Time: when, Project: project, Agent: AgentCopilot}
		b := newBuilder(ex)
		b.command = strings.HasPrefix(prompt, "/")
		b.text(exchange.RoleUser, clip(prompt), nil)
		var md []string
		flush := func() {
			b.text(exchange.RoleAssistant, clip(strings.TrimSpace(strings.Join(md, ""))), nil)
			md = md[:0]
		}
		for k, raw := range r.Response {
			var p cpPart
			if json.Unmarshal(raw, &p) != nil {
				continue
			}
			switch p.Kind {
			case "", "markdownContent", "markdownVuln":
				if p.Content != nil {
					md = append(md, validUTF8(p.Content.Value))
				} else if s := cpText(p.Value); s != "" {
					md = append(md, s)
				}
			case "inlineReference":
				// A file the reply names inline ("added it to `jokes.csv`"):
				// the name VS Code shows, so the sentence still reads.
				if n := cpRefName(p); n != "" {
					md = append(md, "`"+n+"`")
				}
			case "thinking":
				flush()
				b.text(exchange.RoleAssistant, clip(cpText(p.Value)), map[string]any{"thinking": true})
			case "toolInvocationSerialized":
				flush()
				id := p.ToolCallID
				if id == "" {
					id = fmt.Sprintf("%s-%d", r.RequestID, k)
				}
				input := map[string]any{}
				if s := cpText(p.InvocationMessage); s != "" {
					input["message"] = clip(s)
				}
				var details struct {
					Input  any `json:"input"`
					Output any `json:"output"`
				}
				if json.Unmarshal(p.ResultDetails, &details) == nil && details.Input != nil {
					input["input"] = sanitize(details.Input)
				}
				if d := p.ToolSpecificData; d != nil {
					switch {
					case d.Kind == "input" && d.RawInput != nil && input["input"] == nil:
						input["input"] = sanitize(d.RawInput)
					case d.Kind == "terminal" && d.CommandLine != nil && d.CommandLine.Original != "":
						input["command"] = clip(validUTF8(d.CommandLine.Original))
					case d.Kind == "terminal" && d.Command != "":
						input["command"] = clip(validUTF8(d.Command))
					}
				}
				b.toolCall(id, validUTF8(p.ToolID), input)
				out := cpText(p.PastTenseMessage)
				if details.Output != nil {
					if o, err := json.Marshal(details.Output); err == nil {
						out = strings.TrimSpace(out + "\n" + string(o))
					}
				}
				b.toolResult(id, out, cpDenied(p.IsConfirmed))
			case "textEditGroup":
				flush()
				if file := vscodeURIPath(p.URI); file != "" {
					// An edit the chat applied: recorded under the name
					// FilesTouched knows.
					b.toolCall("", "Write", map[string]any{"file_path": file, "tool": "textEditGroup"})
				}
			}
		}
		flush()
		// A request with its result written, cancelled, or (the log's
		// modelState) complete, cancelled or failed is finished.
		b.closed = r.IsCanceled || len(r.Result) > 0 && string(r.Result) != "null" || cpModelStateDone(r.ModelState)
		bs = append(bs, b)
	}
	return finish(bs, opt)
}

// cpRefName is the name an inlineReference part shows: its name, else the
// base name of its URI or of its location's URI.
func cpRefName(p cpPart) string {
	var name string
	if json.Unmarshal(p.Name, &name) == nil && name != "" {
		return validUTF8(name)
	}
	var loc struct {
		URI json.RawMessage `json:"uri"`
	}
	file := ""
	if json.Unmarshal(p.InlineReference, &loc) == nil && len(loc.URI) > 0 {
		file = vscodeURIPath(loc.URI)
	} else {
		file = vscodeURIPath(p.InlineReference)
	}
	if file == "" {
		return ""
	}
	return validUTF8(filepath.Base(file))
}

// cpDenied says whether a tool call's isConfirmed says it did not run:
// false (older builds), or a ConfirmedReason {type} of ToolConfirmKind
// Denied (0) or Skipped (5) (microsoft/vscode chatService.ts).
func cpDenied(raw json.RawMessage) bool {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return !b
	}
	var r struct {
		Type *json.Number `json:"type"`
	}
	if json.Unmarshal(raw, &r) == nil && r.Type != nil {
		return *r.Type == "0" || *r.Type == "5"
	}
	return false
}

// cpModelStateDone says whether a request's modelState {value} is
// ResponseModelState Complete (1), Cancelled (2) or Failed (3) of
// microsoft/vscode chatService.ts; Pending (0) and NeedsInput (4) are not.
func cpModelStateDone(raw json.RawMessage) bool {
	var st struct {
		Value json.Number `json:"value"`
	}
	if json.Unmarshal(raw, &st) != nil {
		return false
	}
	switch st.Value {
	case "1", "2", "3":
		return true
	}
	return false
}

// cpText is a string or a {value} markdown string.
func cpText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return validUTF8(s)
	}
	var m struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(raw, &m) == nil {
		return validUTF8(m.Value)
	}
	return ""
}

// vscodeURIPath is the file path of a serialised VS Code URI ({scheme,
// path, fsPath} or a string).
func vscodeURIPath(raw json.RawMessage) string {
	var u struct {
		FsPath string `json:"fsPath"`
		Path   string `json:"path"`
	}
	if json.Unmarshal(raw, &u) == nil {
		if u.FsPath != "" {
			return u.FsPath
		}
		return u.Path
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return fileURLPath(s)
	}
	return ""
}

// vscodeWorkspaceFolder reads <dir>/workspace.json's folder as a path.
func vscodeWorkspaceFolder(dir string) string {
	return fileURLPath(fileField(filepath.Join(dir, "workspace.json"), "folder"))
}

// fileField is one top-level string of a small JSON or YAML file beside a
// session (VS Code's workspace.json, Copilot CLI's workspace.yaml; YAML
// reads JSON too), "" when it is missing or unreadable.
func fileField(path, key string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var m map[string]any
	if yaml.Unmarshal(b, &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

// CopilotChatRoots are VS Code's workspace and global storage folders.
func CopilotChatRoots(home string) []string {
	var roots []string
	for _, base := range []string{filepath.Join(home, ".config"), filepath.Join(home, "Library", "Application Support")} {
		for _, editor := range []string{"Code", "Code - Insiders"} {
			roots = append(roots, filepath.Join(base, editor, "User", "workspaceStorage"),
				filepath.Join(base, editor, "User", "globalStorage", "emptyWindowChatSessions"))
		}
	}
	return roots
}

func isCopilotChat(p string, d fs.DirEntry) bool {
	parent := filepath.Base(filepath.Dir(p))
	n := d.Name()
	return (strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl")) && (parent == "chatSessions" || parent == "emptyWindowChatSessions")
}
