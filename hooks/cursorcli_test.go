package hooks

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const cursorCLIFixture = "testdata/cursor/chats/f4520d91ce8bf93fd444e6083fe96312/7b9c2e4f-1a3d-4c5e-8f60-718293a4b5c6/store.db.json"

type cursorCLIFix struct {
	Workspace string            `json:"workspace"`
	Meta      map[string]any    `json:"meta"`
	Nested    [2]int            `json:"nested"`
	Messages  []json.RawMessage `json:"messages"`
}

func loadCursorCLIFixture(t testing.TB) cursorCLIFix {
	t.Helper()
	b, err := os.ReadFile(cursorCLIFixture)
	if err != nil {
		t.Fatal(err)
	}
	var f cursorCLIFix
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// cliBlobs returns the blobs of a chat of msgs and its root id: each
// message a JSON blob, msgs[nested[0]..nested[1]] behind a linking blob of
// their own, the root linking the rest in order (with a varint and a
// string field a reader must skip).
func cliBlobs(msgs [][]byte, nested [2]int) (map[string][]byte, string) {
	blobs := map[string][]byte{}
	put := func(b []byte) []byte {
		sum := sha256.Sum256(b)
		blobs[hex.EncodeToString(sum[:])] = b
		return sum[:]
	}
	ref := func(id []byte) []byte { return append([]byte{0x0A, 0x20}, id...) }
	var root, inner []byte
	root = append(root, 0x10, 0x03) // field 2, varint 3
	for i, m := range msgs {
		id := put(m)
		if i >= nested[0] && i <= nested[1] {
			inner = append(inner, ref(id)...)
			if i == nested[1] || i == len(msgs)-1 {
				root = append(root, ref(put(inner))...)
			}
			continue
		}
		root = append(root, ref(id)...)
	}
	root = append(root, 0x1A, 0x02, '{', '}') // field 3, a string
	sum := sha256.Sum256(root)
	rootID := hex.EncodeToString(sum[:])
	blobs[rootID] = root
	return blobs, rootID
}

// writeCursorCLIDB writes a store.db at path holding the fixture's first n
// messages (edit may change a message's bytes), dated mtime.
func writeCursorCLIDB(t testing.TB, path string, f cursorCLIFix, n int, edit func(i int, b []byte) []byte, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	var msgs [][]byte
	for i, m := range f.Messages[:n] {
		var c bytes.Buffer
		if err := json.Compact(&c, m); err != nil {
			t.Fatal(err)
		}
		b := c.Bytes()
		if edit != nil {
			b = edit(i, b)
		}
		msgs = append(msgs, b)
	}
	blobs, root := cliBlobs(msgs, f.Nested)
	meta := map[string]any{}
	for k, v := range f.Meta {
		meta[k] = v
	}
	meta["latestRootBlobId"] = root
	mj, _ := json.Marshal(meta)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)`, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for id, b := range blobs {
		if _, err := db.Exec(`INSERT INTO blobs VALUES (?, ?)`, id, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO meta VALUES ('0', ?)`, hex.EncodeToString(mj)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

var idleTime = time.Now().Add(-time.Hour)

func cliStorePath(home string) string {
	return filepath.Join(home, ".cursor", "chats", "f4520d91ce8bf93fd444e6083fe96312", "7b9c2e4f-1a3d-4c5e-8f60-718293a4b5c6", "store.db")
}

// TestCursorCLI: the counts read by hand from store.db.json. Messages 2,
// 8 and 14 hold a <user_query> (1 is the CLI's <user_info> context, 0 the
// system prompt): 3 prompts, 8's after its git-mem-context block. Calls:
// Read, StrReplace (3, 5) | Shell, Write (9, 11; the Write's result 12 is
// an error) | Delete (15) = 5. Files touched: StrReplace's and Delete's
// path; the failed Write touched nothing.
func TestCursorCLI(t *testing.T) {
	f := loadCursorCLIFixture(t)
	home := t.TempDir()
	p := cliStorePath(home)
	writeCursorCLIDB(t, p, f, len(f.Messages), nil, idleTime)
	if got, err := Detect(p); err != nil || got != FormatCursor {
		t.Errorf("Detect = %q, %v", got, err)
	}
	cases := []struct {
		name  string
		mtime time.Time
		opt   Options
		want  int
	}{
		{"ended", time.Now(), Options{SessionEnded: true}, 3},
		{"idle for an hour", idleTime, Options{}, 3},
		{"written just now", time.Now(), Options{}, 2},
		{"another chat named", idleTime, Options{OnlySession: "someone-else"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.Chtimes(p, c.mtime, c.mtime); err != nil {
				t.Fatal(err)
			}
			res, err := ReadFile(p, FormatCursor, c.opt)
			if err != nil || len(res.Problems) != 0 {
				t.Fatal(err, res.Problems)
			}
			if len(res.Exchanges) != c.want {
				t.Fatalf("got %d exchanges %q, want %d", len(res.Exchanges), prompts(res.Exchanges), c.want)
			}
		})
	}
	res, err := ReadCursorCLI(p, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	mustValidTime(t, res.Exchanges, true)
	wantPrompts := []string{"the list command prints notes twice", "run the tests", "then delete the old ascii helper"}
	if got := prompts(res.Exchanges); !reflect.DeepEqual(got, wantPrompts) {
		t.Errorf("prompts %q, want %q", got, wantPrompts)
	}
	for i, ex := range res.Exchanges {
		if want := "cursor:7b9c2e4f-1a3d-4c5e-8f60-718293a4b5c6/t" + string(rune('1'+i)); ex.ID != want {
			t.Errorf("id %s, want %s", ex.ID, want)
		}
		if strings.Contains(ex.Render(), "git-mem-context") {
			t.Errorf("%s keeps git mem's own context", ex.ID)
		}
	}
	if n := countTools(res.Exchanges); n != 5 {
		t.Errorf("got %d tool calls, want 5", n)
	}
	var files []string
	for _, ex := range res.Exchanges {
		files = append(files, FilesTouched(ex)...)
	}
	if want := []string{"/home/dev/src/notes-cli/src/list.ts", "/home/dev/src/notes-cli/src/ascii.ts"}; !reflect.DeepEqual(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
	// A tool result is kept with its call.
	if r := res.Exchanges[0].Render(); !strings.Contains(r, "out.push(n); out.push(n)") {
		t.Errorf("the Read's result is missing:\n%s", r)
	}
}

// TestCursorCLIGrowth: each turn the CLI writes a new root over a longer
// chat; every shorter chat gives only exchanges of the full one, byte for
// byte, and the full one adds exactly the new ones.
func TestCursorCLIGrowth(t *testing.T) {
	f := loadCursorCLIFixture(t)
	p := cliStorePath(t.TempDir())
	writeCursorCLIDB(t, p, f, len(f.Messages), nil, time.Now())
	full, err := ReadCursorCLI(p, Options{SessionEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string][]byte{}
	for _, ex := range full.Exchanges {
		byID[ex.ID] = ex.Canonical()
	}
	stored := map[string]bool{}
	for n := 0; n <= len(f.Messages); n++ {
		writeCursorCLIDB(t, p, f, n, nil, time.Now())
		res, err := ReadCursorCLI(p, Options{})
		if err != nil || len(res.Problems) != 0 {
			t.Fatal(n, err, res.Problems)
		}
		for _, ex := range res.Exchanges {
			want, ok := byID[ex.ID]
			if !ok || !bytes.Equal(ex.Canonical(), want) {
				t.Fatalf("%d messages: exchange %s is not the full read's", n, ex.ID)
			}
			stored[ex.ID] = true
		}
	}
	if len(stored) != len(full.Exchanges)-1 {
		t.Errorf("a live chat stored %d exchanges before its end, want %d", len(stored), len(full.Exchanges)-1)
	}
}

// TestCursorCLIWAL: a chat the running CLI holds — its last turn still in
// the WAL, a write transaction open — is read whole, and the CLI's files
// are left as they were.
func TestCursorCLIWAL(t *testing.T) {
	f := loadCursorCLIFixture(t)
	p := cliStorePath(t.TempDir())
	writeCursorCLIDB(t, p, f, 14, nil, idleTime)
	// The full chat's rows written through a WAL the CLI keeps open.
	full := filepath.Join(t.TempDir(), "full.db")
	writeCursorCLIDB(t, full, f, len(f.Messages), nil, idleTime)
	src, err := sql.Open("sqlite", full)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`PRAGMA journal_mode=WAL`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA wal_autocheckpoint=0`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`ATTACH DATABASE ? AS f`, full); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`INSERT OR IGNORE INTO main.blobs SELECT * FROM f.blobs`, `UPDATE main.meta SET value = (SELECT value FROM f.meta WHERE key = '0')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`DETACH DATABASE f`); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("the test meant the last turn to be in the WAL: %v", err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO meta VALUES ('lock', 'held')`); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, s := range []string{"", "-wal", "-shm"} {
		before[s], _ = os.ReadFile(p + s)
	}
	res, err := ReadCursorCLI(p, Options{SessionEnded: true})
	if err != nil || len(res.Problems) != 0 {
		t.Fatal(err, res.Problems)
	}
	if len(res.Exchanges) != 3 {
		t.Errorf("got %d exchanges, want the 3 of the chat with its WAL", len(res.Exchanges))
	}
	for s, b := range before {
		if now, _ := os.ReadFile(p + s); !bytes.Equal(now, b) {
			t.Errorf("store.db%s changed by the read", s)
		}
	}
}

// TestCursorCLIBad: a message blob that is not JSON, a missing blob and a
// root that is not protocol buffers are reported (the database has no
// lines: the file and the blob) and the rest of the chat is read.
func TestCursorCLIBad(t *testing.T) {
	f := loadCursorCLIFixture(t)
	cases := []struct {
		name string
		edit func(i int, b []byte) []byte
		msg  string
		want int
	}{
		{"message not JSON", func(i int, b []byte) []byte {
			if i == 10 {
				return append([]byte("{"), b[2:]...)
			}
			return b
		}, "not a message", 3},
		{"a linking blob cut short", func(i int, b []byte) []byte {
			if i == 16 {
				return []byte{0x0A, 0x20, 0x01}
			}
			return b
		}, "bad length", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := cliStorePath(t.TempDir())
			writeCursorCLIDB(t, p, f, len(f.Messages), c.edit, idleTime)
			res, err := ReadCursorCLI(p, Options{SessionEnded: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Msg, c.msg) || !strings.HasPrefix(res.Problems[0].Error(), p+": blob ") {
				t.Fatalf("problems %v, want one saying %q", res.Problems, c.msg)
			}
			if len(res.Exchanges) != c.want {
				t.Errorf("got %d exchanges, want %d", len(res.Exchanges), c.want)
			}
		})
	}
	t.Run("missing blob", func(t *testing.T) {
		p := cliStorePath(t.TempDir())
		writeCursorCLIDB(t, p, f, len(f.Messages), nil, idleTime)
		db, err := sql.Open("sqlite", p)
		if err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		json.Compact(&c, f.Messages[15])
		sum := sha256.Sum256(c.Bytes())
		if _, err := db.Exec(`DELETE FROM blobs WHERE id = ?`, hex.EncodeToString(sum[:])); err != nil {
			t.Fatal(err)
		}
		db.Close()
		res, err := ReadCursorCLI(p, Options{SessionEnded: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Msg, "missing") {
			t.Fatalf("problems %v", res.Problems)
		}
		// The Delete call is gone with its blob; its result has no call.
		if n := countTools(res.Exchanges); n != 4 || len(res.Exchanges) != 3 {
			t.Errorf("%d exchanges, %d calls; want 3 and 4", len(res.Exchanges), n)
		}
	})
	t.Run("not a store", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "store.db")
		if err := os.WriteFile(p, []byte("not sqlite at all, not at all"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadCursorCLI(p, Options{}); err == nil {
			t.Error("a file that is no database read without an error")
		}
	})
}

// TestCursorCLIProjectAndTranscript: the chat's folder is found from the
// projects/<slug> whose path hashes to its chats/<md5> folder, and the
// transcript of a chat a store.db holds is left to the store.
func TestCursorCLIProjectAndTranscript(t *testing.T) {
	f := loadCursorCLIFixture(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	ws := filepath.Join(home, "src", "notes-cli")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	slug := strings.ReplaceAll(strings.TrimPrefix(ws, "/"), "/", "-")
	tr := filepath.Join(home, ".cursor", "projects", slug, "agent-transcripts", "7b9c2e4f-1a3d-4c5e-8f60-718293a4b5c6.jsonl")
	if err := os.MkdirAll(filepath.Dir(tr), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tr, []byte(`{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nthe list command prints notes twice\n</user_query>"}]}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := cursorCLIWorkspaceHash(ws)
	p := filepath.Join(home, ".cursor", "chats", sum, "7b9c2e4f-1a3d-4c5e-8f60-718293a4b5c6", "store.db")
	writeCursorCLIDB(t, p, f, len(f.Messages), nil, idleTime)
	res, err := ReadCursorCLI(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cwd != ws || len(res.Exchanges) == 0 || res.Exchanges[0].Project != ProjectFromCwd(ws) {
		t.Errorf("cwd %q, want %q", res.Cwd, ws)
	}
	got, err := ReadCursorTranscript(tr, Options{SessionEnded: true})
	if err != nil || len(got.Exchanges) != 0 {
		t.Errorf("the transcript of a chat its store.db holds gave %d exchanges (%v)", len(got.Exchanges), err)
	}
}

// FuzzCursorCLIBlob fuzzes one message blob and the root's bytes.
func FuzzCursorCLIBlob(f *testing.F) {
	fx := loadCursorCLIFixture(f)
	for _, m := range fx.Messages {
		f.Add([]byte(m), []byte{0x0A, 0x20})
	}
	p := cliStorePath(filepath.Join(f.TempDir(), "fuzz"))
	f.Fuzz(func(t *testing.T, msg, root []byte) {
		writeCursorCLIDB(t, p, fx, len(fx.Messages), func(i int, b []byte) []byte {
			if i == 8 {
				return msg
			}
			return b
		}, idleTime)
		db, err := sql.Open("sqlite", p)
		if err != nil {
			t.Fatal(err)
		}
		// The root grows by the fuzzed bytes: links, other fields, junk.
		var mh string
		if err := db.QueryRow(`SELECT value FROM meta WHERE key = '0'`).Scan(&mh); err != nil {
			t.Fatal(err)
		}
		mj, _ := hex.DecodeString(mh)
		var meta map[string]any
		if err := json.Unmarshal(mj, &meta); err != nil {
			t.Fatal(err)
		}
		var data []byte
		if err := db.QueryRow(`SELECT data FROM blobs WHERE id = ?`, meta["latestRootBlobId"]).Scan(&data); err != nil {
			t.Fatal(err)
		}
		data = append(data, root...)
		sum := sha256.Sum256(data)
		meta["latestRootBlobId"] = hex.EncodeToString(sum[:])
		mj, _ = json.Marshal(meta)
		if _, err := db.Exec(`INSERT OR REPLACE INTO blobs VALUES (?, ?)`, meta["latestRootBlobId"], data); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`UPDATE meta SET value = ? WHERE key = '0'`, hex.EncodeToString(mj)); err != nil {
			t.Fatal(err)
		}
		db.Close()
		checkReader(t, p, func(opt Options) (Result, error) { return ReadCursorCLI(p, opt) })
	})
}
