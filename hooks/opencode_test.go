package hooks

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeOpenCodeDB builds opencode.db under dir from the fixture rows, the
// first nmsg messages only (-1: all).
func writeOpenCodeDB(t *testing.T, dir string, nmsg int, edit func(table, id string, data []byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile("testdata/opencode/opencode.db.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx map[string][]map[string]any
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "opencode", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT, title TEXT)`,
		`CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT)`,
		`CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	data := func(table string, r map[string]any) []byte {
		d, _ := json.Marshal(r["data"])
		if edit != nil {
			d = edit(table, r["id"].(string), d)
		}
		return d
	}
	for _, r := range fx["session"] {
		db.Exec(`INSERT INTO session VALUES (?, ?, ?)`, r["id"], r["directory"], r["title"])
	}
	kept := map[string]bool{}
	for i, r := range fx["message"] {
		if nmsg >= 0 && i >= nmsg {
			break
		}
		kept[r["id"].(string)] = true
		db.Exec(`INSERT INTO message VALUES (?, ?, ?, ?)`, r["id"], r["session_id"], r["time_created"], data("message", r))
	}
	for _, r := range fx["part"] {
		if kept[r["message_id"].(string)] {
			db.Exec(`INSERT INTO part VALUES (?, ?, ?, ?)`, r["id"], r["message_id"], r["session_id"], data("part", r))
		}
	}
	return path
}

// TestOpenCode: testdata/opencode/opencode.db.json has user messages 001,
// 004, 007 (3 prompts; 001's synthetic Read note is context, not prompt);
// tool parts read, edit | write (error) = 3; only the edit of src/todos.ts
// touched a file. 007 has no reply: open until the session ends.
func TestOpenCode(t *testing.T) {
	db := writeOpenCodeDB(t, t.TempDir(), -1, nil)
	before, _ := os.ReadFile(db)
	if f, err := Detect(db); err != nil || f != FormatOpenCode {
		t.Errorf("Detect = %q, %v", f, err)
	}
	res, err := ReadFile(db, FormatOpenCode, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, res.Exchanges)
	want := []string{"add pagination to GET /todos", "now document it in docs/api.md", "and bump the version"}
	if got := prompts(res.Exchanges); !reflect.DeepEqual(got, want) || len(res.Problems) != 0 {
		t.Fatalf("prompts %q problems %v", got, res.Problems)
	}
	if n := countTools(res.Exchanges); n != 3 {
		t.Errorf("tool calls %d, want 3", n)
	}
	var files []string
	for _, ex := range res.Exchanges {
		files = append(files, FilesTouched(ex)...)
	}
	if !reflect.DeepEqual(files, []string{"src/todos.ts"}) || res.Exchanges[0].Project != "todo-api" {
		t.Errorf("files %q project %q", files, res.Exchanges[0].Project)
	}
	open, _ := ReadFile(db, FormatOpenCode, Options{})
	if len(open.Exchanges) != 2 {
		t.Errorf("open session: %d exchanges, want 2", len(open.Exchanges))
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Error("reading changed the database")
	}
	// Growth: the session a message at a time gives only exchanges of
	// the full read, byte for byte.
	byID := map[string][]byte{}
	for _, ex := range res.Exchanges {
		byID[ex.ID] = ex.Canonical()
	}
	for n := 0; n <= 7; n++ {
		r, err := ReadOpenCode(writeOpenCodeDB(t, t.TempDir(), n, nil), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range r.Exchanges {
			if w, ok := byID[ex.ID]; !ok || !bytes.Equal(ex.Canonical(), w) {
				t.Errorf("%d messages: exchange %s is not the full read's", n, ex.ID)
			}
		}
	}
	// A part that is not JSON is reported by id; the rest is read.
	bad := writeOpenCodeDB(t, t.TempDir(), -1, func(table, id string, d []byte) []byte {
		if id == "prt_008" {
			return []byte("{oops")
		}
		return d
	})
	r, err := ReadOpenCode(bad, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Error(), bad+": part prt_008: not JSON") || len(r.Exchanges) != 3 {
		t.Errorf("problems %v, %d exchanges", r.Problems, len(r.Exchanges))
	}
}

// FuzzOpenCodePart: any JSON in one part's data column gives valid
// exchanges and never a panic.
func FuzzOpenCodePart(f *testing.F) {
	f.Add([]byte(`{"type":"tool","tool":"edit","callID":"c","state":{"status":"completed","input":{"filePath":"a"},"output":"ok"}}`))
	f.Add([]byte(`{"type":"text","text":"hi","synthetic":true}`))
	f.Add([]byte(`{"type":"reasoning","text":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		db := writeOpenCodeDB(t, t.TempDir(), -1, func(table, id string, d []byte) []byte {
			if id == "prt_005" || id == "prt_009" {
				return data
			}
			return d
		})
		for _, ended := range []bool{false, true} {
			res, err := ReadOpenCode(db, Options{SessionEnded: ended})
			if err != nil {
				t.Fatal(err)
			}
			for _, ex := range res.Exchanges {
				if err := ex.Validate(); err != nil {
					t.Fatal(err)
				}
				_ = ex.Canonical()
				_ = FilesTouched(ex)
			}
		}
	})
}

// TestOpenCodeStorage: the same session in OpenCode's older JSON storage
// gives the database's exchanges, byte for byte (same ids: a session in
// both stores is stored once); a message file that is not JSON is
// reported at its line and the rest is read; with its last message files
// gone (the session earlier) only exchanges of the full read come back.
func TestOpenCodeStorage(t *testing.T) {
	dbRes, err := ReadOpenCode(writeOpenCodeDB(t, t.TempDir(), -1, nil), Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	sess := "testdata/opencode/storage/session/prj_9f8e7d6c/ses_4a1b2c3d4e5fXyZ.json"
	if f, err := Detect(sess); err != nil || f != FormatOpenCode {
		t.Errorf("Detect = %q, %v", f, err)
	}
	res, err := ReadFile(sess, FormatOpenCode, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 || len(res.Exchanges) != len(dbRes.Exchanges) || len(res.Exchanges) == 0 {
		t.Fatalf("storage: %d exchanges %v; database: %d", len(res.Exchanges), res.Problems, len(dbRes.Exchanges))
	}
	for i := range res.Exchanges {
		if !bytes.Equal(res.Exchanges[i].Canonical(), dbRes.Exchanges[i].Canonical()) {
			t.Errorf("exchange %d differs:\n%s\n%s", i, res.Exchanges[i].Canonical(), dbRes.Exchanges[i].Canonical())
		}
	}
	if res.Cwd != "/nonexistent/todo-api" {
		t.Errorf("cwd %q", res.Cwd)
	}

	// A copy to break and shorten.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/opencode/storage")); err != nil {
		t.Fatal(err)
	}
	copySess := filepath.Join(dir, "session", "prj_9f8e7d6c", "ses_4a1b2c3d4e5fXyZ.json")
	msgs, _ := filepath.Glob(filepath.Join(dir, "message", "ses_4a1b2c3d4e5fXyZ", "*.json"))
	last := msgs[len(msgs)-1]
	os.Remove(last)
	short, err := ReadOpenCodeStorage(copySess, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(short.Exchanges) == 0 || len(short.Exchanges) >= len(res.Exchanges) {
		t.Fatalf("earlier session: %d exchanges, full %d", len(short.Exchanges), len(res.Exchanges))
	}
	for i, ex := range short.Exchanges {
		if !bytes.Equal(ex.Canonical(), res.Exchanges[i].Canonical()) {
			t.Errorf("earlier read's %s is not the full read's", ex.ID)
		}
	}
	if err := os.WriteFile(msgs[1], []byte("{\n  \"id\": \"msg_002\",\n  oops\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken, err := ReadOpenCodeStorage(copySess, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(broken.Problems) != 1 || broken.Problems[0].File != msgs[1] || broken.Problems[0].Line != 3 || len(broken.Exchanges) == 0 {
		t.Errorf("problems %v, %d exchanges", broken.Problems, len(broken.Exchanges))
	}
}
