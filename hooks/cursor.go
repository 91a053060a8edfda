package hooks

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"

	_ "modernc.org/sqlite" // pure-Go SQLite: Cursor's state.vscdb, read only
)

// Cursor keeps its agent chats ("composers") in the editor's global
// SQLite database <Cursor>/User/globalStorage/state.vscdb, table
// cursorDiskKV (key TEXT, value BLOB of JSON): composerData:<composerId>
// holds the chat (createdAt, lastUpdatedAt in ms, and either the bubbles
// inline in conversation[] (older builds) or their order in
// fullConversationHeadersOnly[] {bubbleId, type}), each bubble being
// bubbleId:<composerId>:<bubbleId> {type: 1 user | 2 assistant, text,
// thinking {text}, toolFormerData {name, rawArgs, params, result,
// status}}. Which folder a chat belongs to is in each workspace's own
// state.vscdb (ItemTable key composer.composerData, allComposers[]) next
// to its workspace.json {folder}.
//
// The database is opened read only and immutable (no locks, no journal),
// so a database the running editor holds locked is still read, and never
// written. A chat still being written (updated in the last LiveSession)
// keeps its last exchange open.

const (
	AgentCursor  = "cursor"
	FormatCursor = "cursor"
)

// LiveSession is how recently a transcript (or a chat inside a database)
// must have changed to be taken for a session still running.
const LiveSession = 5 * time.Minute

// ChangedAt is when a session file last changed: for a SQLite database in
// WAL mode (OpenCode's opencode.db) the writes go to its -wal file while
// the agent runs, so the newer of the two (zero when neither is there).
func ChangedAt(path string) time.Time {
	var t time.Time
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	return t
}

type cuComposer struct {
	ComposerID    string          `json:"composerId"`
	CreatedAt     int64           `json:"createdAt"`
	LastUpdatedAt int64           `json:"lastUpdatedAt"`
	Conversation  []cuBubble      `json:"conversation"`
	Headers       []cuHeader      `json:"fullConversationHeadersOnly"`
	Raw           json.RawMessage `json:"-"`
}

type cuHeader struct {
	BubbleID string `json:"bubbleId"`
	Type     int    `json:"type"`
}

type cuBubble struct {
	BubbleID string `json:"bubbleId"`
	Type     int    `json:"type"`
	Text     string `json:"text"`
	Thinking *struct {
		Text string `json:"text"`
	} `json:"thinking"`
	ToolFormerData *struct {
		Name       string          `json:"name"`
		RawArgs    string          `json:"rawArgs"`
		Params     json.RawMessage `json:"params"`
		Result     json.RawMessage `json:"result"`
		Status     string          `json:"status"`
		ToolCallID string          `json:"toolCallId"`
	} `json:"toolFormerData"`
}

// openCursorDB opens a state.vscdb read only and immutable.
func openCursorDB(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// ReadCursor reads every composer chat in a Cursor state.vscdb.
func ReadCursor(path string, opt Options) (Result, error) {
	var res Result
	db, err := openCursorDB(path)
	if err != nil {
		return res, fmt.Errorf("read cursor database %s: %w", path, err)
	}
	defer db.Close()
	kv := func(key string) ([]byte, error) {
		var v []byte
		err := db.QueryRow(`SELECT value FROM cursorDiskKV WHERE key = ?`, key).Scan(&v)
		return v, err
	}
	// A hook names its chat: read that one, not every chat of the editor.
	q, qargs := `SELECT key, value FROM cursorDiskKV WHERE key LIKE 'composerData:%' ORDER BY key`, []any(nil)
	if opt.OnlySession != "" {
		q, qargs = `SELECT key, value FROM cursorDiskKV WHERE key = ?`, []any{"composerData:" + opt.OnlySession}
	}
	rows, err := db.Query(q, qargs...)
	if err != nil {
		return res, fmt.Errorf("read cursor database %s: %w (is it Cursor's globalStorage/state.vscdb?)", path, err)
	}
	type comp struct {
		key string
		c   cuComposer
	}
	var comps []comp
	for rows.Next() {
		var key string
		var val []byte
		if err := rows.Scan(&key, &val); err != nil {
			rows.Close()
			return res, fmt.Errorf("read cursor database %s: %w", path, err)
		}
		var c cuComposer
		if err := json.Unmarshal(val, &c); err != nil {
			res.Problems = append(res.Problems, Problem{path, 0, fmt.Sprintf("key %s: not JSON: %v; skipped", key, err)})
			continue
		}
		if c.ComposerID == "" {
			c.ComposerID = strings.TrimPrefix(key, "composerData:")
		}
		if opt.OnlySession != "" && c.ComposerID != opt.OnlySession {
			continue
		}
		comps = append(comps, comp{key, c})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("read cursor database %s: %w", path, err)
	}
	projects := cursorProjects(path)
	now := time.Now()
	sort.Slice(comps, func(i, j int) bool {
		if comps[i].c.CreatedAt != comps[j].c.CreatedAt {
			return comps[i].c.CreatedAt < comps[j].c.CreatedAt
		}
		return comps[i].key < comps[j].key
	})
	for _, cc := range comps {
		c := cc.c
		bubbles := c.Conversation
		if len(c.Headers) > 0 {
			bubbles = nil
			for _, h := range c.Headers {
				v, err := kv("bubbleId:" + c.ComposerID + ":" + h.BubbleID)
				if err != nil {
					if err != sql.ErrNoRows {
						res.Problems = append(res.Problems, Problem{path, 0, fmt.Sprintf("key bubbleId:%s:%s: %v; skipped", c.ComposerID, h.BubbleID, err)})
					}
					continue // not written yet
				}
				var b cuBubble
				if err := json.Unmarshal(v, &b); err != nil {
					res.Problems = append(res.Problems, Problem{path, 0, fmt.Sprintf("key bubbleId:%s:%s: not JSON: %v; skipped", c.ComposerID, h.BubbleID, err)})
					continue
				}
				if b.BubbleID == "" {
					b.BubbleID = h.BubbleID
				}
				if b.Type == 0 {
					b.Type = h.Type
				}
				bubbles = append(bubbles, b)
			}
		}
		o := opt
		if c.LastUpdatedAt > 0 && now.Sub(time.UnixMilli(c.LastUpdatedAt)) >= LiveSession {
			o.SessionEnded = true
		}
		if o.Cwd == "" {
			o.Cwd = projects[c.ComposerID]
		}
		res.Exchanges = append(res.Exchanges, cursorExchanges(c, bubbles, o)...)
	}
	return res, nil
}

func cursorExchanges(c cuComposer, bubbles []cuBubble, opt Options) []*exchange.Exchange {
	when := ""
	if c.CreatedAt > 0 {
		when = time.UnixMilli(c.CreatedAt).UTC().Format(time.RFC3339)
	}
	project := ""
	if opt.Cwd != "" {
		project = ProjectFromCwd(opt.Cwd)
	}
	var bs []*builder
	var cur *builder
	for _, b := range bubbles {
		switch b.Type {
		case 1:
			prompt := strings.TrimSpace(cutGitMemContext(validUTF8(b.Text)))
			cur = endTurn(cur)
			if prompt == "" || b.BubbleID == "" {
				continue
			}
			ex := &exchange.Exchange{ID: "cursor:" + c.ComposerID + "/" + b.BubbleID, Session: c.ComposerID, Time: when, Project: project, Agent: AgentCursor}
			cur = promptBuilder(ex, prompt)
			bs = append(bs, cur)
		case 2:
			if cur == nil {
				continue
			}
			if b.Thinking != nil {
				cur.text(exchange.RoleAssistant, clip(validUTF8(b.Thinking.Text)), map[string]any{"thinking": true})
			}
			if t := b.ToolFormerData; t != nil && t.Name != "" {
				var input any
				if v, err := decodeAny([]byte(t.RawArgs)); err == nil {
					input = v
				} else if v, err := decodeAny(t.Params); err == nil {
					input = v
				}
				id := t.ToolCallID
				if id == "" {
					id = b.BubbleID
				}
				cur.toolCall(id, validUTF8(t.Name), input)
				result := ""
				var s string
				if json.Unmarshal(t.Result, &s) == nil {
					result = s
				} else if len(t.Result) > 0 && string(t.Result) != "null" {
					result = string(t.Result)
				}
				failed := t.Status == "error" || t.Status == "cancelled" || t.Status == "rejected"
				if result != "" || failed {
					cur.toolResult(id, validUTF8(result), failed)
				}
			}
			cur.text(exchange.RoleAssistant, clip(validUTF8(b.Text)), nil)
		}
	}
	return finish(bs, opt)
}

// cursorProjects maps composer ids to their workspace folder, from the
// workspace databases beside the global one
// (…/User/globalStorage/state.vscdb → …/User/workspaceStorage/*/).
func cursorProjects(globalDB string) map[string]string {
	out := map[string]string{}
	user := filepath.Dir(filepath.Dir(globalDB))
	dirs, _ := filepath.Glob(filepath.Join(user, "workspaceStorage", "*"))
	for _, d := range dirs {
		folder := vscodeWorkspaceFolder(d)
		if folder == "" {
			continue
		}
		db, err := openCursorDB(filepath.Join(d, "state.vscdb"))
		if err != nil {
			continue
		}
		var v []byte
		if db.QueryRow(`SELECT value FROM ItemTable WHERE key = 'composer.composerData'`).Scan(&v) == nil {
			var data struct {
				AllComposers []struct {
					ComposerID string `json:"composerId"`
				} `json:"allComposers"`
			}
			if json.Unmarshal(v, &data) == nil {
				for _, c := range data.AllComposers {
					out[c.ComposerID] = folder
				}
			}
		}
		db.Close()
	}
	return out
}

// CursorGlobalDBs are the places Cursor's global state.vscdb lives.
func CursorGlobalDBs(home string) []string {
	return []string{
		filepath.Join(home, ".config", "Cursor", "User", "globalStorage"),
		filepath.Join(home, "Library", "Application Support", "Cursor", "User", "globalStorage"),
	}
}

func isCursorDB(p string, d fs.DirEntry) bool {
	return d.Name() == "state.vscdb" && filepath.Base(filepath.Dir(p)) == "globalStorage"
}
