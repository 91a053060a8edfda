package hooks

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/lazy"
)

// Cursor (the editor's agent and the `agent` CLI) also writes a transcript
// of each conversation, the file its stop hook names as transcript_path:
// ~/.cursor/projects/<workspace slug>/agent-transcripts/<id>/<id>.jsonl
// (older builds: agent-transcripts/<id>.jsonl), one line per message,
// {"role": "user" | "assistant", "message": {"content": [blocks]}} with
// text blocks (a prompt wrapped in <user_query>…</user_query>) and
// tool_use blocks {name, input}, {"type": "turn_ended", "status"} after a
// turn, and sometimes a {"type": "metadata"} first line. It has no
// timestamps, no tool results and no message ids. The editor's chats are
// richer in its database (ReadCursor): a transcript whose conversation the
// database holds is left to it, so one chat is never stored twice.

var userQueryRe = lazy.Regexp(`(?s)<user_query>\s*(.*?)\s*</user_query>`)

type ctLine struct {
	Type   string `json:"type"`
	Role   string `json:"role"`
	Status string `json:"status"`
	// The content blocks are Claude Code's shape (a string, or text and
	// tool_use blocks).
	Message struct {
		Content ccContent `json:"content"`
	} `json:"message"`
}

// ReadCursorTranscript reads one Cursor agent transcript. Exchange ids are
// "cursor:<conversation id>/t<n>", n the prompt's rank in the file.
// A conversation the editor's database holds is left to ReadCursor (unless
// the caller names it: a hook that found no database chat).
func ReadCursorTranscript(path string, opt Options) (Result, error) {
	if opt.OnlySession == "" && cursorDBHolds(cursorConversation(path)) {
		return Result{}, nil
	}
	return readCursorTranscript(path, opt)
}

func cursorConversation(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}

func readCursorTranscript(path string, opt Options) (Result, error) {
	var res Result
	conv := cursorConversation(path)
	f, err := os.Open(path)
	if err != nil {
		return res, fmt.Errorf("read cursor transcript %s: %w", path, err)
	}
	defer f.Close()
	cwd := opt.Cwd
	if cwd == "" {
		cwd = cursorSlugPath(cursorSlug(path))
	}
	project := ""
	if cwd != "" {
		project = ProjectFromCwd(cwd)
		res.Cwd = cwd
	}
	var bs []*builder
	var cur *builder
	prompts := 0
	err = readLines(f, path, &res.Problems, func(l line) {
		var ln ctLine
		if err := json.Unmarshal(l.data, &ln); err != nil {
			res.Problems = append(res.Problems, badLine(path, l, err))
			return
		}
		if ln.Type == "turn_ended" {
			cur = endTurn(cur)
			return
		}
		blocks := ln.Message.Content
		switch ln.Role {
		case "user":
			prompts++
			var parts []string
			for _, b := range blocks {
				if b.Type == "text" {
					parts = append(parts, b.Text)
				}
			}
			text := strings.Join(parts, "\n")
			if m := userQueryRe().FindStringSubmatch(text); m != nil {
				text = m[1]
			}
			prompt := strings.TrimSpace(cutGitMemContext(validUTF8(text)))
			cur = endTurn(cur)
			if prompt == "" {
				return
			}
			ex := &exchange.Exchange{ID: fmt.Sprintf("cursor:%s/t%d", conv, prompts), Session: conv, Project: project, Agent: AgentCursor}
			cur = promptBuilder(ex, prompt)
			bs = append(bs, cur)
		case "assistant":
			if cur == nil {
				return
			}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					cur.text(exchange.RoleAssistant, clip(validUTF8(b.Text)), nil)
				case "tool_use":
					var input any
					if v, err := decodeAny(b.Input); err == nil {
						input = sanitize(v)
					}
					cur.toolCall("", validUTF8(b.Name), input)
				}
			}
		}
	})
	if err != nil {
		return res, fmt.Errorf("read cursor transcript %s: %w", path, err)
	}
	res.Exchanges = finish(bs, opt)
	return res, nil
}

// cursorDBHolds says whether the editor's database on this machine holds
// the conversation (its composerData key).
func cursorDBHolds(conv string) bool {
	home, err := os.UserHomeDir()
	if err != nil || conv == "" {
		return false
	}
	// The CLI's own database of the chat (ReadCursorCLI) is richer: it
	// has the tool results.
	if cursorCLIHolds(home, conv) {
		return true
	}
	for _, dir := range CursorGlobalDBs(home) {
		p := filepath.Join(dir, "state.vscdb")
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if ok, _ := CursorDBHasChat(p, conv); ok {
			return true
		}
	}
	return false
}

// CursorDBHasChat says whether a state.vscdb holds the chat.
func CursorDBHasChat(db, composerID string) (bool, error) {
	d, err := openCursorDB(db)
	if err != nil {
		return false, err
	}
	defer d.Close()
	var n int
	err = d.QueryRow(`SELECT count(*) FROM cursorDiskKV WHERE key = ?`, "composerData:"+composerID).Scan(&n)
	return n > 0, err
}

// CursorTranscriptFinalReply is the text of the transcript's last
// assistant message: what the hook compares the database's chat with, so
// a chat the editor has not finished writing is not closed half-way.
func CursorTranscriptFinalReply(path string) string {
	res, err := readCursorTranscript(path, Options{SessionEnded: true})
	if err != nil || len(res.Exchanges) == 0 {
		return ""
	}
	b := &builder{ex: res.Exchanges[len(res.Exchanges)-1]}
	return b.finalReply()
}

// CursorTranscriptRoots is where Cursor writes its transcripts.
func CursorTranscriptRoots(home string) []string {
	return []string{filepath.Join(home, ".cursor", "projects")}
}

func isCursorTranscript(p string, d fs.DirEntry) bool {
	if !strings.HasSuffix(d.Name(), ".jsonl") {
		return false
	}
	dir := filepath.Dir(p)
	if filepath.Base(dir) == "agent-transcripts" {
		return true
	}
	return filepath.Base(filepath.Dir(dir)) == "agent-transcripts" && filepath.Base(dir)+".jsonl" == d.Name()
}

// readCursorAny reads what Cursor's import finds: the editor's database,
// a CLI chat's store.db, or a transcript.
func readCursorAny(path string, opt Options) (Result, error) {
	if filepath.Base(path) == cursorCLIStore {
		return ReadCursorCLI(path, opt)
	}
	if strings.HasSuffix(path, ".jsonl") {
		return ReadCursorTranscript(path, opt)
	}
	return ReadCursor(path, opt)
}

// cursorSlug is the <workspace slug> folder of a transcript path
// (…/projects/<slug>/agent-transcripts/…), "" when it is not laid out so.
func cursorSlug(path string) string {
	for d := filepath.Dir(path); d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) == "agent-transcripts" {
			if filepath.Base(filepath.Dir(filepath.Dir(d))) == "projects" {
				return filepath.Base(filepath.Dir(d))
			}
			return ""
		}
	}
	return ""
}

// cursorSlugPath finds the folder a workspace slug was made from: Cursor
// writes the absolute path with its separators as "-" and no leading one
// ("home-dev-src-my-app"), so which "-" were separators is found by
// looking for the folders that exist. "" when none does (the project was
// moved or deleted, or the slug names a remote workspace).
func cursorSlugPath(slug string) string {
	if slug == "" {
		return ""
	}
	parts := strings.Split(slug, "-")
	// budget bounds the stats a crafted slug of many dashes costs.
	budget := 256
	var walk func(dir string, i int) string
	walk = func(dir string, i int) string {
		if i == len(parts) {
			return dir
		}
		for j := i + 1; j <= len(parts) && budget > 0; j++ {
			budget--
			next := filepath.Join(dir, strings.Join(parts[i:j], "-"))
			if st, err := os.Stat(next); err == nil && st.IsDir() {
				if p := walk(next, j); p != "" {
					return p
				}
			}
		}
		return ""
	}
	return walk(string(filepath.Separator), 0)
}
