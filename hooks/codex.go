package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/lazy"
)

type cxRecord struct {
	Timestamp string    `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   cxPayload `json:"payload"`
}

type cxPayload struct {
	Type string `json:"type"`
	// session_meta
	ID  string `json:"id"`
	Cwd string `json:"cwd"`
	Git *struct {
		RepositoryURL string `json:"repository_url"`
	} `json:"git"`
	// response_item
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	// event_msg
	Message json.RawMessage `json:"message"`
	Images  json.RawMessage `json:"images"`
}

type cxText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

var rolloutIDRe = lazy.Regexp(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)

// ReadCodex reads a Codex rollout (~/.codex/sessions/YYYY/MM/DD/rollout-
// <time>-<thread-id>.jsonl). Codex records each prompt twice and injects
// context as user messages, so only event_msg user_message events start
// exchanges; the model's items (messages, reasoning summaries, tool calls
// and outputs) up to the next one make its reply.
func ReadCodex(path string, opt Options) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("read codex rollout %s: %w", path, err)
	}
	defer f.Close()
	thread := ""
	if m := rolloutIDRe().FindStringSubmatch(filepath.Base(path)); m != nil {
		thread = m[1]
	}
	res, err := readCodex(f, path, thread, opt)
	if err != nil {
		return res, fmt.Errorf("read codex rollout %s: %w", path, err)
	}
	return res, nil
}

func readCodex(r io.Reader, name, thread string, opt Options) (Result, error) {
	var res Result
	var bs []*builder
	var cur *builder
	n := 0
	cwd, remote := "", ""
	project := ""
	projectDone := false
	err := readLines(r, name, &res.Problems, func(l line) {
		var rec cxRecord
		if err := json.Unmarshal(l.data, &rec); err != nil {
			res.Problems = append(res.Problems, badLine(name, l, err))
			return
		}
		p := &rec.Payload
		switch rec.Type {
		case "session_meta":
			if thread == "" {
				thread = p.ID
			}
			if cwd == "" {
				cwd = p.Cwd
			}
			if p.Git != nil && remote == "" {
				remote = p.Git.RepositoryURL
			}
		case "turn_context":
			if cwd == "" {
				cwd = p.Cwd
			}
		case "event_msg":
			switch p.Type {
			case "user_message":
				n++
				if !projectDone {
					project = projectFor(cwd, remote)
					projectDone = true
				}
				var msg string
				_ = json.Unmarshal(p.Message, &msg)
				prompt, side := splitIDEContext(cutGitMemContext(validUTF8(msg)))
				if hasImages(p.Images) {
					if prompt != "" {
						prompt += "\n"
					}
					prompt += "[image]"
				}
				if strings.TrimSpace(prompt) == "" {
					// Only git mem's own context, or nothing: not a prompt,
					// but it still ends the previous turn.
					if cur != nil {
						cur.closed = true
					}
					cur = nil
					return
				}
				ex := &exchange.Exchange{
					ID:      thread + "/" + strconv.Itoa(n),
					Session: thread,
					Project: project,
					Agent:   AgentCodex,
				}
				if _, err := exchange.ParseTime(rec.Timestamp); err == nil {
					ex.Time = rec.Timestamp
				}
				cur = newBuilder(ex)
				cur.text(exchange.RoleUser, clip(prompt), nil)
				cur.text(exchange.RoleSystem, clip(side), nil)
				bs = append(bs, cur)
			case "task_complete":
				if cur != nil {
					cur.closed = true
				}
			}
		case "response_item":
			if cur != nil && !cur.closed {
				addCodexItem(cur, p)
			}
		case "compacted":
			if cur != nil && !cur.closed {
				cur.text(exchange.RoleSystem, "[conversation compacted]", nil)
			}
		default:
			res.Problems = append(res.Problems, Problem{name, l.n, fmt.Sprintf("unknown record type %q; skipped", rec.Type)})
		}
	})
	if err != nil {
		return res, err
	}
	res.Exchanges = finish(bs, opt)
	res.Cwd = cwd
	return res, nil
}

func hasImages(raw json.RawMessage) bool {
	var imgs []any
	return json.Unmarshal(raw, &imgs) == nil && len(imgs) > 0
}

// splitIDEContext separates the VS Code extension's "# Context from my IDE
// setup: … ## My request for Codex:" wrapper from what the user typed.
func splitIDEContext(msg string) (prompt, side string) {
	const marker = "## My request for Codex:"
	if !strings.HasPrefix(strings.TrimSpace(msg), "# Context from my IDE setup:") {
		return strings.TrimSpace(msg), ""
	}
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return strings.TrimSpace(msg), ""
	}
	return strings.TrimSpace(msg[i+len(marker):]), strings.TrimSpace(msg[:i])
}

func addCodexItem(b *builder, p *cxPayload) {
	switch p.Type {
	case "message":
		if p.Role != "assistant" {
			return // user-role items repeat the prompt or inject context
		}
		var parts []cxText
		_ = json.Unmarshal(p.Content, &parts)
		for _, c := range parts {
			if c.Type == "output_text" || c.Type == "text" {
				b.text(exchange.RoleAssistant, validUTF8(c.Text), nil)
			}
		}
	case "reasoning":
		var parts []cxText
		_ = json.Unmarshal(p.Summary, &parts)
		var texts []string
		for _, c := range parts {
			if c.Text != "" {
				texts = append(texts, validUTF8(c.Text))
			}
		}
		b.text(exchange.RoleAssistant, strings.Join(texts, "\n"), map[string]any{"thinking": true})
	case "function_call":
		var input any = clip(p.Arguments)
		if v, err := decodeAny([]byte(p.Arguments)); err == nil {
			input = v
		}
		b.toolCall(p.CallID, validUTF8(p.Name), input)
	case "custom_tool_call":
		var input any
		var s string
		if json.Unmarshal(p.Input, &s) == nil {
			input = clip(s)
		} else if v, err := decodeAny(p.Input); err == nil {
			input = v
		}
		b.toolCall(p.CallID, validUTF8(p.Name), input)
	case "local_shell_call", "web_search_call":
		var input any
		if v, err := decodeAny(p.Action); err == nil {
			input = v
		}
		name := strings.TrimSuffix(p.Type, "_call")
		b.toolCall(p.CallID, name, input)
	case "function_call_output", "custom_tool_call_output":
		b.toolResult(p.CallID, codexOutput(p.Output), false)
	}
}

// codexOutput renders a tool output as the model read it. Older builds wrap
// shell output as {"output": "...", "metadata": {"exit_code": N}}; the text
// and a non-zero exit code are what matter.
func codexOutput(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var obj struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.Content != "" {
			return validUTF8(obj.Content)
		}
		return validUTF8(string(raw))
	}
	var wrapped struct {
		Output   *string `json:"output"`
		Metadata struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
	}
	if strings.HasPrefix(strings.TrimSpace(s), "{") && json.Unmarshal([]byte(s), &wrapped) == nil && wrapped.Output != nil {
		out := *wrapped.Output
		if c := wrapped.Metadata.ExitCode; c != nil && *c != 0 {
			out += fmt.Sprintf("\n[exit code %d]", *c)
		}
		return validUTF8(out)
	}
	return validUTF8(s)
}

// CodexNotify is the JSON Codex's `notify` program receives as its last
// argument after each turn.
type CodexNotify struct {
	Type                 string   `json:"type"`
	ThreadID             string   `json:"thread-id"`
	TurnID               string   `json:"turn-id"`
	Cwd                  string   `json:"cwd"`
	InputMessages        []string `json:"input-messages"`
	LastAssistantMessage string   `json:"last-assistant-message"`
	Client               string   `json:"client"`
}

// ParseCodexNotify decodes the notify payload. A payload without a thread id
// cannot be traced to a rollout and is an error.
func ParseCodexNotify(arg string) (CodexNotify, error) {
	var n CodexNotify
	if err := json.Unmarshal([]byte(arg), &n); err != nil {
		return n, fmt.Errorf("codex notify payload is not JSON: %w", err)
	}
	if n.ThreadID == "" {
		return n, errors.New(`codex notify payload has no "thread-id"`)
	}
	return n, nil
}

// FindCodexRollout finds the rollout of a thread under root (default
// ~/.codex/sessions). Thread ids are UUIDv7, whose first 48 bits are the
// creation time, so the date folders around that day are tried first and
// the whole tree only when they miss; then the archived_sessions folder
// beside root, where Codex moves archived threads.
func FindCodexRollout(root, threadID string) (string, error) {
	if !safeID(threadID) {
		return "", fmt.Errorf("find codex rollout: thread id %q is not a Codex id", threadID)
	}
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find codex rollout: %w", err)
		}
		root = CodexSessionsDir(home)
	}
	suffix := "-" + threadID + ".jsonl"
	if t, ok := uuidV7Time(threadID); ok {
		for _, d := range []int{0, -1, 1} {
			day := t.AddDate(0, 0, d).Local()
			dir := filepath.Join(root, day.Format("2006"), day.Format("01"), day.Format("02"))
			matches, _ := filepath.Glob(filepath.Join(dir, "rollout-*"+suffix))
			if len(matches) > 0 {
				sort.Strings(matches)
				return matches[len(matches)-1], nil
			}
		}
	}
	found, err := findRollout(root, suffix)
	if err != nil {
		return "", fmt.Errorf("find codex rollout of thread %s under %s: %w", threadID, root, err)
	}
	if found == "" && filepath.Base(root) == "sessions" {
		// Codex moves archived threads to a sibling folder.
		archived := filepath.Join(filepath.Dir(root), "archived_sessions")
		if found, err = findRollout(archived, suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("find codex rollout of thread %s under %s: %w", threadID, archived, err)
		}
	}
	if found == "" {
		return "", fmt.Errorf("find codex rollout: no rollout-*%s under %s (nor in archived_sessions)", suffix, root)
	}
	return found, nil
}

// findRollout walks root for a rollout file name ending in suffix; "" when
// there is none.
func findRollout(root, suffix string) (string, error) {
	var found string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), suffix) {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	return found, err
}

func uuidV7Time(id string) (time.Time, bool) {
	hex := strings.ReplaceAll(id, "-", "")
	if len(hex) != 32 || hex[12] != '7' {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(hex[:12], 16, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}
