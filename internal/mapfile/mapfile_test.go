package mapfile

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// residentOf is the Rss (bytes) /proc/self/smaps gives the mapping that
// starts at b's first byte; -1 when there is none (or no smaps).
func residentOf(t *testing.T, b []byte) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	start := fmt.Sprintf("%x-", key(b))
	in := false
	for _, l := range strings.Split(string(raw), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(f[0], start)
			continue
		}
		if in && f[0] == "Rss:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return -1
}

// TestDropResident: DropResident gives back the pages of every live
// mapping but KeepResident's, the bytes read after it are still the
// file's, an unmapped mapping is no longer advised (nor unmapped twice),
// and a file read into the heap (ReadOnly's fallback) is not touched.
func TestDropResident(t *testing.T) {
	dir := t.TempDir()
	const size = 4 << 20
	r := rand.New(rand.NewSource(1))
	files := map[string][]byte{}
	for _, name := range []string{"drop", "keep", "gone", "again"} {
		b := make([]byte, size)
		r.Read(b)
		files[name] = b
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	maps := map[string][]byte{}
	for _, name := range []string{"drop", "keep", "gone"} {
		b, unmap, err := Map(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		maps[name] = b
		if name != "gone" {
			defer unmap()
			continue
		}
		unmap()
		// A mapping of the same size likely takes the same addresses: a
		// second call of gone's unmap must leave it alone.
		again, unmapAgain, err := Map(filepath.Join(dir, "again"))
		if err != nil {
			t.Fatal(err)
		}
		defer unmapAgain()
		maps["again"] = again
		unmap()
		if !bytes.Equal(again, files["again"]) {
			t.Fatal("a mapping made after another was unmapped reads other bytes")
		}
		live.Lock()
		_, ok := live.m[key(again)]
		live.Unlock()
		if !ok {
			t.Fatal("a second unmap of a gone mapping let go of a live one")
		}
		t.Logf("gone at %x, again at %x", key(b), key(again))
	}
	heap, unmapHeap, err := ReadOnly(filepath.Join(dir, "empty"))
	if err != nil || len(heap) != 0 {
		t.Fatalf("ReadOnly(empty) = %d bytes, %v", len(heap), err)
	}
	defer unmapHeap()
	KeepResident(maps["keep"])
	KeepResident(heap) // not a mapping: ignored
	for _, name := range []string{"drop", "keep"} {
		if !bytes.Equal(maps[name], files[name]) { // reads every page
			t.Fatalf("%s: the mapping's bytes differ from the file's", name)
		}
		if got := residentOf(t, maps[name]); got < size/2 {
			t.Fatalf("%s: %d bytes resident after reading it all", name, got)
		}
	}
	if got := residentOf(t, maps["gone"]); key(maps["gone"]) != key(maps["again"]) && got != -1 {
		t.Fatalf("gone: still mapped (%d bytes resident)", got)
	}
	live.Lock()
	n := len(live.m)
	live.Unlock()
	before := FileResident()
	advised := DropResident()
	after := FileResident()
	if advised < size || advised%size != 0 {
		t.Fatalf("DropResident advised %d bytes; want a multiple of %d (drop, and any other live mapping), %d live", advised, size, n)
	}
	if got := residentOf(t, maps["drop"]); got != 0 {
		t.Fatalf("drop: %d bytes resident after DropResident, want 0", got)
	}
	if got := residentOf(t, maps["keep"]); got < size/2 {
		t.Fatalf("keep: %d bytes resident after DropResident; KeepResident's pages must stay", got)
	}
	if before < 0 || before-after < size/2 {
		t.Fatalf("FileResident %d before, %d after dropping %d bytes", before, after, size)
	}
	for _, name := range []string{"drop", "keep"} {
		if !bytes.Equal(maps[name], files[name]) {
			t.Fatalf("%s: the bytes read after DropResident differ from the file's", name)
		}
	}
	if got := residentOf(t, maps["drop"]); got < size/2 {
		t.Fatalf("drop: %d bytes resident after reading it again", got)
	}
}
