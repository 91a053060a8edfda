package gitstore

import (
	"fmt"
	"sort"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// TestDecodeTreeEntriesIsGoGits: every tree our decoder takes gives
// go-git's entries (and a tree whose lookups work), and it leaves to
// go-git the trees it does not take as go-git would (unsorted, a name
// twice, a mode git does not write, malformed).
func TestDecodeTreeEntriesIsGoGits(t *testing.T) {
	h := func(i int) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, []byte(fmt.Sprint(i))) }
	modes := map[filemode.FileMode]string{filemode.Dir: "40000", filemode.Regular: "100644", filemode.Executable: "100755",
		filemode.Symlink: "120000", filemode.Submodule: "160000"}
	enc := func(es ...object.TreeEntry) []byte { // as git writes them, in the order given
		var b []byte
		for _, e := range es {
			b = append(b, modes[e.Mode]+" "+e.Name+"\x00"...)
			b = append(b, e.Hash[:]...)
		}
		return b
	}
	f := func(name string, i int) object.TreeEntry {
		return object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h(i)}
	}
	d := func(name string, i int) object.TreeEntry {
		return object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h(i)}
	}
	var leaf []object.TreeEntry // a 1M memory's last-level folder
	for i := range 244 {
		leaf = append(leaf, f(fmt.Sprintf("%016x.json", uint64(i)*0x9e3779b97f4a7c15), i))
	}
	sort.Sort(object.TreeEntrySorter(leaf))
	h0 := h(0)
	id := h0[:]
	cases := []struct {
		name string
		data []byte
		ok   bool // our decoder takes it
	}{
		{"empty", nil, true},
		{"one file", enc(f("a.json", 1)), true},
		{"every mode", enc(object.TreeEntry{Name: "a", Mode: filemode.Executable, Hash: h(1)}, object.TreeEntry{Name: "b", Mode: filemode.Symlink, Hash: h(2)},
			object.TreeEntry{Name: "c", Mode: filemode.Submodule, Hash: h(3)}, d("d", 4), f("e", 5)), true},
		// Git's order: "a.b" < "a/" (the folder a) < "a0".
		{"a folder among names it prefixes", enc(f("a.b", 1), d("a", 2), f("a0", 3)), true},
		{"upper levels", enc(d("0", 1), d("1", 2), d("a", 3), d("f", 4)), true},
		{"unicode", enc(f("é.json", 1), f("日本.json", 2)), true},
		{"a leaf of 244", enc(leaf...), true},
		{"unsorted", enc(f("b", 1), f("a", 2)), false},
		{"a folder before a name it prefixes", enc(d("a", 1), f("a.b", 2)), false},
		{"a name twice", enc(f("a", 1), f("a", 2)), false},
		{"a mode git does not write", append([]byte("100664 a\x00"), id...), false},
		{"no name", append([]byte("100644 \x00"), id...), false},
		{"a truncated id", append([]byte("100644 a\x00"), id[:10]...), false},
		{"no terminator", []byte("100644 a"), false},
		{"no mode", append([]byte("a\x00"), id...), false},
	}
	st := memory.NewStorage()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := decodeTreeEntries(c.data)
			if ok != c.ok {
				t.Fatalf("taken: %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			mo, _ := treeObject(plumbing.TreeObject, c.data, true)
			want, err := object.DecodeTree(st, mo)
			if err != nil {
				t.Fatalf("go-git refuses a tree we take: %v", err)
			}
			if len(got) != len(want.Entries) {
				t.Fatalf("%d entries, go-git %d", len(got), len(want.Entries))
			}
			for i := range got {
				if got[i] != want.Entries[i] {
					t.Fatalf("entry %d: %+v, go-git %+v", i, got[i], want.Entries[i])
				}
			}
			tr, ok := treeFromEntries(st, mo.Hash(), got)
			if !ok || tr.Hash != mo.Hash() {
				t.Fatalf("tree: %v %v", ok, tr)
			}
			for _, e := range want.Entries {
				if e.Mode == filemode.Dir {
					continue // FindEntry of a folder's name looks inside it
				}
				if fe, err := tr.FindEntry(e.Name); err != nil || *fe != e {
					t.Fatalf("FindEntry(%q): %v %v", e.Name, fe, err)
				}
			}
		})
	}
}

// FuzzDecodeTreeEntries: whatever the bytes, a tree our decoder takes is
// one go-git decodes to the same entries.
func FuzzDecodeTreeEntries(f *testing.F) {
	h0 := plumbing.ComputeHash(plumbing.BlobObject, []byte("0"))
	f.Add([]byte("100644 a\x00" + string(h0[:]) + "40000 b\x00" + string(h0[:])))
	f.Add([]byte("100644 a.b\x00" + string(h0[:]) + "40000 a\x00" + string(h0[:]) + "100755 a0\x00" + string(h0[:])))
	f.Add([]byte("120000 l\x00" + string(h0[:5])))
	f.Add([]byte{})
	st := memory.NewStorage()
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := decodeTreeEntries(data)
		if !ok {
			return
		}
		mo, _ := treeObject(plumbing.TreeObject, data, true)
		want, err := object.DecodeTree(st, mo)
		if err != nil {
			t.Fatalf("go-git refuses a tree we take: %v", err)
		}
		if len(got) != len(want.Entries) {
			t.Fatalf("%d entries, go-git %d", len(got), len(want.Entries))
		}
		for i := range got {
			if got[i] != want.Entries[i] {
				t.Fatalf("entry %d: %+v, go-git %+v", i, got[i], want.Entries[i])
			}
		}
	})
}
