package hooks

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// OpenCode (sst/opencode) keeps sessions in SQLite,
// $XDG_DATA_HOME/opencode/opencode.db (packages/opencode/src/session/
// session.sql.ts): session (id, directory, …), message (id, session_id,
// time_created, data: {role, time {created, completed}, finish, …}) and
// part (id, message_id, session_id, data: {type: text | reasoning | tool |
// file | step-start | step-finish | patch | …}). A tool part is {tool,
// callID, state {status, input, output, error}}. Message and part ids sort
// in creation order, session ids the other way (newest first). Opened read
// only and immutable, like Cursor's database. OpenCode 1.18 also keeps
// event (every bus event, a log of the same records) and session_message
// (empty) tables; message and part are what it reads back.

const (
	AgentOpenCode  = "opencode"
	FormatOpenCode = "opencode"
)

type ocMessage struct {
	Role string `json:"role"`
	Time struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	Finish string `json:"finish"`
}

type ocPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Filename  string `json:"filename"`
	Tool      string `json:"tool"`
	CallID    string `json:"callID"`
	State     struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input"`
		Output string          `json:"output"`
		Error  string          `json:"error"`
	} `json:"state"`
}

// ReadOpenCode reads every session of an opencode.db.
func ReadOpenCode(path string, opt Options) (Result, error) {
	var res Result
	db, err := openOpenCodeDB(path)
	if err != nil {
		return res, fmt.Errorf("read opencode database %s: %w", path, err)
	}
	defer db.Close()
	type session struct{ id, dir string }
	var sessions []session
	// Session ids sort newest first (OpenCode makes them descending);
	// sessions are read oldest first, by their creation time.
	rows, err := db.Query(`SELECT id, directory FROM session ORDER BY time_created, id`)
	if err != nil {
		rows, err = db.Query(`SELECT id, directory FROM session ORDER BY id DESC`)
	}
	if err != nil {
		return res, fmt.Errorf("read opencode database %s: %w (is it OpenCode's opencode.db?)", path, err)
	}
	for rows.Next() {
		var s session
		var dir sql.NullString
		if err := rows.Scan(&s.id, &dir); err != nil {
			rows.Close()
			return res, fmt.Errorf("read opencode database %s: %w", path, err)
		}
		s.dir = dir.String
		if opt.OnlySession == "" || s.id == opt.OnlySession {
			sessions = append(sessions, s)
		}
	}
	rows.Close()
	for _, s := range sessions {
		exs, probs, err := readOpenCodeSession(db, path, s.id, s.dir, opt)
		if err != nil {
			return res, fmt.Errorf("read opencode database %s: session %s: %w", path, s.id, err)
		}
		res.Exchanges = append(res.Exchanges, exs...)
		res.Problems = append(res.Problems, probs...)
	}
	return res, nil
}

// openOpenCodeDB opens an opencode.db read only. OpenCode keeps it in WAL
// mode and leaves the rows it wrote in opencode.db-wal until a checkpoint
// (1.18 exits without one: a few KB of database, a MB of WAL); an
// immutable open reads the main file alone and would miss them, even the
// tables. So with a -wal beside it the database is opened as a plain
// reader, which sees the WAL and never writes the database; without one,
// immutable, as Cursor's.
func openOpenCodeDB(path string) (*sql.DB, error) {
	if _, err := os.Stat(path + "-wal"); err != nil {
		return openCursorDB(path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.Exec(`PRAGMA busy_timeout = 2000`)
	return db, nil
}

// ocRow is one message as stored: its id, creation time (ms, 0 unknown)
// and JSON; where marks it in problems (a database row, a file).
type ocRow struct {
	id      string
	created int64
	data    []byte
	where   string
}

func readOpenCodeSession(db *sql.DB, path, session, dir string, opt Options) ([]*exchange.Exchange, []Problem, error) {
	parts := map[string][]ocRow{}
	prow, err := db.Query(`SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY id`, session)
	if err != nil {
		return nil, nil, err
	}
	for prow.Next() {
		var msg string
		var r ocRow
		if err := prow.Scan(&r.id, &msg, &r.data); err != nil {
			prow.Close()
			return nil, nil, err
		}
		parts[msg] = append(parts[msg], r)
	}
	prow.Close()
	mrow, err := db.Query(`SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY id`, session)
	if err != nil {
		return nil, nil, err
	}
	defer mrow.Close()
	var msgs []ocRow
	for mrow.Next() {
		var r ocRow
		var created sql.NullInt64
		if err := mrow.Scan(&r.id, &created, &r.data); err != nil {
			return nil, nil, err
		}
		r.created = created.Int64
		msgs = append(msgs, r)
	}
	if err := mrow.Err(); err != nil {
		return nil, nil, err
	}
	exs, probs := openCodeExchanges(path, session, dir, msgs, parts, opt)
	return exs, probs, nil
}

// openCodeExchanges cuts a session's messages (in id order, with their
// parts' JSON in id order) into exchanges, whichever store they came from.
func openCodeExchanges(path, session, dir string, msgs []ocRow, rawParts map[string][]ocRow, opt Options) ([]*exchange.Exchange, []Problem) {
	var probs []Problem
	where := func(kind string, r ocRow) string {
		if r.where != "" {
			return r.where
		}
		return kind + " " + r.id
	}
	parts := map[string][]ocPart{}
	for _, m := range msgs {
		for _, pr := range rawParts[m.id] {
			var p ocPart
			if err := json.Unmarshal(pr.data, &p); err != nil {
				probs = append(probs, Problem{path, 0, fmt.Sprintf("%s: not JSON: %v; skipped", where("part", pr), err)})
				continue
			}
			parts[m.id] = append(parts[m.id], p)
		}
	}
	cwd := opt.Cwd
	if cwd == "" {
		cwd = dir
	}
	project := ""
	if cwd != "" {
		project = ProjectFromCwd(cwd)
	}
	var bs []*builder
	var cur *builder
	for _, r := range msgs {
		id := r.id
		var m ocMessage
		if err := json.Unmarshal(r.data, &m); err != nil {
			probs = append(probs, Problem{path, 0, fmt.Sprintf("%s: not JSON: %v; skipped", where("message", r), err)})
			continue
		}
		switch m.Role {
		case "user":
			var prompt, side []string
			for _, p := range parts[id] {
				switch {
				case p.Type == "text" && !p.Synthetic:
					prompt = append(prompt, validUTF8(p.Text))
				case p.Type == "text":
					side = append(side, validUTF8(p.Text))
				case p.Type == "file":
					side = append(side, "[file "+validUTF8(p.Filename)+"]")
				}
			}
			text := strings.TrimSpace(cutGitMemContext(strings.Join(prompt, "\n")))
			cur = endTurn(cur)
			if text == "" {
				continue
			}
			when := ""
			if ms := m.Time.Created; ms > 0 {
				when = time.UnixMilli(ms).UTC().Format(time.RFC3339)
			} else if r.created > 0 {
				when = time.UnixMilli(r.created).UTC().Format(time.RFC3339)
			}
			ex := &exchange.Exchange{ID: "opencode:" + session + "/" + id, Session: session, Time: when, Project: project, Agent: AgentOpenCode}
			cur = promptBuilder(ex, text)
			cur.text(exchange.RoleSystem, clip(cutGitMemContext(strings.Join(side, "\n"))), nil)
			bs = append(bs, cur)
		case "assistant":
			if cur == nil || cur.closed {
				continue
			}
			for _, p := range parts[id] {
				switch p.Type {
				case "reasoning":
					cur.text(exchange.RoleAssistant, clip(validUTF8(p.Text)), map[string]any{"thinking": true})
				case "text":
					cur.text(exchange.RoleAssistant, clip(validUTF8(p.Text)), nil)
				case "tool":
					var input any
					if v, err := decodeAny(p.State.Input); err == nil {
						input = v
					}
					cur.toolCall(p.CallID, validUTF8(p.Tool), input)
					out := p.State.Output
					if p.State.Status == "error" {
						out = p.State.Error
					}
					if out != "" || p.State.Status == "error" {
						cur.toolResult(p.CallID, validUTF8(out), p.State.Status == "error")
					}
				}
			}
			// The turn is over when a step finished for another reason
			// than to run tools.
			if m.Time.Completed > 0 && m.Finish != "" && m.Finish != "tool-calls" && m.Finish != "unknown" {
				cur.closed = true
			}
		}
	}
	return finish(bs, opt), probs
}

// OpenCodeDataDirs is where OpenCode keeps opencode.db.
func OpenCodeDataDirs(home string) []string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return []string{filepath.Join(d, "opencode")}
	}
	return []string{filepath.Join(home, ".local", "share", "opencode")}
}

func isOpenCodeDB(p string, d fs.DirEntry) bool {
	n := d.Name()
	return strings.HasPrefix(n, "opencode") && strings.HasSuffix(n, ".db") && filepath.Base(filepath.Dir(p)) == "opencode"
}
