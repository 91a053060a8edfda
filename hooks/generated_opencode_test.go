package hooks

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// generatedOpenCodeDB was written by OpenCode 1.18.33 itself, and
// generatedOpenCodeStorage (its JSON files) by OpenCode 1.1.65, the last
// 1.1 release, before the database (scripts/agent-fixtures/opencode/run.sh,
// the same prompts against the same scripted model).
const (
	generatedOpenCodeDB      = "testdata/opencode/generated/opencode.db"
	generatedOpenCodeStorage = "testdata/opencode/generated/1.1.65/storage"
	generatedOpenCodeProject = "21151455eb19852ef4a82ae306899dfe93d178eb"
	generatedOpenCodeSess1   = "ses_dc50e6704ffecp3NOwllouw4In"
	generatedOpenCodeSess2   = "ses_dc50e2d27ffe4jFJTIXKD8vJ90"
)

func generatedOpenCodeSession(id string) string {
	return generatedOpenCodeStorage + "/session/" + generatedOpenCodeProject + "/" + id + ".json"
}

func init() {
	// Counted with the sqlite3 CLI (SELECT … FROM message / part): two
	// sessions, 14 messages. ses_dc5104… (created first, though its id
	// sorts after the second's: session ids are descending) has user
	// messages msg_23aefb764, msg_23af0753c, msg_23af0ddcc; ses_dc50ee…
	// has msg_23af11b62, whose text keeps the quotes `opencode run` put
	// around the one argument. Tool parts: read | read, edit (status
	// error: oldString not found), edit | bash || write = 6; the second
	// edit changed add.sh, the write created CHANGELOG.md, the failed
	// edit touched nothing. Every last assistant message has finish
	// "stop", so even the open read gives all 4.
	agentCases = append(agentCases, agentCase{
		format: FormatOpenCode, file: generatedOpenCodeDB,
		exchanges: 4, open: 4,
		prompts:   []string{"Read README.md and tell me what this project does.", "Fix the bug in add.sh, it should add.", "Run the tests.", `"Write a CHANGELOG.md for the fix."`},
		toolCalls: 6,
		files:     []string{"/tmp/git-mem-fixture/opencode/project/add.sh", "/tmp/git-mem-fixture/opencode/project/CHANGELOG.md"},
		store:     true,
	})
	// 1.1.65's storage, one case per session file. Session 1: 11
	// message files, …1998b, …1ab70, …1c366 role user (3 prompts); tool
	// parts read | read, edit (error), edit | bash = 5; the second edit
	// changed add.sh. Session 2: one user message (…1d2f7, quoted as
	// above), one write of CHANGELOG.md. The last assistant messages have
	// finish "stop".
	agentCases = append(agentCases, agentCase{
		format: FormatOpenCode, file: generatedOpenCodeSession(generatedOpenCodeSess1),
		exchanges: 3, open: 3,
		prompts:   []string{"Read README.md and tell me what this project does.", "Fix the bug in add.sh, it should add.", "Run the tests."},
		toolCalls: 5,
		files:     []string{"/tmp/git-mem-fixture/opencode/project/add.sh"},
		store:     true,
	}, agentCase{
		format: FormatOpenCode, file: generatedOpenCodeSession(generatedOpenCodeSess2),
		exchanges: 1, open: 1,
		prompts:   []string{`"Write a CHANGELOG.md for the fix."`},
		toolCalls: 1,
		files:     []string{"/tmp/git-mem-fixture/opencode/project/CHANGELOG.md"},
		store:     true,
	})
}

// copyOpenCodeDB copies the generated database to dir/opencode/opencode.db.
func copyOpenCodeDB(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(generatedOpenCodeDB)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "opencode", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func execAll(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestGeneratedOpenCodeGrowth: the real database cut back to its first n
// messages (in the order OpenCode wrote them) gives only exchanges of the
// full read, byte for byte, and every exchange once the last is there.
func TestGeneratedOpenCodeGrowth(t *testing.T) {
	full, err := ReadOpenCode(generatedOpenCodeDB, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string][]byte{}
	for _, ex := range full.Exchanges {
		byID[ex.ID] = ex.Canonical()
	}
	src, err := sql.Open("sqlite", generatedOpenCodeDB+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	rows, err := src.Query(`SELECT id FROM message ORDER BY time_created, id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	src.Close()
	if len(ids) != 14 {
		t.Fatalf("%d messages, want 14", len(ids))
	}
	stored := map[string]bool{}
	for n := 0; n <= len(ids); n++ {
		p := copyOpenCodeDB(t, t.TempDir())
		db, err := sql.Open("sqlite", p)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids[n:] {
			execAll(t, db, `DELETE FROM part WHERE message_id = '`+id+`'`, `DELETE FROM message WHERE id = '`+id+`'`)
		}
		db.Close()
		res, err := ReadOpenCode(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range res.Exchanges {
			if w, ok := byID[ex.ID]; !ok || !bytes.Equal(ex.Canonical(), w) {
				t.Errorf("%d messages: exchange %s is not the full read's", n, ex.ID)
			}
			stored[ex.ID] = true
		}
	}
	if len(stored) != 4 {
		t.Errorf("growing reads stored %d exchanges, want 4", len(stored))
	}
}

// TestGeneratedOpenCodeCorrupt: a part whose data is not JSON is reported
// by its id; the rest of the session is read.
func TestGeneratedOpenCodeCorrupt(t *testing.T) {
	p := copyOpenCodeDB(t, t.TempDir())
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	// The edit of add.sh that worked.
	execAll(t, db, `UPDATE part SET data = '{oops' WHERE id = 'prt_23af0b6b4001vWwDZ7a93eigyG'`)
	db.Close()
	res, err := ReadOpenCode(p, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Error(), p+": part prt_23af0b6b4001vWwDZ7a93eigyG: not JSON") {
		t.Fatalf("problems %v", res.Problems)
	}
	if len(res.Exchanges) != 4 || countTools(res.Exchanges) != 5 {
		t.Errorf("%d exchanges, %d tool calls; want 4 and 5", len(res.Exchanges), countTools(res.Exchanges))
	}
}

// TestGeneratedOpenCodeLive: OpenCode keeps opencode.db in WAL mode and
// exits without a checkpoint, so what it wrote last is only in
// opencode.db-wal. A read while it runs (a connection holds the WAL open
// here) sees those rows and leaves the database file as it was.
func TestGeneratedOpenCodeLive(t *testing.T) {
	p := copyOpenCodeDB(t, t.TempDir())
	w, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	execAll(t, w, `PRAGMA journal_mode = WAL`, `PRAGMA wal_autocheckpoint = 0`,
		`UPDATE part SET data = json_set(data, '$.text', 'Run the tests, in the WAL.') WHERE id = 'prt_23af0ddd10017qasZK1XiVes8Z'`)
	if _, err := os.Stat(p + "-wal"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p)
	res, err := ReadOpenCode(p, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 4 || res.Exchanges[2].UserText() != "Run the tests, in the WAL." {
		t.Fatalf("%d exchanges %q: the row in the WAL was not read", len(res.Exchanges), prompts(res.Exchanges))
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Error("reading changed the database file")
	}
	// The hook finds the session there too.
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Dir(filepath.Dir(p)))
	if got, err := OpenCodeSessionStore(home, "ses_dc50ee56bffe2fvg6vzCqwJ08o"); err != nil || got != p {
		t.Errorf("OpenCodeSessionStore = %q, %v", got, err)
	}
}

// TestGeneratedOpenCodeStorageGrowth: 1.1.65's storage with only its first
// n message files (and their parts) gives only exchanges of the full
// read, byte for byte; both stores give the same exchanges as 1.18.33's
// database would for its own ids (same shape: prompts, tools, files).
func TestGeneratedOpenCodeStorageGrowth(t *testing.T) {
	sess := generatedOpenCodeSession(generatedOpenCodeSess1)
	full, err := ReadOpenCodeStorage(sess, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string][]byte{}
	for _, ex := range full.Exchanges {
		byID[ex.ID] = ex.Canonical()
	}
	msgs, _ := filepath.Glob(filepath.Join(generatedOpenCodeStorage, "message", generatedOpenCodeSess1, "*.json"))
	if len(msgs) != 11 {
		t.Fatalf("%d message files, want 11", len(msgs))
	}
	copyFile := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stored := map[string]bool{}
	for n := 0; n <= len(msgs); n++ {
		root := filepath.Join(t.TempDir(), "storage")
		rel := func(p string) string {
			r, _ := filepath.Rel(generatedOpenCodeStorage, p)
			return filepath.Join(root, r)
		}
		copyFile(sess, rel(sess))
		for _, m := range msgs[:n] {
			copyFile(m, rel(m))
			parts, _ := filepath.Glob(filepath.Join(generatedOpenCodeStorage, "part", strings.TrimSuffix(filepath.Base(m), ".json"), "*.json"))
			for _, p := range parts {
				copyFile(p, rel(p))
			}
		}
		res, err := ReadOpenCodeStorage(rel(sess), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range res.Exchanges {
			if w, ok := byID[ex.ID]; !ok || !bytes.Equal(ex.Canonical(), w) {
				t.Errorf("%d messages: exchange %s is not the full read's", n, ex.ID)
			}
			stored[ex.ID] = true
		}
	}
	if len(stored) != 3 {
		t.Errorf("growing reads stored %d exchanges, want 3", len(stored))
	}
	// The two versions wrote the same session alike.
	db, err := ReadOpenCode(generatedOpenCodeDB, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, ex := range full.Exchanges {
		d := db.Exchanges[i]
		if ex.UserText() != d.UserText() || len(ex.Turns) != len(d.Turns) || strings.Join(FilesTouched(ex), ",") != strings.Join(FilesTouched(d), ",") {
			t.Errorf("exchange %d: storage %q (%d turns), database %q (%d turns)", i, ex.UserText(), len(ex.Turns), d.UserText(), len(d.Turns))
		}
	}
}

// TestGeneratedOpenCodeStorageCorrupt: a message file cut off is reported
// at its line and left out with its parts; the other messages are read.
func TestGeneratedOpenCodeStorageCorrupt(t *testing.T) {
	root := filepath.Join(t.TempDir(), "storage")
	err := filepath.WalkDir(generatedOpenCodeStorage, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		r, _ := filepath.Rel(generatedOpenCodeStorage, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, r)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, r), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The user message of "Run the tests.", cut after its 4th line.
	bad := filepath.Join(root, "message", generatedOpenCodeSess1, "msg_23af1c366001JrKFM0VuC9hpAq.json")
	b, _ := os.ReadFile(bad)
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(bad, []byte(strings.Join(lines[:4], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	sess := filepath.Join(root, "session", generatedOpenCodeProject, generatedOpenCodeSess1+".json")
	res, err := ReadOpenCodeStorage(sess, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || !strings.HasPrefix(res.Problems[0].Error(), bad+":") {
		t.Fatalf("problems %v", res.Problems)
	}
	if got := prompts(res.Exchanges); len(got) != 2 || got[1] != "Fix the bug in add.sh, it should add." {
		t.Errorf("prompts %q", got)
	}
}

// TestGeneratedOpenCodeTurns: what the real files hold beyond counts, in
// both stores: the model's reasoning is an assistant turn marked thinking,
// and the failed edit is a tool turn marked is_error with OpenCode's error.
func TestGeneratedOpenCodeTurns(t *testing.T) {
	db, err := ReadOpenCode(generatedOpenCodeDB, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ReadOpenCodeStorage(generatedOpenCodeSession(generatedOpenCodeSess1), Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, exs := range map[string][]*exchange.Exchange{"database": db.Exchanges, "storage": st.Exchanges} {
		if len(exs) < 2 {
			t.Fatalf("%s: %d exchanges", name, len(exs))
		}
		thinking := false
		for _, tu := range exs[0].Turns {
			if tu.Role == exchange.RoleAssistant && tu.Extra["thinking"] == true && strings.HasPrefix(tu.Text, "The user wants a summary") {
				thinking = true
			}
		}
		var failed []string
		for _, tu := range exs[1].Turns {
			if tu.Role == exchange.RoleTool && tu.Extra["is_error"] == true {
				failed = append(failed, tu.Name+": "+tu.Text)
			}
		}
		if !thinking || len(failed) != 1 || !strings.HasPrefix(failed[0], "edit: ") || !strings.Contains(failed[0], "Could not find oldString") {
			t.Errorf("%s: thinking %v, failed tools %q", name, thinking, failed)
		}
	}
}
