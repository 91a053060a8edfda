package hooks

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type cursorFixture struct {
	Rows []struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	} `json:"cursorDiskKV"`
	Workspace struct {
		Folder       string   `json:"folder"`
		AllComposers []string `json:"allComposers"`
	} `json:"workspace"`
}

func loadCursorFixture(t testing.TB) cursorFixture {
	t.Helper()
	b, err := os.ReadFile("testdata/cursor/state.vscdb.json")
	if err != nil {
		t.Fatal(err)
	}
	var f cursorFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// writeCursorDB builds a Cursor user folder under dir: the global
// state.vscdb with the given rows and one workspace naming its folder.
func writeCursorDB(t testing.TB, dir string, f cursorFixture, edit func(key string, v []byte) []byte) string {
	t.Helper()
	global := filepath.Join(dir, "User", "globalStorage", "state.vscdb")
	mk := func(path, table string, rows map[string][]byte) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(path)
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TABLE ` + table + ` (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`); err != nil {
			t.Fatal(err)
		}
		for k, v := range rows {
			if _, err := db.Exec(`INSERT INTO `+table+` VALUES (?, ?)`, k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows := map[string][]byte{}
	for _, r := range f.Rows {
		v := []byte(r.Value)
		if edit != nil {
			v = edit(r.Key, v)
		}
		if v != nil {
			rows[r.Key] = v
		}
	}
	mk(global, "cursorDiskKV", rows)
	ws := filepath.Join(dir, "User", "workspaceStorage", "abc123")
	var all []map[string]string
	for _, c := range f.Workspace.AllComposers {
		all = append(all, map[string]string{"composerId": c})
	}
	data, _ := json.Marshal(map[string]any{"allComposers": all})
	mk(filepath.Join(ws, "state.vscdb"), "ItemTable", map[string][]byte{"composer.composerData": data})
	wj, _ := json.Marshal(map[string]string{"folder": f.Workspace.Folder})
	if err := os.WriteFile(filepath.Join(ws, "workspace.json"), wj, 0o644); err != nil {
		t.Fatal(err)
	}
	return global
}

// TestCursor: counts read by hand from testdata/cursor/state.vscdb.json —
// composer 7d3f… (headers u1 a1 a2 a3 u2 a4 a5: prompts u1, u2; calls
// read_file, edit_file | run_terminal_cmd (rejected)) and composer 0a1b…
// (inline conversation: prompt b1; call search_replace): 3 exchanges, 3
// prompts, 4 calls, files src/Login.tsx and src/api.ts. Both chats were
// last updated long ago, so they are closed.
func TestCursor(t *testing.T) {
	f := loadCursorFixture(t)
	dir := t.TempDir()
	db := writeCursorDB(t, dir, f, nil)
	before, _ := os.ReadFile(db)
	if got, err := Detect(db); err != nil || got != FormatCursor {
		t.Errorf("Detect = %q, %v", got, err)
	}
	res, err := ReadFile(db, FormatCursor, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 {
		t.Errorf("problems %v", res.Problems)
	}
	mustValid(t, res.Exchanges)
	want := []string{"rename fetchUser to loadUser", "The login form submits twice", "add a test that Enter submits once"}
	if got := prompts(res.Exchanges); len(got) != 3 {
		t.Fatalf("prompts %q", got)
	}
	for i, w := range want {
		if !strings.HasPrefix(res.Exchanges[i].UserText(), w) {
			t.Errorf("prompt %d = %q, want %q", i, res.Exchanges[i].UserText(), w)
		}
	}
	if n := countTools(res.Exchanges); n != 4 {
		t.Errorf("tool calls %d, want 4", n)
	}
	var files []string
	for _, ex := range res.Exchanges {
		files = append(files, FilesTouched(ex)...)
	}
	if !reflect.DeepEqual(files, []string{"src/api.ts", "src/Login.tsx"}) {
		t.Errorf("files %q", files)
	}
	if p := res.Exchanges[1].Project; p != "shop-web" {
		t.Errorf("project %q (from the workspace database)", p)
	}
	if p := res.Exchanges[0].Project; p != "" {
		t.Errorf("a chat of no known workspace got project %q", p)
	}
	// Read only: the database is as it was, no journal was made.
	after, _ := os.ReadFile(db)
	if !bytes.Equal(before, after) {
		t.Error("reading changed the database")
	}
	for _, suffix := range []string{"-wal", "-journal", "-shm"} {
		if _, err := os.Stat(db + suffix); err == nil {
			t.Errorf("reading left %s", db+suffix)
		}
	}
}

// TestCursorLocked: the editor holds the database locked while writing;
// an immutable read still works and sees the committed chats.
func TestCursorLocked(t *testing.T) {
	f := loadCursorFixture(t)
	db := writeCursorDB(t, t.TempDir(), f, nil)
	w, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	conn, err := w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// An exclusive lock: an ordinary reader now gets "database is locked".
	if _, err := conn.ExecContext(ctx, `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `ROLLBACK`)
	if _, err := conn.ExecContext(ctx, `INSERT INTO cursorDiskKV VALUES ('composerData:zzz', '{}')`); err != nil {
		t.Fatal(err)
	}
	plain, _ := sql.Open("sqlite", db+"?_pragma=busy_timeout(0)")
	defer plain.Close()
	var n int
	if err := plain.QueryRow(`SELECT count(*) FROM cursorDiskKV`).Scan(&n); err == nil {
		t.Fatal("the lock was not taken: a plain reader got through, so this test would prove nothing")
	}
	res, err := ReadCursor(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 3 {
		t.Errorf("locked database: %d exchanges, want 3", len(res.Exchanges))
	}
}

// TestCursorGrowth: a chat whose bubbles arrive one by one (headers cut to
// n) only ever gives exchanges of the full read, byte for byte, and a bad
// bubble is reported by key while the other chats are read.
func TestCursorGrowth(t *testing.T) {
	f := loadCursorFixture(t)
	full, err := ReadCursor(writeCursorDB(t, t.TempDir(), f, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string][]byte{}
	for _, ex := range full.Exchanges {
		byID[ex.ID] = ex.Canonical()
	}
	for n := 0; n <= 7; n++ {
		db := writeCursorDB(t, t.TempDir(), f, func(key string, v []byte) []byte {
			if !strings.HasPrefix(key, "composerData:7d3f") {
				return v
			}
			var c map[string]any
			_ = json.Unmarshal(v, &c)
			c["fullConversationHeadersOnly"] = c["fullConversationHeadersOnly"].([]any)[:n]
			c["lastUpdatedAt"] = 32503680000000 // still being written (year 3000)
			b, _ := json.Marshal(c)
			return b
		})
		res, err := ReadCursor(db, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range res.Exchanges {
			if want, ok := byID[ex.ID]; !ok || !bytes.Equal(ex.Canonical(), want) {
				t.Errorf("headers %d: exchange %s is not the full read's", n, ex.ID)
			}
		}
		if n == 7 && len(res.Exchanges) != 2 {
			t.Errorf("live chat: %d exchanges, want 2 (its last one open)", len(res.Exchanges))
		}
	}
	db := writeCursorDB(t, t.TempDir(), f, func(key string, v []byte) []byte {
		if strings.HasSuffix(key, ":a2") {
			return []byte("{not json")
		}
		return v
	})
	res, err := ReadCursor(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Error(), db+": key bubbleId:7d3f1a2b-0c4e-4d5f-8a9b-1c2d3e4f5a6b:a2: not JSON") {
		t.Errorf("problems %v", res.Problems)
	}
	if len(res.Exchanges) != 3 {
		t.Errorf("%d exchanges next to a bad bubble, want 3", len(res.Exchanges))
	}
}

func FuzzCursorBubble(f *testing.F) {
	fx := loadCursorFixture(f)
	for _, r := range fx.Rows {
		f.Add([]byte(r.Value))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b cuBubble
		if json.Unmarshal(data, &b) != nil {
			return
		}
		c := cuComposer{ComposerID: "c", CreatedAt: 1}
		u := cuBubble{BubbleID: "u", Type: 1, Text: "prompt"}
		open := cursorExchanges(c, []cuBubble{u, b}, Options{})
		ended := cursorExchanges(c, []cuBubble{u, b}, Options{SessionEnded: true})
		if len(open) > len(ended) {
			t.Fatal("open read returned more than ended")
		}
		for _, ex := range ended {
			if err := ex.Validate(); err != nil {
				t.Fatal(err)
			}
			_ = ex.Canonical()
			_ = FilesTouched(ex)
		}
	})
}
