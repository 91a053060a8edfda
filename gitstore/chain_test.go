package gitstore

import (
	"bytes"
	"compress/zlib"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// randomDelta is a delta from src (len ≥ 1) to a target made of copies of
// src and inserted bytes, in the encoding git writes, and the target.
func randomDelta(rng *rand.Rand, src []byte) (delta, target []byte) {
	leb := func(b []byte, v uint) []byte {
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		return append(b, byte(v))
	}
	var ops []byte
	for range rng.Intn(12) {
		if rng.Intn(2) == 0 {
			off := rng.Intn(len(src))
			sz := 1 + rng.Intn(len(src)-off)
			if rng.Intn(8) == 0 && len(src) >= 0x10000+off {
				sz = 0x10000 // encoded as size 0
			}
			cmd, args := byte(0x80), []byte(nil)
			for j := range 4 {
				if b := byte(off >> (8 * j)); b != 0 {
					cmd |= 1 << j
					args = append(args, b)
				}
			}
			if sz != 0x10000 {
				for j := range 3 {
					if b := byte(sz >> (8 * j)); b != 0 {
						cmd |= 0x10 << j
						args = append(args, b)
					}
				}
			}
			ops = append(append(ops, cmd), args...)
			target = append(target, src[off:off+sz]...)
		} else {
			n := 1 + rng.Intn(127)
			ins := make([]byte, n)
			rng.Read(ins)
			ops = append(append(ops, byte(n)), ins...)
			target = append(target, ins...)
		}
	}
	delta = leb(leb(nil, uint(len(src))), uint(len(target)))
	return append(delta, ops...), target
}

// samePatch fails unless patchDelta (into dst) and go-git's PatchDelta
// give the same bytes, or both an error.
func samePatch(t *testing.T, dst, src, delta []byte, what string) {
	t.Helper()
	want, werr := packfile.PatchDelta(src, delta)
	got, gerr := patchDelta(dst, src, delta)
	if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("%s: patchDelta %d bytes, %v; go-git's %d bytes, %v", what, len(got), gerr, len(want), werr)
	}
}

// TestPatchDeltaAsGoGit: patchDelta gives go-git's PatchDelta's bytes or
// fails where it fails: random deltas (seed logged), into no buffer, a
// small one and a large one holding older bytes; the same deltas cut
// short, with bytes flipped, with bytes added, their sizes wrong; deltas
// of random bytes; and every delta of a memory packed by git.
func TestPatchDeltaAsGoGit(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	big := bytes.Repeat([]byte("older bytes "), 20000)
	for i := range 20000 {
		src := make([]byte, 1+rng.Intn([]int{16, 300, 5000, 140000}[rng.Intn(4)]))
		rng.Read(src)
		delta, target := randomDelta(rng, src)
		if got, err := patchDelta(nil, src, delta); err != nil || !bytes.Equal(got, target) {
			t.Fatalf("round %d: a valid delta: %v", i, err)
		}
		for _, dst := range [][]byte{nil, make([]byte, 3, 8), big[:0], big[:100]} {
			samePatch(t, dst, src, delta, "valid")
		}
		bad := append([]byte(nil), delta...)
		switch rng.Intn(5) {
		case 0:
			bad = bad[:rng.Intn(len(bad)+1)]
		case 1:
			bad[rng.Intn(len(bad))] ^= byte(1 + rng.Intn(255))
		case 2:
			bad = append(bad, byte(rng.Intn(256)))
		case 3:
			bad[0] ^= 1 // the source's size
		case 4:
			bad = make([]byte, rng.Intn(40))
			rng.Read(bad)
		}
		samePatch(t, big[:0], src, bad, "damaged")
		samePatch(t, nil, nil, delta, "no source")
	}
	// The deltas git wrote.
	r := roundsRepo(t, 150)
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "repack", "-a", "-d", "-f", "--depth=50", "--window=50").CombinedOutput(); err != nil {
		t.Fatalf("git repack: %v\n%s", err, out)
	}
	ps := openPackSet(r.Dir())
	n := 0
	var dst []byte
	for _, h := range allObjects(t, r) {
		p, off, ok := ps.find(h)
		if !ok {
			t.Fatalf("%s not in the pack", h)
		}
		b := p.pack[off:]
		typ, size, i, err := objectHeaderAt(b)
		if err != nil || typ != plumbing.OFSDeltaObject {
			continue
		}
		neg, k, err := ofsDeltaAt(b[i:])
		if err != nil {
			t.Fatal(err)
		}
		delta, err := inflate(b[i+k:], size)
		if err != nil {
			t.Fatal(err)
		}
		_, src, err := ps.object(p, off-neg, 0)
		if err != nil {
			t.Fatal(err)
		}
		samePatch(t, dst, src, delta, h.String())
		dst, _ = patchDelta(dst, src, delta)
		n++
	}
	if n < 100 {
		t.Fatalf("only %d deltas", n)
	}
}

// allObjects lists the ids of every object of r.
func allObjects(t *testing.T, r *Repo) []plumbing.Hash {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", r.Dir(), "rev-list", "--objects", "--all").Output()
	if err != nil {
		t.Fatal(err)
	}
	var ids []plumbing.Hash
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		ids = append(ids, plumbing.NewHash(strings.Fields(line)[0]))
	}
	return ids
}

// TestObjectOnceAsObject: objectOnce reads every object of a memory packed
// by git with deep chains (bases named by offset, or by id) as object
// does, in a random order (seed logged), through one pair of buffers; the
// bytes it returns are the caller's (overwriting them changes no later
// read); it keeps no base, and uses the bases kept already.
func TestObjectOnceAsObject(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for _, ofs := range []string{"true", "false"} {
		r := roundsRepo(t, 150)
		if out, err := exec.Command("git", "-c", "repack.useDeltaBaseOffset="+ofs, "--git-dir", r.Dir(), "repack", "-a", "-d", "-f", "--depth=50", "--window=50").CombinedOutput(); err != nil {
			t.Fatalf("git repack: %v\n%s", err, out)
		}
		ids := allObjects(t, r)
		ref := openPackSet(r.Dir())
		want := map[plumbing.Hash][]byte{}
		deltas := 0
		for _, h := range ids {
			p, off, _ := ref.find(h)
			typ, data, err := ref.object(p, off, 0)
			if err != nil || objectHash(typ, data) != h {
				t.Fatalf("object %s: %v", h, err)
			}
			want[h] = append([]byte{byte(typ)}, data...)
			if k := plumbing.ObjectType(p.pack[off] >> 4 & 7); k == plumbing.OFSDeltaObject || k == plumbing.REFDeltaObject {
				deltas++
			}
		}
		if deltas < 200 {
			t.Fatalf("offsets=%s: only %d deltas", ofs, deltas)
		}
		for _, warm := range []bool{false, true} {
			ps := ref // its bases filled by object above
			if !warm {
				ps = openPackSet(r.Dir())
			}
			kept := len(ps.bases)
			bufs := new([2][]byte)
			rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			for _, h := range ids {
				p, off, _ := ps.find(h)
				typ, data, err := ps.objectOnce(p, off, bufs)
				if err != nil || !bytes.Equal(append([]byte{byte(typ)}, data...), want[h]) {
					t.Fatalf("offsets=%s warm=%v: objectOnce %s: %v", ofs, warm, h, err)
				}
				for i := range data {
					data[i] ^= 0x5a
				}
			}
			if len(ps.bases) != kept {
				t.Fatalf("offsets=%s warm=%v: %d bases kept, %d before", ofs, warm, len(ps.bases), kept)
			}
		}
	}
}

// TestObjectOnceRandomChains: objectOnce reads as object does the objects
// of packs made here of random blobs and random offset deltas (copies in
// any order, inserts; seed logged): chains up to 60 deep, several objects
// deltified against one base, read in a random order through one pair of
// buffers, with bases kept or not, and with damaged entries (both fail).
func TestObjectOnceRandomChains(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for round := range 40 {
		var pack bytes.Buffer
		pack.WriteString("PACK\x00\x00\x00\x02\x00\x00\x00\x00")
		var offs []int64
		var contents [][]byte
		entry := func(typ plumbing.ObjectType, size int, extra, data []byte) {
			offs = append(offs, int64(pack.Len()))
			c := byte(typ)<<4 | byte(size&15)
			size >>= 4
			for size > 0 {
				pack.WriteByte(c | 0x80)
				c = byte(size & 0x7f)
				size >>= 7
			}
			pack.WriteByte(c)
			pack.Write(extra)
			zw := zlib.NewWriter(&pack)
			zw.Write(data)
			zw.Close()
		}
		ofsBytes := func(neg int64) []byte {
			b := []byte{byte(neg & 0x7f)}
			for neg >>= 7; neg > 0; neg >>= 7 {
				neg--
				b = append([]byte{0x80 | byte(neg&0x7f)}, b...)
			}
			return b
		}
		for i := range 1 + rng.Intn(80) {
			if i == 0 || rng.Intn(10) == 0 {
				blob := make([]byte, 1+rng.Intn(3000))
				rng.Read(blob)
				entry(plumbing.BlobObject, len(blob), nil, blob)
				contents = append(contents, blob)
				continue
			}
			// Mostly the last object (long chains), else any before.
			b := len(contents) - 1
			if rng.Intn(3) == 0 {
				b = rng.Intn(len(contents))
			}
			if len(contents[b]) == 0 {
				b = 0
			}
			delta, target := randomDelta(rng, contents[b])
			entry(plumbing.OFSDeltaObject, len(delta), ofsBytes(int64(pack.Len())-offs[b]), delta)
			contents = append(contents, target)
		}
		raw := pack.Bytes()
		damaged := -1
		if round%4 == 3 { // a byte flipped inside one entry's zlib data
			damaged = rng.Intn(len(offs))
			end := len(raw)
			if damaged+1 < len(offs) {
				end = int(offs[damaged+1])
			}
			raw[int(offs[damaged])+(end-int(offs[damaged]))*3/4] ^= 0x20
		}
		p := &mappedPack{pack: raw}
		ref := &packSet{}
		for _, kept := range []bool{false, true} {
			ps := &packSet{}
			if kept {
				ps = ref // bases kept by the reads below
			}
			bufs := new([2][]byte)
			order := rng.Perm(len(offs))
			for _, i := range order {
				wt, want, werr := ref.object(p, offs[i], 0)
				gt, got, gerr := ps.objectOnce(p, offs[i], bufs)
				if (werr != nil) != (gerr != nil) || werr == nil && (wt != gt || !bytes.Equal(got, want)) {
					t.Fatalf("round %d, object %d: objectOnce %s %d bytes %v; object %s %d bytes %v", round, i, gt, len(got), gerr, wt, len(want), werr)
				}
				if werr == nil && damaged < 0 && (wt != plumbing.BlobObject || !bytes.Equal(want, contents[i])) {
					t.Fatalf("round %d, object %d: not the content written", round, i)
				}
				for j := range got {
					got[j] ^= 0x77
				}
			}
			if !kept && len(ps.bases) != 0 {
				t.Fatalf("objectOnce kept %d bases", len(ps.bases))
			}
		}
	}
}
