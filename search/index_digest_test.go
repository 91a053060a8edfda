package search

import (
	"hash/fnv"
	"testing"
)

// TestDocDigestIsFNV keeps the digest what indexes and card caches already
// on disk hold: FNV-64a of id, a zero byte, commit.
func TestDocDigestIsFNV(t *testing.T) {
	for _, c := range []struct{ id, commit string }{
		{"", ""},
		{"ex-1", "0123456789abcdef0123456789abcdef01234567"},
		{"é\x00x", "c"},
		{"a", ""},
	} {
		h := fnv.New64a()
		h.Write([]byte(c.id))
		h.Write([]byte{0})
		h.Write([]byte(c.commit))
		want := h.Sum64()
		if got := DocDigest(c.id, c.commit); got != want {
			t.Errorf("DocDigest(%q, %q) = %x, want %x", c.id, c.commit, got, want)
		}
		if got := DocDigestBytes([]byte(c.id), []byte(c.commit)); got != want {
			t.Errorf("DocDigestBytes(%q, %q) = %x, want %x", c.id, c.commit, got, want)
		}
	}
}
