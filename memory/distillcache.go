package memory

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitmem/git-mem/exchange"
)

// DistillCacheDir holds the LLM distiller's answers, one JSON file per
// exchange (distill.OpenAI): the request in each file is the whole
// exchange, so a forgotten exchange's entry is a copy of what was
// forgotten.
func (m *Memory) DistillCacheDir() string {
	return filepath.Join(m.Repo.MemDir(), "cache", "distill")
}

// forgottenDistillEntries lists the distiller cache's files whose exchange a
// tombstone names. A file whose exchange cannot be read is not listed (a
// temporary file of a write in progress, or not an entry).
func (m *Memory) forgottenDistillEntries() ([]string, error) {
	des, err := os.ReadDir(m.DistillCacheDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if tip, err := m.Repo.TombstoneTip(); err != nil || tip.IsZero() {
		return nil, err
	}
	var files, paths []string
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		f := filepath.Join(m.DistillCacheDir(), name)
		if id, ok := distillEntryExchange(f); ok {
			files, paths = append(files, f), append(paths, exchange.BlobPath(id))
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	dead, err := m.Repo.Tombstoned(paths)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, d := range dead {
		if d {
			out = append(out, files[i])
		}
	}
	return out, nil
}

// distillEntryExchange reads an entry's "exchange" field, which comes
// before its requests: the decoder stops there, without reading the rest
// of a file that holds a whole exchange.
func distillEntryExchange(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 4096))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "", false
		}
		if k == "exchange" {
			var id string
			if dec.Decode(&id) != nil || id == "" {
				return "", false
			}
			return id, true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return "", false
		}
	}
	return "", false
}

// purgeDistillCache removes the distiller's cached answers for forgotten
// exchanges, after a forget or a sync that learned tombstones: they held
// the exchange's text (TestForgetPurgesDistillCache). Removing one is safe
// beside any writer: an entry only saves a call to the model, and an add
// never stores a tombstoned exchange, so none is asked for again.
func (m *Memory) purgeDistillCache() (int, error) {
	files, err := m.forgottenDistillEntries()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return n, err
		}
		n++
	}
	return n, nil
}
