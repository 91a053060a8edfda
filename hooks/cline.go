package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/lazy"
)

// Cline and Roo Code (its fork) keep each task in a folder
// <VS Code globalStorage>/<extension id>/tasks/<task id>/ whose
// api_conversation_history.json is the Anthropic message list sent to the
// model, rewritten as the task grows: {role, content: string | blocks}
// (Roo and newer Cline add ts, ms since the epoch). The user's own words
// come wrapped: <task> (the first message), <feedback>, <answer> (to the
// agent's question), <user_message> (a resumed task); the rest of a user
// message is tool results and <environment_details> the extension adds.
// Tools are either XML in the assistant's text (<write_to_file><path>…)
// answered by "[write_to_file for 'x'] Result:" text blocks, or native
// tool_use / tool_result blocks.

const (
	AgentCline   = "cline"
	AgentRooCode = "roo-code"
	FormatCline  = "cline"
)

// clineToolNames are the XML tool tags of Cline and Roo Code.
var clineToolNames = []string{
	"execute_command", "read_file", "write_to_file", "replace_in_file", "apply_diff", "insert_content",
	"search_and_replace", "search_files", "list_files", "list_code_definition_names", "browser_action",
	"use_mcp_tool", "access_mcp_resource", "ask_followup_question", "attempt_completion", "new_task",
	"plan_mode_respond", "switch_mode", "codebase_search", "fetch_instructions", "update_todo_list",
	"web_fetch", "load_mcp_documentation", "new_rule", "condense", "report_bug", "summarize_task",
}

var (
	clineToolRe   = lazy.Regexp(`(?s)<(` + strings.Join(clineToolNames, "|") + `)>(.*?)</(?:` + strings.Join(clineToolNames, "|") + `)>`)
	clineParamRe  = lazy.Regexp(`(?s)<([a-z_]+)>\n?(.*?)\n?</([a-z_]+)>`)
	clineThinkRe  = lazy.Regexp(`(?s)<thinking>(.*?)</thinking>`)
	clinePromptRe = lazy.Regexp(`(?s)<(task|feedback|answer|user_message)>\n?(.*?)\n?</(?:task|feedback|answer|user_message)>`)
	clineResultRe = lazy.Regexp(`^\[([a-z_]+)(?: for [^\]]*)?\] Result:`)
	// Cline says "Working", Roo Code "Workspace".
	clineCwdRe = lazy.Regexp(`# Current (?:Working|Workspace) Directory \(([^)\n]+)\) Files`)
)

type clMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	TS      *json.Number    `json:"ts"`
}

type clBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func clBlocks(raw json.RawMessage) ([]clBlock, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []clBlock{{Type: "text", Text: s}}, nil
	}
	var bs []clBlock
	err := json.Unmarshal(raw, &bs)
	return bs, err
}

// ReadCline reads a Cline or Roo Code task's api_conversation_history.json,
// or a Cline SDK session's <id>.messages.json (ReadClineSession).
func ReadCline(path string, opt Options) (Result, error) {
	if strings.HasSuffix(path, clineSessionSuffix) {
		return ReadClineSession(path, opt)
	}
	elems, res, ok, err := openDoc(path, "cline task", nil)
	if !ok {
		return res, err
	}
	task := filepath.Base(filepath.Dir(path))
	agent := AgentCline
	if slash := filepath.ToSlash(path); strings.Contains(slash, "roo-cline") || strings.Contains(slash, "/roo-code/") || strings.Contains(slash, "/"+rooCLIStorage+"/") {
		agent = AgentRooCode
	}
	taskTime := ""
	if ms, err := strconv.ParseInt(task, 10, 64); err == nil && len(task) == 13 {
		taskTime = time.UnixMilli(ms).UTC().Format(time.RFC3339)
	}
	project := ""
	if opt.Cwd != "" {
		project = ProjectFromCwd(opt.Cwd)
	}
	var bs []*builder
	var cur *builder
	var pending []string // XML tool calls still waiting for their result, by id
	callName := map[string]string{}
	for i, e := range elems {
		var m clMessage
		if err := json.Unmarshal(e.raw, &m); err != nil {
			res.Problems = append(res.Problems, badElem(path, e, err))
			continue
		}
		blocks, err := clBlocks(m.Content)
		if err != nil {
			res.Problems = append(res.Problems, badElem(path, e, err))
			continue
		}
		switch m.Role {
		case "user":
			var prompt []string
			var loose []string // unwrapped text: the prompt only if nothing is wrapped
			resultID := ""     // the XML call whose result the following text continues
			for _, b := range blocks {
				switch b.Type {
				case "tool_result":
					if cur != nil && !cur.closed {
						cur.toolResult(b.ToolUseID, clineResultText(b.Content), b.IsError)
					}
					prompt = append(prompt, clinePrompts(clineResultText(b.Content))...)
				case "text":
					t := validUTF8(b.Text)
					if strings.HasPrefix(strings.TrimSpace(t), "<environment_details>") {
						if project == "" {
							if mm := clineCwdRe().FindStringSubmatch(t); mm != nil {
								project = ProjectFromCwd(mm[1])
							}
						}
						continue
					}
					if clineNotice(t) {
						continue
					}
					if mm := clineResultRe().FindStringSubmatch(t); mm != nil {
						resultID = ""
						for k, id := range pending {
							if callName[id] == mm[1] || k == len(pending)-1 {
								resultID = id
								pending = append(pending[:k:k], pending[k+1:]...)
								break
							}
						}
						rest := strings.TrimSpace(t[len(mm[0]):])
						if cur != nil && !cur.closed && resultID != "" && rest != "" {
							cur.toolResult(resultID, rest, false)
						}
						prompt = append(prompt, clinePrompts(rest)...)
						continue
					}
					if ps := clinePrompts(t); len(ps) > 0 {
						prompt = append(prompt, ps...)
						continue
					}
					if resultID != "" {
						if cur != nil && !cur.closed {
							cur.toolResult(resultID, t, strings.HasPrefix(strings.TrimSpace(t), "The user denied this operation"))
						}
						continue
					}
					if i == 0 || len(blocks) == 1 {
						loose = append(loose, t)
					}
				}
			}
			if len(prompt) == 0 {
				prompt = loose
			}
			text := strings.TrimSpace(cutGitMemContext(strings.Join(prompt, "\n\n")))
			if text == "" {
				continue
			}
			if cur != nil {
				cur.closed = true
			}
			pending = nil
			id := strconv.Itoa(i)
			when := taskTime
			if m.TS != nil {
				if ms, err := m.TS.Int64(); err == nil {
					id = m.TS.String()
					when = time.UnixMilli(ms).UTC().Format(time.RFC3339)
				}
			}
			ex := &exchange.Exchange{ID: agent + ":" + task + "/" + id, Session: task, Time: when, Project: project, Agent: agent}
			cur = newBuilder(ex)
			cur.text(exchange.RoleUser, clip(text), nil)
			bs = append(bs, cur)
		case "assistant":
			if cur == nil || cur.closed {
				continue
			}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					t := validUTF8(b.Text)
					for _, th := range clineThinkRe().FindAllStringSubmatch(t, -1) {
						cur.text(exchange.RoleAssistant, clip(strings.TrimSpace(th[1])), map[string]any{"thinking": true})
					}
					t = clineThinkRe().ReplaceAllString(t, "")
					calls := clineToolRe().FindAllStringSubmatchIndex(t, -1)
					prev := 0
					for k, c := range calls {
						cur.text(exchange.RoleAssistant, clip(strings.TrimSpace(t[prev:c[0]])), nil)
						prev = c[1]
						name := t[c[2]:c[3]]
						input := map[string]any{}
						for _, p := range clineParamRe().FindAllStringSubmatch(t[c[4]:c[5]], -1) {
							if p[1] == p[3] {
								input[p[1]] = clip(p[2])
							}
						}
						id := fmt.Sprintf("xml-%d-%d", i, k)
						callName[id] = name
						pending = append(pending, id)
						cur.toolCall(id, name, input)
						if name == "attempt_completion" {
							// The task is done until the user says more.
							cur.closed = true
						}
					}
					cur.text(exchange.RoleAssistant, clip(strings.TrimSpace(t[prev:])), nil)
				case "reasoning", "thinking":
					// Roo Code keeps the model's reasoning as a block of its
					// own before the text: {type: "thinking", thinking,
					// signature} when it has Anthropic's signature, else
					// {type: "reasoning", text, summary} (also for Anthropic
					// through its own handler, which drops the signature);
					// OpenAI's encrypted reasoning has no text.
					t := b.Text
					if b.Type == "thinking" {
						t = b.Thinking
					}
					cur.text(exchange.RoleAssistant, clip(strings.TrimSpace(validUTF8(t))), map[string]any{"thinking": true})
				case "tool_use":
					var input any
					if v, err := decodeAny(b.Input); err == nil {
						input = v
					}
					cur.toolCall(b.ID, validUTF8(b.Name), input)
					if b.Name == "attempt_completion" {
						cur.closed = true
					}
				}
			}
		}
	}
	res.Exchanges = finish(bs, opt)
	return res, nil
}

// clineNoticePrefixes start the text blocks Cline adds to a user message
// on its own, beside <environment_details>: the focus chain's todo-list
// instructions (task/focus-chain: "# task_progress RECOMMENDED", "#
// task_progress" after some requests without one, "# TODO LIST UPDATE
// REQUIRED") and hooks' <hook_context>. They are neither the user's words
// nor part of a tool's result.
var clineNoticePrefixes = []string{"# task_progress", "# TODO LIST UPDATE REQUIRED", "<hook_context"}

func clineNotice(t string) bool {
	t = strings.TrimSpace(t)
	for _, p := range clineNoticePrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// clinePrompts finds the user's own words in a user text block.
func clinePrompts(t string) []string {
	var out []string
	for _, m := range clinePromptRe().FindAllStringSubmatch(t, -1) {
		if s := strings.TrimSpace(m[2]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func clineResultText(raw json.RawMessage) string {
	return partsText(raw)
}

// rooCLIStorage is the folder under the home of Roo Code's CLI
// (apps/cli): it runs the extension under Roo's @roo-code/vscode-shim,
// whose global storage is ~/.vscode-mock/global-storage, so its tasks are
// ~/.vscode-mock/global-storage/tasks/<task id>/ (beside an _index.json
// of the task history).
const rooCLIStorage = ".vscode-mock"

// ClineTaskRoots are the folders holding Cline (or, with roo, Roo Code)
// tasks: VS Code's global storage for each editor build, the remote
// server's, and the Cline CLI's own (or the Roo Code CLI's).
func ClineTaskRoots(home string, roo bool) []string {
	ext := "saoudrizwan.claude-dev"
	if roo {
		ext = "rooveterinaryinc.roo-cline"
	}
	var roots []string
	for _, base := range []string{filepath.Join(home, ".config"), filepath.Join(home, "Library", "Application Support")} {
		for _, editor := range []string{"Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"} {
			roots = append(roots, filepath.Join(base, editor, "User", "globalStorage", ext, "tasks"))
		}
	}
	roots = append(roots, filepath.Join(home, ".vscode-server", "data", "User", "globalStorage", ext, "tasks"))
	if roo {
		roots = append(roots, filepath.Join(home, rooCLIStorage, "global-storage", "tasks"))
	} else {
		roots = append(roots, filepath.Join(home, ".cline", "data", "tasks"))
	}
	return roots
}

func existingRoots(roots []string) []string {
	var out []string
	for _, r := range roots {
		if st, err := os.Stat(r); err == nil && st.IsDir() {
			out = append(out, r)
		}
	}
	return out
}
