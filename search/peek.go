package search

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// IndexedCommit returns the last commit the index in dir has caught up
// with, read from its manifest alone ("" when there is none or it cannot be
// read). A search whose memory has not moved since can then open the index
// read-only, which decodes lazily and leaves the writer's lock free.
func IndexedCommit(dir string) string {
	raw, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return ""
	}
	var m manifest
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	return m.LastCommit
}
