package gitstore

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/klauspost/compress/zlib"
)

// writePackSerialRef is writePackOpt as it was before it deflated on all
// cores (622e580): each object deflated and written in turn. The pack
// writer must give the same bytes. Trees below storeTreesBelow bytes are
// stored, as writePackOpt stores them (session 19: only all or none were).
func (r *Repo) writePackSerialRef(mem *memory.Storage, order []plumbing.Hash, storeTreesBelow int64) error {
	dir := filepath.Join(r.dir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "tmp_gitmem_pack_")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	sum := sha1.New()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	cw := &countingWriter{w: io.MultiWriter(bw, sum)}
	var hdr [12]byte
	copy(hdr[:4], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(order)))
	if _, err := cw.Write(hdr[:]); err != nil {
		return err
	}
	idx := &idxfile.Writer{}
	if err := idx.OnHeader(uint32(len(order))); err != nil {
		return err
	}
	crc := crc32.NewIEEE()
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	zstore, _ := zlib.NewWriterLevel(nil, zlib.NoCompression)
	for _, h := range order {
		obj, err := mem.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return err
		}
		pos := cw.n
		crc.Reset()
		ew := io.MultiWriter(cw, crc)
		if _, err := ew.Write(objectHeader(obj.Type(), obj.Size())); err != nil {
			return err
		}
		rd, err := obj.Reader()
		if err != nil {
			return err
		}
		z := zw
		if obj.Type() == plumbing.TreeObject && obj.Size() < storeTreesBelow {
			z = zstore
		}
		z.Reset(ew)
		if _, err := io.Copy(z, rd); err != nil {
			rd.Close()
			return err
		}
		rd.Close()
		if err := z.Close(); err != nil {
			return err
		}
		if err := idx.OnInflatedObjectContent(h, pos, crc.Sum32(), nil); err != nil {
			return err
		}
	}
	packHash := plumbing.Hash{}
	copy(packHash[:], sum.Sum(nil))
	if _, err := bw.Write(packHash[:]); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := idx.OnFooter(packHash); err != nil {
		return err
	}
	mi, err := idx.Index()
	if err != nil {
		return err
	}
	if err := installPack(dir, tmp.Name(), mi, packHash); err != nil {
		return err
	}
	r.st.refresh()
	return nil
}

// packObjects builds n objects of every kind (blobs empty, small, large
// and random, trees, commits) in a batch, in the order Append would.
func packObjects(t *testing.T, n int, seed uint64) *batch {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	b := newBatch()
	var parent plumbing.Hash
	for i := 0; b.order == nil || len(b.order) < n; i++ {
		var body []byte
		switch i % 5 {
		case 0: // empty
		case 1: // text, compressible
			body = bytes.Repeat([]byte(fmt.Sprintf("exchange %d says hello; ", i)), 1+rng.IntN(4000))
		case 2: // random bytes, not compressible
			body = make([]byte, rng.IntN(70_000))
			for j := range body {
				body[j] = byte(rng.Uint32())
			}
		default:
			body = []byte(fmt.Sprintf(`{"id":"x%d","n":%d}`, i, rng.Int()))
		}
		blob, err := b.put(blobObject(body))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.order) >= n {
			break
		}
		// 1 to 60 entries: trees of ~40 bytes to ~2.4 KB, on both sides
		// of the sizes below which a pack stores them.
		tree := &object.Tree{}
		for j := range 1 + rng.IntN(60) {
			tree.Entries = append(tree.Entries, object.TreeEntry{Name: fmt.Sprintf("e%d-%03d.json", i, j), Mode: filemode.Regular, Hash: blob})
		}
		to := &plumbing.MemoryObject{}
		if err := tree.Encode(to); err != nil {
			t.Fatal(err)
		}
		th, err := b.put(to)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.order) >= n {
			break
		}
		sig := object.Signature{Name: "t", Email: "t@t", When: time.Unix(int64(i), 0).UTC()}
		c := &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprintf("commit %d\n", i), TreeHash: th}
		if !parent.IsZero() {
			c.ParentHashes = []plumbing.Hash{parent}
		}
		if parent, err = b.commit(c); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// packFiles reads every file of a repo's pack folder, by name.
func packFiles(t *testing.T, r *Repo) map[string][]byte {
	t.Helper()
	dir := filepath.Join(r.dir, "objects", "pack")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	return out
}

// TestPackEntriesAreSerial: the pack writer, which deflates on all cores a
// window at a time, writes byte for byte the pack and .idx of the writer
// that deflated one object after the other, for every count around the
// window and the ways of storing trees (none, small ones, all).
func TestPackEntriesAreSerial(t *testing.T) {
	counts := []int{1, 2, 5, packWindow - 1, packWindow, packWindow + 1, 2*packWindow + 3, 700}
	for _, n := range counts {
		for _, below := range []int64{0, smallTree, 100, math.MaxInt64} {
			t.Run(fmt.Sprintf("n=%d,storeTreesBelow=%d", n, below), func(t *testing.T) {
				b := packObjects(t, n, uint64(n))
				if len(b.order) != n {
					t.Fatalf("built %d objects, want %d", len(b.order), n)
				}
				ref, got := newRepo(t), newRepo(t)
				if err := ref.writePackSerialRef(b.mem, b.order, below); err != nil {
					t.Fatal(err)
				}
				if err := got.writePackOpt(b.mem, b.order, below); err != nil {
					t.Fatal(err)
				}
				want, have := packFiles(t, ref), packFiles(t, got)
				if len(want) != 2 || len(have) != len(want) {
					t.Fatalf("pack files: got %d, want %d (2)", len(have), len(want))
				}
				for name, data := range want {
					if !bytes.Equal(have[name], data) {
						t.Errorf("%s differs from the serial writer's (%d vs %d bytes)", name, len(have[name]), len(data))
					}
				}
				// Every object reads back.
				for _, h := range b.order {
					if _, err := got.st.EncodedObject(plumbing.AnyObject, h); err != nil {
						t.Fatalf("read %s back: %v", h, err)
					}
				}
			})
		}
	}
}

// packEntry is one entry of a pack as git verify-pack lists it, and
// whether it holds only stored deflate blocks.
type packedObject struct {
	typ    string
	size   int
	stored bool
}

// packEntryKinds reads the packs of repo dir with git verify-pack and
// reports each entry's type, size and whether its zlib stream holds the
// object's bytes in stored deflate blocks (BTYPE 00), uncompressed.
func packEntryKinds(t *testing.T, dir string) []packedObject {
	t.Helper()
	var objs []packedObject
	idxs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.idx"))
	for _, idx := range idxs {
		pack, err := os.ReadFile(strings.TrimSuffix(idx, ".idx") + ".pack")
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("git", "verify-pack", "-v", idx).Output()
		if err != nil {
			t.Fatalf("verify-pack %s: %v", idx, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 5 || len(f[0]) != 40 {
				continue // the summary lines
			}
			size, _ := strconv.Atoi(f[2])
			inPack, _ := strconv.Atoi(f[3])
			off, _ := strconv.Atoi(f[4])
			p := off
			for pack[p]&0x80 != 0 { // the type and size header
				p++
			}
			p++
			z, err := zlib.NewReader(bytes.NewReader(pack[p : off+inPack]))
			if err != nil {
				t.Fatalf("%s: %v", f[0], err)
			}
			if _, err := io.Copy(io.Discard, z); err != nil {
				t.Fatalf("%s: %v", f[0], err)
			}
			// Stored: the object's bytes are all in stored deflate blocks
			// (BTYPE 00: a 1-byte header, LEN, NLEN, the bytes), one
			// after the other from the stream's start; what follows them
			// (an empty final block, the Adler-32) holds no data.
			q, inStored := p+2, 0
			for q < off+inPack && (pack[q]>>1)&3 == 0 {
				n := int(binary.LittleEndian.Uint16(pack[q+1:]))
				inStored += n
				q += 5 + n
				if pack[q-5-n]&1 != 0 {
					break
				}
			}
			objs = append(objs, packedObject{typ: f[1], size: size, stored: size > 0 && inStored == size})
		}
	}
	return objs
}

// TestAddPackStoresTrees: an add's pack holds its trees below smallTree
// bytes uncompressed (zlib stored blocks) and deflates larger trees,
// commits and blobs; a batch small enough to be written loose writes no
// pack. The exchanges of a case share one folder, so its tree grows past
// smallTree in the larger batches. Every commit reads back and git fsck
// --strict passes.
func TestAddPackStoresTrees(t *testing.T) {
	text := strings.Repeat("the same words, over and over; ", 80)
	for _, n := range []int{1, 2 * packThreshold, 5*packThreshold + 3} {
		t.Run(fmt.Sprintf("entries=%d", n), func(t *testing.T) {
			r := newRepo(t)
			var es []Entry
			for i := 0; i < n; i++ {
				e := testEntry(fmt.Sprintf("exchange-%03d-x", i)) // all in ex/x/
				e.Blob = []byte(fmt.Sprintf(`{"id":"e%d","text":%q}`, i, text))
				es = append(es, e)
			}
			if _, err := r.Append(es, 0); err != nil {
				t.Fatal(err)
			}
			objs := packEntryKinds(t, r.Dir())
			if n == 1 && len(objs) != 0 {
				t.Fatalf("one entry wrote a pack: %v", objs)
			}
			count := map[string]int{}
			for _, o := range objs {
				want := o.typ == "tree" && o.size < smallTree
				if o.stored != want {
					t.Errorf("%s of %d bytes: stored %v, want %v", o.typ, o.size, o.stored, want)
				}
				k := o.typ
				if o.typ == "tree" {
					k = fmt.Sprintf("tree, stored %v", o.stored)
				}
				count[k]++
			}
			t.Logf("%v", count)
			if n > 1 && (count["commit"] != n || count["blob"] != n || count["tree, stored true"] < n) {
				t.Errorf("%v: want %d commits, %d blobs and ≥ %d small trees", count, n, n, n)
			}
			if n == 5*packThreshold+3 && count["tree, stored false"] == 0 {
				t.Errorf("no tree reached %d bytes: the case does not test the large ones", smallTree)
			}
			if got := len(countCommits(t, r)); got != n {
				t.Fatalf("%d commits, want %d", got, n)
			}
			fsck(t, r.Dir())
		})
	}
}
