package hooks

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// OpenCode before its SQLite database kept the same records as JSON files
// under $XDG_DATA_HOME/opencode/storage/ (packages/opencode/src/storage/
// storage.ts: a key ["session", projectID, id] is the file
// storage/session/<projectID>/<id>.json): the session {id, directory,
// title, time}, its messages storage/message/<sessionID>/<messageID>.json
// and each message's parts storage/part/<messageID>/<partID>.json, with
// the fields the database's data columns hold. Ids sort in creation order.
// Exchange ids are the database's, so a session read from both stores is
// stored once.

// ReadOpenCodeStorage reads one session of OpenCode's JSON storage, given
// its session file.
func ReadOpenCodeStorage(path string, opt Options) (Result, error) {
	var res Result
	data, err := readDoc(path)
	if err != nil {
		return res, fmt.Errorf("read opencode session %s: %w", path, err)
	}
	var sess struct {
		ID        string `json:"id"`
		Directory string `json:"directory"`
	}
	if err := json.Unmarshal(data, &sess); err != nil {
		res.Problems = append(res.Problems, docProblem(path, data, err))
		return res, nil
	}
	if sess.ID == "" {
		sess.ID = strings.TrimSuffix(filepath.Base(path), ".json")
	}
	if opt.OnlySession != "" && sess.ID != opt.OnlySession {
		return res, nil
	}
	storage := filepath.Dir(filepath.Dir(filepath.Dir(path)))
	msgs := openCodeFiles(filepath.Join(storage, "message", sess.ID), &res.Problems)
	parts := map[string][]ocRow{}
	for _, m := range msgs {
		parts[m.id] = openCodeFiles(filepath.Join(storage, "part", m.id), &res.Problems)
	}
	exs, probs := openCodeExchanges(path, sess.ID, sess.Directory, msgs, parts, opt)
	res.Exchanges, res.Problems = exs, append(res.Problems, probs...)
	res.Cwd = sess.Directory
	if opt.Cwd != "" {
		res.Cwd = opt.Cwd
	}
	return res, nil
}

// openCodeFiles reads the records of one storage folder in id order; a
// file that is not JSON is reported at its line and left out.
func openCodeFiles(dir string, probs *[]Problem) []ocRow {
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(names)
	var out []ocRow
	for _, n := range names {
		b, err := readDoc(n)
		if err != nil {
			*probs = append(*probs, Problem{n, 0, err.Error() + "; skipped"})
			continue
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			*probs = append(*probs, docProblem(n, b, err))
			continue
		}
		out = append(out, ocRow{id: strings.TrimSuffix(filepath.Base(n), ".json"), data: b, where: n})
	}
	return out
}

// isOpenCodeStorageSession matches storage/session/<projectID>/<id>.json.
func isOpenCodeStorageSession(p string, d fs.DirEntry) bool {
	if !strings.HasSuffix(d.Name(), ".json") {
		return false
	}
	proj := filepath.Dir(p)
	return filepath.Base(filepath.Dir(proj)) == "session" && filepath.Base(filepath.Dir(filepath.Dir(proj))) == "storage"
}

// readOpenCodeAny reads what OpenCode's import finds: its database or a
// session of its older JSON storage.
func readOpenCodeAny(path string, opt Options) (Result, error) {
	if strings.HasSuffix(path, ".json") {
		return ReadOpenCodeStorage(path, opt)
	}
	return ReadOpenCode(path, opt)
}

// openCodeStorageSession finds a session's file in OpenCode's JSON storage.
func openCodeStorageSession(home, session string) string {
	for _, dir := range OpenCodeDataDirs(home) {
		m, _ := filepath.Glob(filepath.Join(dir, "storage", "session", "*", session+".json"))
		if len(m) > 0 {
			if _, err := os.Stat(m[0]); err == nil {
				return m[0]
			}
		}
	}
	return ""
}
