package exchange

import (
	"crypto/sha256"
	"encoding/hex"
)

// ContentID is the id of an exchange that brings none of its own: a hash of
// its canonical JSON.
func ContentID(canonical []byte) string {
	s := sha256.Sum256(canonical)
	return "sha256-" + hex.EncodeToString(s[:16])
}

// Key returns the id an exchange is stored under: its own id, else the
// content hash of its canonical JSON.
func (ex *Exchange) Key() string {
	if ex.ID != "" {
		return ex.ID
	}
	return ContentID(ex.Canonical())
}

// BlobPath is where an exchange's verbatim blob lives in the memory tree. It is
// derived from a hash of the id, never the raw id (ids may hold "/" or ".."),
// and sharded three levels deep with 16 entries per level so that a commit
// rewrites only a few small trees.
func BlobPath(id string) string {
	s := sha256.Sum256([]byte(id))
	h := hex.EncodeToString(s[:])
	return "ex/" + h[0:1] + "/" + h[1:2] + "/" + h[2:3] + "/" + h + ".json"
}
