package gitstore

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// gitPack has git pack every object of r (deltas with bases named by
// offset or by id) and returns
// the pack's bytes, the index git's own index-pack makes of it and how
// many of its objects are deltas.
func gitPack(t *testing.T, r *Repo, ofs bool) (pack, idx []byte, deltas int) {
	t.Helper()
	args := []string{"--git-dir", r.Dir(), "pack-objects", "--stdout", "--revs", "--window=50", "--depth=20"}
	if ofs {
		args = append(args, "--delta-base-offset")
	}
	revs := "main\n"
	cmd := exec.Command("git", args...)
	cmd.Stdin = strings.NewReader(revs)
	pack, err := cmd.Output()
	if err != nil {
		t.Fatalf("git pack-objects: %v", err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "p.pack")
	if err := os.WriteFile(p, pack, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "index-pack", "-o", filepath.Join(dir, "p.idx"), p).CombinedOutput(); err != nil {
		t.Fatalf("git index-pack: %v\n%s", err, out)
	}
	idx, err = os.ReadFile(filepath.Join(dir, "p.idx"))
	if err != nil {
		t.Fatal(err)
	}
	vp, err := exec.Command("git", "verify-pack", "-v", filepath.Join(dir, "p.idx")).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(vp), "\n") {
		if f := strings.Fields(line); len(f) >= 7 && plumbing.IsHash(f[0]) {
			deltas++
		}
	}
	return pack, idx, deltas
}

func encodeIdx(t *testing.T, mi *idxfile.MemoryIndex) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := idxfile.NewEncoder(&b).Encode(mi); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestIndexPackAsGit: the index of a fetched pack, made by indexPack, is
// byte for byte the one git's index-pack makes, for packs with deltas
// whose bases are named by offset and by id.
func TestIndexPackAsGit(t *testing.T) {
	r := roundsRepo(t, 120)
	for _, tc := range []struct {
		name string
		ofs  bool
	}{
		{"offset deltas", true},
		{"id deltas", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pack, want, deltas := gitPack(t, r, tc.ofs)
			if deltas < 50 {
				t.Fatalf("only %d deltified objects: the test does not test deltas", deltas)
			}
			mi, _, objs, err := indexPack(pack)
			if err != nil {
				t.Fatal(err)
			}
			// Each object handed on (to the sync's memo) is the content
			// of its id, as go-git reads it from the repo.
			for _, o := range objs {
				g, err := r.st.Storage.EncodedObject(plumbing.AnyObject, o.id)
				if err != nil {
					t.Fatal(err)
				}
				rd, _ := g.Reader()
				want, _ := io.ReadAll(rd)
				rd.Close()
				if g.Type() != o.typ || !bytes.Equal(want, o.data) {
					t.Fatalf("object %s: %s of %d bytes, go-git reads %s of %d", o.id, o.typ, len(o.data), g.Type(), len(want))
				}
			}
			if got := encodeIdx(t, mi); !bytes.Equal(got, want) {
				t.Fatalf("index differs from git's (%d and %d bytes)", len(got), len(want))
			}
		})
	}
}

// TestIndexPackLeavesThinPackToGoGit: a pack whose delta names a base
// outside it (a thin pack) is left to go-git, which has the storage to
// find the base.
func TestIndexPackLeavesThinPackToGoGit(t *testing.T) {
	// One id delta against a blob the pack does not hold: source 3 bytes,
	// result 2 bytes inserted.
	delta := []byte{3, 2, 2, 'h', 'i'}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(delta)
	zw.Close()
	pack := []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01")
	pack = append(pack, byte(plumbing.REFDeltaObject)<<4|byte(len(delta)))
	base := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	pack = append(pack, base[:]...)
	pack = append(pack, z.Bytes()...)
	sum := sha1.Sum(pack)
	pack = append(pack, sum[:]...)
	if _, _, _, err := indexPack(pack); !errors.Is(err, errPackFallback) {
		t.Fatalf("thin pack: err %v, want the fallback", err)
	}
}

// TestIndexPackRejectsDamage: a pack with any one byte changed is refused
// or, when the change leaves it a valid pack (it cannot: the checksum
// covers every byte), indexed as git indexes it — never indexed wrong.
func TestIndexPackRejectsDamage(t *testing.T) {
	r := newRepo(t)
	if _, err := r.Append([]Entry{testEntry("a1"), testEntry("a2"), testEntry("a3")}, 0); err != nil {
		t.Fatal(err)
	}
	pack, want, _ := gitPack(t, r, true)
	for i := range pack {
		bad := bytes.Clone(pack)
		bad[i] ^= 0x41
		mi, _, _, err := indexPack(bad)
		if err == nil && !bytes.Equal(encodeIdx(t, mi), want) {
			t.Fatalf("byte %d changed: indexed, and not as git does", i)
		}
		if err == nil {
			t.Fatalf("byte %d changed: accepted", i)
		}
	}
	if _, _, _, err := indexPack(pack[:len(pack)-1]); err == nil {
		t.Fatal("a truncated pack was accepted")
	}
}

// TestSyncFetchIndexesPackItself: a sync's fetch stores the received pack
// with the index indexPack makes (no go-git parse), and git reads it.
func TestSyncFetchIndexesPackItself(t *testing.T) {
	base := t.TempDir()
	url := bareRemote(t, base, "remote.git")
	a := memWith(t, url, ids("a", 30)...)
	mustSync(t, a)
	c := memWith(t, url, ids("c", 5)...)
	fast := 0
	testHookFetchIndexed = func(err error) {
		if err != nil {
			t.Errorf("indexPack: %v", err)
		}
		fast++
	}
	defer func() { testHookFetchIndexed = nil }()
	mustSync(t, c)
	if fast != 1 {
		t.Fatalf("%d packs indexed by indexPack, want 1", fast)
	}
	packs, _ := filepath.Glob(filepath.Join(c.Dir(), "objects", "pack", "pack-*.idx"))
	for _, p := range packs {
		if out, err := exec.Command("git", "verify-pack", p).CombinedOutput(); err != nil {
			t.Fatalf("git verify-pack %s: %v\n%s", p, err, out)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(c.Dir(), "objects", "pack", "tmp_*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if out, err := exec.Command("git", "--git-dir", c.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	if got := len(exchangeSet(t, c.Dir())); got != 35 {
		t.Fatalf("%d exchanges after the sync, want 35", got)
	}
}

// TestFetchPackWriterIndexesAsItArrives: a pack written to the fetch's
// writer in chunks of any size (scanPack reads the objects as they come)
// is installed with git's index; a stream cut anywhere — in the header, in
// an object, in the checksum — is refused, nothing installed or left.
func TestFetchPackWriterIndexesAsItArrives(t *testing.T) {
	src := roundsRepo(t, 40)
	pack, want, _ := gitPack(t, src, true)
	cases := []struct {
		name  string
		chunk int // bytes per Write
		cut   int // bytes dropped from the end
	}{
		{name: "one write", chunk: len(pack)},
		{name: "byte by byte", chunk: 1},
		{name: "chunks of 7", chunk: 7},
		{name: "chunks of 4096", chunk: 4096},
		{name: "cut in the checksum", chunk: 1000, cut: 1},
		{name: "cut before the checksum", chunk: 1000, cut: 20},
		{name: "cut in an object", chunk: 1000, cut: len(pack) / 2},
		{name: "cut in the header", chunk: 5, cut: len(pack) - 9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRepo(t)
			w, err := r.st.PackfileWriter()
			if err != nil {
				t.Fatal(err)
			}
			b := pack[:len(pack)-c.cut]
			for len(b) > 0 {
				k := min(c.chunk, len(b))
				if _, err := w.Write(b[:k]); err != nil {
					t.Fatal(err)
				}
				b = b[k:]
			}
			err = w.Close()
			dir := filepath.Join(r.Dir(), "objects", "pack")
			if left, _ := filepath.Glob(filepath.Join(dir, "tmp_*")); len(left) > 0 {
				t.Fatalf("temporary files left: %v", left)
			}
			idxs, _ := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
			if c.cut > 0 {
				if err == nil || len(idxs) > 0 {
					t.Fatalf("a pack cut by %d bytes: err %v, %d indexes installed", c.cut, err, len(idxs))
				}
				return
			}
			if err != nil || len(idxs) != 1 {
				t.Fatalf("err %v, %d indexes installed", err, len(idxs))
			}
			got, err := os.ReadFile(idxs[0])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("index differs from git's (%d and %d bytes)", len(got), len(want))
			}
		})
	}
}
