package hooks

import (
	"bytes"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// Cursor's CLI (cursor-agent, `agent`) keeps each chat in a SQLite database
// of its own, ~/.cursor/chats/<md5 of the workspace path>/<agentId>/store.db
// (WAL mode). Cursor is closed source; the layout is as readers of it
// document it (yashas-salankimatt/sidecar docs/plans/cursor-cli-adapter.md
// and a "Cursor Agent Database Format Reference" in the same vein):
//
//   - table meta (key TEXT, value TEXT): key "0" holds hex-encoded JSON
//     {agentId, latestRootBlobId, name, mode, createdAt (ms), lastUsedModel};
//   - table blobs (id TEXT, data BLOB), content addressed (id is the hex
//     SHA-256 of data): a message blob is JSON {role: user | assistant |
//     tool | system, content: a string or blocks, id, providerOptions
//     {cursor {requestId}}}; a linking blob is protocol buffers whose
//     field 1 (bytes 0x0A 0x20) repeats the 32-byte ids of its children,
//     in order. The chat is the messages found walking from
//     latestRootBlobId.
//
// Blocks: text, reasoning (thinking), tool-call {toolCallId, toolName,
// args}, tool-result {toolCallId, result (a string or blocks), isError}. A
// prompt is the <user_query>…</user_query> of a user message; a user
// message without one that opens with a tag is context the CLI injected.
// No message has a time: every exchange takes the chat's createdAt. No
// message says a turn ended either: a chat unchanged for LiveSession (or
// a session the caller says ended) has its last exchange closed.
//
// Exchange ids are "cursor:<agentId>/t<n>", n the prompt's rank: the ids
// the chat's transcript (ReadCursorTranscript) gives, and a transcript of
// a chat a store.db holds is left to this reader, so a chat is stored once.
//
// The database is never opened in place: store.db and its -wal are copied
// into a temporary folder and the copy is read, so a chat the running CLI
// holds locked is read whole (the WAL applied), and the CLI's files are
// never written.

const cursorCLIStore = "store.db"

type cliMeta struct {
	AgentID          string `json:"agentId"`
	LatestRootBlobID string `json:"latestRootBlobId"`
	Name             string `json:"name"`
	CreatedAt        int64  `json:"createdAt"`
}

type cliMessage struct {
	Role            string          `json:"role"`
	Content         json.RawMessage `json:"content"`
	ProviderOptions struct {
		Cursor struct {
			RequestID string `json:"requestId"`
		} `json:"cursor"`
	} `json:"providerOptions"`
}

type cliBlock struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	Result     json.RawMessage `json:"result"`
	IsError    bool            `json:"isError"`
}

// cliMaxDepth bounds the walk of linking blobs (a chat is a shallow tree;
// a crafted database may nest without end).
const cliMaxDepth = 32

// ReadCursorCLI reads one Cursor CLI chat database (store.db).
func ReadCursorCLI(path string, opt Options) (Result, error) {
	var res Result
	tmp, copyPath, mtime, err := copyCursorCLIStore(path)
	if err != nil {
		return res, fmt.Errorf("read cursor cli chat %s: %w", path, err)
	}
	defer os.RemoveAll(tmp)
	u := url.URL{Scheme: "file", Path: copyPath}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return res, fmt.Errorf("read cursor cli chat %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var metaText string
	if err := db.QueryRow(`SELECT value FROM meta WHERE key = '0'`).Scan(&metaText); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return res, nil // a chat opened and left before its first write
		}
		return res, fmt.Errorf("read cursor cli chat %s: %w (is it a Cursor CLI store.db?)", path, err)
	}
	metaJSON := []byte(strings.TrimSpace(metaText))
	if !bytes.HasPrefix(metaJSON, []byte("{")) {
		if metaJSON, err = hex.DecodeString(string(metaJSON)); err != nil {
			res.Problems = append(res.Problems, Problem{path, 0, "meta 0: neither hex nor JSON; the chat is skipped"})
			return res, nil
		}
	}
	var meta cliMeta
	if err := json.Unmarshal(metaJSON, &meta); err != nil {
		res.Problems = append(res.Problems, Problem{path, 0, fmt.Sprintf("meta 0: not JSON: %v; the chat is skipped", err)})
		return res, nil
	}
	if meta.AgentID == "" {
		meta.AgentID = filepath.Base(filepath.Dir(path))
	}
	if opt.OnlySession != "" && opt.OnlySession != meta.AgentID {
		return res, nil
	}
	blobs := map[string][]byte{}
	rows, err := db.Query(`SELECT id, data FROM blobs`)
	if err != nil {
		return res, fmt.Errorf("read cursor cli chat %s: %w", path, err)
	}
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			res.Problems = append(res.Problems, Problem{path, 0, fmt.Sprintf("a blob: %v; skipped", err)})
			continue
		}
		blobs[strings.ToLower(id)] = data
	}
	if err := rows.Close(); err != nil {
		return res, fmt.Errorf("read cursor cli chat %s: %w", path, err)
	}
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("read cursor cli chat %s: %w", path, err)
	}
	var msgs []cliMessage
	seen := map[string]bool{}
	var walk func(id string, depth int)
	walk = func(id string, depth int) {
		data, ok := blobs[id]
		if !ok {
			res.Problems = append(res.Problems, Problem{path, 0, fmt.Sprintf("blob %.16s: missing; skipped", id)})
			return
		}
		if seen[id] && len(data) > 0 && data[0] != '{' {
			return // a linking blob met twice: a cycle, or a shared subtree already read
		}
		seen[id] = true
		if len(data) > 0 && data[0] == '{' {
			var m cliMessage
			if err := json.Unmarshal(data, &m); err != nil {
				res.Problems = append(res.Problems, Problem{path, 0, fmt.Sprintf("blob %.16s: not a message: %v; skipped", id, err)})
				return
			}
			msgs = append(msgs, m)
			return
		}
		if depth >= cliMaxDepth {
			res.Problems = append(res.Problems, Problem{path, 0, fmt.Sprintf("blob %.16s: links nested over %d deep; skipped", id, cliMaxDepth)})
			return
		}
		children, err := protoRefs(data)
		if err != nil {
			res.Problems = append(res.Problems, Problem{path, 0, fmt.Sprintf("blob %.16s: %v; the rest of it is skipped", id, err)})
		}
		for _, c := range children {
			walk(c, depth+1)
		}
	}
	if meta.LatestRootBlobID != "" {
		walk(strings.ToLower(meta.LatestRootBlobID), 0)
	}
	cwd := opt.Cwd
	if cwd == "" {
		cwd = cursorCLIWorkspace(path)
	}
	if cwd != "" {
		res.Cwd = cwd
	}
	res.Exchanges = cursorCLIExchanges(meta, msgs, cwd, time.Since(mtime) >= LiveSession, opt)
	return res, nil
}

// cursorCLIExchanges turns a chat's messages into exchanges; idle closes
// the last one.
func cursorCLIExchanges(meta cliMeta, msgs []cliMessage, cwd string, idle bool, opt Options) []*exchange.Exchange {
	when := ""
	if meta.CreatedAt > 0 {
		when = time.UnixMilli(meta.CreatedAt).UTC().Format(time.RFC3339)
	}
	project := ""
	if cwd != "" {
		project = ProjectFromCwd(cwd)
	}
	var bs []*builder
	var cur *builder
	prompts := 0
	for _, m := range msgs {
		blocks := cliBlocks(m.Content)
		switch m.Role {
		case "user":
			var parts []string
			for _, b := range blocks {
				if b.Type == "text" {
					parts = append(parts, b.Text)
				}
			}
			text := strings.Join(parts, "\n")
			if q := userQueryRe().FindStringSubmatch(text); q != nil {
				text = q[1]
			} else if strings.HasPrefix(strings.TrimSpace(text), "<") {
				// Context the CLI put before the first prompt (user info,
				// rules, open files): not a prompt.
				if cur != nil {
					cur.text(exchange.RoleSystem, clip(cutGitMemContext(validUTF8(text))), nil)
				}
				continue
			}
			prompt := strings.TrimSpace(cutGitMemContext(validUTF8(text)))
			prompts++
			cur = endTurn(cur)
			if prompt == "" {
				continue
			}
			ex := &exchange.Exchange{ID: fmt.Sprintf("cursor:%s/t%d", meta.AgentID, prompts), Session: meta.AgentID, Time: when, Project: project, Agent: AgentCursor}
			cur = promptBuilder(ex, prompt)
			bs = append(bs, cur)
		case "assistant":
			if cur == nil {
				continue
			}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					cur.text(exchange.RoleAssistant, clip(validUTF8(b.Text)), nil)
				case "reasoning":
					cur.text(exchange.RoleAssistant, clip(validUTF8(b.Text)), map[string]any{"thinking": true})
				case "tool-call":
					var input any
					if v, err := decodeAny(b.Args); err == nil {
						input = sanitize(v)
					}
					cur.toolCall(b.ToolCallID, validUTF8(b.ToolName), input)
				}
			}
		case "tool":
			if cur == nil {
				continue
			}
			for _, b := range blocks {
				if b.Type == "tool-result" {
					cur.toolResult(b.ToolCallID, cliResultText(b.Result), b.IsError)
				}
			}
		}
	}
	if idle && cur != nil {
		cur.closed = true
	}
	return finish(bs, opt)
}

// cliBlocks is a message's content as blocks (a string is one text block).
func cliBlocks(raw json.RawMessage) []cliBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []cliBlock{{Type: "text", Text: s}}
	}
	var raws []json.RawMessage
	if json.Unmarshal(raw, &raws) != nil {
		return nil
	}
	out := make([]cliBlock, 0, len(raws))
	for _, r := range raws {
		var b cliBlock
		if json.Unmarshal(r, &b) == nil {
			out = append(out, b)
		}
	}
	return out
}

// cliResultText is a tool result: a string, or blocks whose text is kept.
func cliResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return validUTF8(s)
	}
	if t := partsText(raw); t != "" {
		return t
	}
	if len(raw) > 0 && string(raw) != "null" {
		return validUTF8(string(raw))
	}
	return ""
}

// protoRefs returns the 32-byte blob ids (hex) of a linking blob's field 1,
// in order. Other fields are skipped; a blob that is not protocol buffers
// gives the ids read before the fault and an error.
func protoRefs(data []byte) ([]string, error) {
	var out []string
	for i := 0; i < len(data); {
		key, n := protoVarint(data[i:])
		if n <= 0 {
			return out, errors.New("not a linking blob (bad field key)")
		}
		i += n
		field, wire := key>>3, key&7
		switch wire {
		case 0:
			_, n := protoVarint(data[i:])
			if n <= 0 {
				return out, errors.New("not a linking blob (bad varint)")
			}
			i += n
		case 1:
			i += 8
		case 5:
			i += 4
		case 2:
			l, n := protoVarint(data[i:])
			if n <= 0 || l > uint64(len(data)-i-n) {
				return out, errors.New("not a linking blob (bad length)")
			}
			i += n
			if field == 1 && l == 32 {
				out = append(out, hex.EncodeToString(data[i:i+32]))
			}
			i += int(l)
		default:
			return out, fmt.Errorf("not a linking blob (wire type %d)", wire)
		}
		if i > len(data) {
			return out, errors.New("not a linking blob (cut short)")
		}
	}
	return out, nil
}

// protoVarint decodes a varint; n <= 0 when data holds none.
func protoVarint(data []byte) (v uint64, n int) {
	for i := 0; i < len(data) && i < 10; i++ {
		v |= uint64(data[i]&0x7f) << (7 * i)
		if data[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// copyCursorCLIStore copies store.db and its -wal into a new temporary
// folder; it returns the folder, the copy's path and the newest change
// time of the two.
func copyCursorCLIStore(path string) (dir, copyPath string, mtime time.Time, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", "", mtime, err
	}
	mtime = st.ModTime()
	dir, err = os.MkdirTemp("", "git-mem-cursor-cli-")
	if err != nil {
		return "", "", mtime, err
	}
	copyPath = filepath.Join(dir, cursorCLIStore)
	for _, suffix := range []string{"", "-wal"} {
		if suffix != "" {
			if st, err := os.Stat(path + suffix); err == nil && st.ModTime().After(mtime) {
				mtime = st.ModTime()
			}
		}
		if err := copyBounded(path+suffix, copyPath+suffix); err != nil {
			if suffix != "" && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			os.RemoveAll(dir)
			return "", "", mtime, err
		}
	}
	return dir, copyPath, mtime, nil
}

// copyBounded copies a file of at most maxDocBytes.
func copyBounded(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(in, maxDocBytes+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxDocBytes {
		err = fmt.Errorf("over %d MiB: not read", maxDocBytes>>20)
	}
	return err
}

// cursorCLIWorkspaces caches, per ~/.cursor folder, the workspace path of
// each chats/<md5> folder, found from the projects/<slug> folders beside.
var cursorCLIWorkspaces sync.Map // .cursor dir -> map[string]string

// cursorCLIWorkspace is the folder a store.db's chat ran in: the project
// slug (~/.cursor/projects/<slug>) whose path hashes to the chats/<md5>
// folder the store is in; "" when none does.
func cursorCLIWorkspace(path string) string {
	hash := filepath.Base(filepath.Dir(filepath.Dir(path)))
	chats := filepath.Dir(filepath.Dir(filepath.Dir(path)))
	if filepath.Base(chats) != "chats" || len(hash) != 32 {
		return ""
	}
	root := filepath.Dir(chats)
	if m, ok := cursorCLIWorkspaces.Load(root); ok {
		return m.(map[string]string)[hash]
	}
	m := map[string]string{}
	ents, _ := os.ReadDir(filepath.Join(root, "projects"))
	for i, e := range ents {
		if i >= 1000 || !e.IsDir() {
			continue
		}
		if p := cursorSlugPath(e.Name()); p != "" {
			m[cursorCLIWorkspaceHash(p)] = p
		}
	}
	cursorCLIWorkspaces.Store(root, m)
	return m[hash]
}

// cursorCLIWorkspaceHash is the chats/<md5> folder name of a workspace.
func cursorCLIWorkspaceHash(path string) string {
	sum := md5.Sum([]byte(path))
	return hex.EncodeToString(sum[:])
}

// CursorCLIChatRoots is where the Cursor CLI keeps its chats.
func CursorCLIChatRoots(home string) []string {
	return []string{filepath.Join(home, ".cursor", "chats")}
}

func isCursorCLIStore(p string, d fs.DirEntry) bool {
	return d.Name() == cursorCLIStore && filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p)))) == "chats"
}

// CursorCLIStore is the store.db under home holding the Cursor CLI chat
// conv, "" when there is none.
func CursorCLIStore(home, conv string) string {
	if conv == "" || strings.ContainsAny(conv, `*?[\/`) {
		return ""
	}
	m, _ := filepath.Glob(filepath.Join(home, ".cursor", "chats", "*", conv, cursorCLIStore))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// cursorCLIHolds says whether a Cursor CLI store.db under home holds the
// conversation.
func cursorCLIHolds(home, conv string) bool { return CursorCLIStore(home, conv) != "" }
