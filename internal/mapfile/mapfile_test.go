package mapfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMapAndReadOnly(t *testing.T) {
	dir := t.TempDir()
	full, empty := filepath.Join(dir, "full"), filepath.Join(dir, "empty")
	if err := os.WriteFile(full, []byte("packed bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b, unmap, err := Map(full)
	if err != nil || string(b) != "packed bytes" {
		t.Fatalf("Map(full) = %q, %v", b, err)
	}
	unmap()
	if _, _, err := Map(empty); err == nil {
		t.Fatal("Map of an empty file: want an error (nothing to map)")
	}
	if _, _, err := Map(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("Map of a missing file: want an error")
	}
	for _, tt := range []struct{ path, want string }{{full, "packed bytes"}, {empty, ""}} {
		b, unmap, err := ReadOnly(tt.path)
		if err != nil || string(b) != tt.want {
			t.Fatalf("ReadOnly(%s) = %q, %v; want %q", tt.path, b, err, tt.want)
		}
		unmap()
	}
}
