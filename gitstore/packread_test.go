package gitstore

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestPackSetReadsTreesAsGoGit: every tree of a memory, packed by git
// with deltas (their bases named by offset, or by id), reads from the
// mapped packs as the same entries go-git reads; a loose tree, an id that
// is no tree and a missing id are left to go-git.
func TestPackSetReadsTreesAsGoGit(t *testing.T) {
	for _, ofs := range []string{"true", "false"} {
		t.Run("offsets="+ofs, func(t *testing.T) { testPackSetReadsTrees(t, ofs) })
	}
}

func testPackSetReadsTrees(t *testing.T, ofs string) {
	r := roundsRepo(t, 150)
	// One more as loose objects, after git's repack into one deltified pack.
	if out, err := exec.Command("git", "-c", "repack.useDeltaBaseOffset="+ofs, "--git-dir", r.Dir(), "repack", "-a", "-d", "-f", "--depth=20", "--window=50").CombinedOutput(); err != nil {
		t.Fatalf("git repack: %v\n%s", err, out)
	}
	r.st.refresh()
	if _, err := r.Append([]Entry{testEntry("loose0")}, 0); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "--git-dir", r.Dir(), "rev-list", "--objects", "--all").Output()
	if err != nil {
		t.Fatal(err)
	}
	vp, err := exec.Command("sh", "-c", "git --git-dir="+r.Dir()+" verify-pack -v "+filepath.Join(r.Dir(), "objects", "pack", "*.idx")).Output()
	if err != nil {
		t.Fatal(err)
	}
	deltaTrees := 0
	for _, line := range strings.Split(string(vp), "\n") {
		if f := strings.Fields(line); len(f) >= 7 && f[1] == "tree" {
			deltaTrees++
		}
	}
	if deltaTrees < 50 {
		t.Fatalf("only %d deltified trees: the test does not test deltas", deltaTrees)
	}
	ps := openPackSet(r.Dir())
	fast, slow := 0, 0
	kinds := map[plumbing.ObjectType]int{}
	nstored := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		h := plumbing.NewHash(strings.Fields(line)[0])
		obj, err := r.st.Storage.EncodedObject(plumbing.AnyObject, h) // go-git's
		if err != nil {
			t.Fatal(err)
		}
		// The store's read (the mapped packs first) gives go-git's object.
		mine, err := r.st.EncodedObject(plumbing.AnyObject, h)
		if err != nil || mine.Type() != obj.Type() || mine.Size() != obj.Size() || mine.Hash() != h {
			t.Fatalf("read %s: %v %v", h, mine, err)
		}
		other := plumbing.BlobObject
		if obj.Type() == plumbing.BlobObject {
			other = plumbing.TreeObject
		}
		if _, err := r.st.EncodedObject(other, h); !errors.Is(err, plumbing.ErrObjectNotFound) {
			t.Fatalf("%s (a %s) read as a %s: %v", h, obj.Type(), other, err)
		}
		// Any object stored undeltified comes back as its zlib stream,
		// which inflates to go-git's content.
		if typ, size, z, ok := ps.stored(h); ok {
			nstored++
			rd, err := obj.Reader()
			if err != nil {
				t.Fatal(err)
			}
			want, _ := io.ReadAll(rd)
			zr, err := zlib.NewReader(bytes.NewReader(z))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(zr)
			if err != nil || typ != obj.Type() || size != obj.Size() || !bytes.Equal(got, want) {
				t.Fatalf("stored %s: %s %d %v, go-git reads %s %d", h, typ, size, err, obj.Type(), obj.Size())
			}
		}
		ents, ok := ps.tree(h)
		if obj.Type() != plumbing.TreeObject {
			if ok {
				t.Fatalf("%s is a %s, read as a tree", h, obj.Type())
			}
			continue
		}
		want, err := object.GetTree(r.st, h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.st.getTree(h)
		if err != nil || got.Hash != h || !reflect.DeepEqual(got.Entries, want.Entries) {
			t.Fatalf("getTree %s: %v, %v", h, got, err)
		}
		if !ok {
			slow++
			continue
		}
		fast++
		if p, off, found := ps.find(h); found {
			kinds[plumbing.ObjectType(p.pack[off]>>4&7)]++
		}
		if !reflect.DeepEqual(ents, want.Entries) {
			t.Fatalf("tree %s: %v, go-git reads %v", h, ents, want.Entries)
		}
	}
	// The trees of the last, loose commit (root, ex, ex/0) only.
	if slow != 3 || fast < 100 {
		t.Fatalf("%d trees read from the packs, %d left to go-git (want 3)", fast, slow)
	}
	if nstored < 500 {
		t.Fatalf("only %d objects read as stored", nstored)
	}
	delta := plumbing.OFSDeltaObject
	if ofs == "false" {
		delta = plumbing.REFDeltaObject
	}
	if kinds[delta] < 50 {
		t.Fatalf("trees read by kind: %v: too few %s", kinds, delta)
	}
	// A tree read from the packs finds a path below it, as go-git's does.
	head, _ := r.Head()
	c, err := r.Commit(head)
	if err != nil {
		t.Fatal(err)
	}
	root, err := r.st.getTree(c.TreeHash)
	if err != nil {
		t.Fatal(err)
	}
	e := testEntry(fmt.Sprintf("r0x007%x", 7))
	if _, err := root.FindEntry(e.Path); err != nil {
		t.Fatalf("find %s: %v", e.Path, err)
	}
	if _, ok := ps.tree(plumbing.NewHash("0123456789012345678901234567890123456789")); ok {
		t.Fatal("a missing id was read")
	}
}

// TestPackSetRejectsWrongBytes: a pack whose object bytes are damaged is
// never read as wrong entries: each byte flipped in turn in the root
// tree's stored bytes either fails the read (the id check, zlib's) or
// leaves the entries right.
func TestPackSetRejectsWrongBytes(t *testing.T) {
	r := newRepo(t)
	var es []Entry
	for i := 0; i < 200; i++ {
		es = append(es, testEntry(fmt.Sprintf("w%03d%x", i, i%16)))
	}
	if _, err := r.Append(es, 0); err != nil {
		t.Fatal(err)
	}
	head, _ := r.Head()
	c, err := r.Commit(head)
	if err != nil {
		t.Fatal(err)
	}
	ps := openPackSet(r.Dir())
	want, ok := ps.tree(c.TreeHash)
	if !ok {
		t.Fatal("the root tree was not read from the pack")
	}
	// Change a byte of the stored root tree: this package stores trees
	// deflated, so flip a byte inside its zlib stream's data, copy-on-write
	// (packs are read-only files).
	p, off, _ := ps.find(c.TreeHash)
	if p == nil {
		t.Fatal("no pack")
	}
	packs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs", len(packs))
	}
	raw, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	damaged := false
	for i := int(off) + 4; i < int(off)+40 && !damaged; i++ {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x01
		if err := os.Chmod(packs[0], 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(packs[0], b, 0o644); err != nil {
			t.Fatal(err)
		}
		ps2 := openPackSet(r.Dir())
		if _, _, _, ok := ps2.stored(c.TreeHash); ok {
			if ents, ok := ps2.tree(c.TreeHash); !ok || !reflect.DeepEqual(ents, want) {
				t.Fatalf("byte %d flipped: stored, but the tree reads wrong", i)
			}
		}
		ents, ok := ps2.tree(c.TreeHash)
		if ok {
			// The flip may fall in bytes zlib ignores; the entries must
			// then still be right.
			if !reflect.DeepEqual(ents, want) {
				t.Fatalf("byte %d flipped: wrong entries read as tree %s", i, c.TreeHash)
			}
			continue
		}
		damaged = true
	}
	if !damaged {
		t.Fatal("no flip was noticed")
	}
}

// TestMappedPacksReleased: the mapped packs are unmapped by the first
// garbage collections after the last read (an idle process keeps no
// deleted pack on disk), and mapped again by the next read.
func TestMappedPacksReleased(t *testing.T) {
	r := newRepo(t)
	var es []Entry
	for i := 0; i < 200; i++ {
		es = append(es, testEntry(fmt.Sprintf("m%03d%x", i, i%16)))
	}
	if _, err := r.Append(es, 0); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs", len(packs))
	}
	mapped := func() bool {
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip("no /proc/self/maps")
		}
		return strings.Contains(string(maps), packs[0])
	}
	head, _ := r.Head()
	if _, err := r.Commit(head); err != nil {
		t.Fatal(err)
	}
	if !mapped() {
		t.Fatal("a read did not map the pack")
	}
	for i := 0; i < 5 && mapped(); i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if mapped() {
		t.Fatal("the pack is still mapped after the collections")
	}
	if _, err := r.Commit(head); err != nil {
		t.Fatal(err)
	}
	if !mapped() {
		t.Fatal("the next read did not map the pack again")
	}
}

// roundsRepo is a repo of four appends of perRound entries each, their
// paths sharing prefixes (tests repack it to get deltas).
func roundsRepo(t *testing.T, perRound int) *Repo {
	t.Helper()
	r := newRepo(t)
	for round := 0; round < 4; round++ {
		var es []Entry
		for i := 0; i < perRound; i++ {
			es = append(es, testEntry(fmt.Sprintf("r%dx%03d%x", round, i, i%16)))
		}
		if _, err := r.Append(es, 0); err != nil {
			t.Fatal(err)
		}
	}
	return r
}
