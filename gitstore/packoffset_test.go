package gitstore

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// offsetBinary is mappedPack.offset before its interpolated probes (the
// oracle): a binary search of h's fan-out bucket.
func (p *mappedPack) offsetBinary(h plumbing.Hash) (int64, bool) {
	fan := func(b int) int { return int(binary.BigEndian.Uint32(p.idx[8+b*4:])) }
	lo, hi := 0, fan(int(h[0]))
	if h[0] > 0 {
		lo = fan(int(h[0]) - 1)
	}
	if hi > p.n || lo > hi {
		return 0, false
	}
	names := p.idx[8+256*4:]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(names[m*20:m*20+20], h[:]); {
		case c == 0:
			offs := names[p.n*(20+4):]
			o := binary.BigEndian.Uint32(offs[m*4:])
			if o&0x80000000 == 0 {
				return int64(o), true
			}
			big := offs[p.n*4:]
			i := int(o & 0x7fffffff)
			if len(big) < (i+1)*8+40 {
				return 0, false
			}
			return int64(binary.BigEndian.Uint64(big[i*8:])), true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}

// syntheticIdx is a version 2 pack index of ids (sorted here), the i-th
// sorted id at offset 1000+i, every 7th through the 64-bit table.
func syntheticIdx(ids []plumbing.Hash) *mappedPack {
	sort.Slice(ids, func(a, b int) bool { return bytes.Compare(ids[a][:], ids[b][:]) < 0 })
	n := len(ids)
	var b bytes.Buffer
	b.WriteString("\xfftOc")
	_ = binary.Write(&b, binary.BigEndian, uint32(2))
	for k := 0; k < 256; k++ {
		c := sort.Search(n, func(i int) bool { return int(ids[i][0]) > k })
		_ = binary.Write(&b, binary.BigEndian, uint32(c))
	}
	for _, h := range ids {
		b.Write(h[:])
	}
	b.Write(make([]byte, 4*n)) // CRCs
	var big []uint64
	for i := range ids {
		if i%7 == 3 {
			_ = binary.Write(&b, binary.BigEndian, uint32(0x80000000|len(big)))
			big = append(big, 1<<33+uint64(i))
		} else {
			_ = binary.Write(&b, binary.BigEndian, uint32(1000+i))
		}
	}
	for _, o := range big {
		_ = binary.Write(&b, binary.BigEndian, o)
	}
	b.Write(make([]byte, 40))
	return &mappedPack{idx: b.Bytes(), n: n}
}

// checkOffsets compares offset with offsetBinary for every id of p, for
// ids next to them and for random ones; found counts the ids found.
func checkOffsets(t *testing.T, p *mappedPack, rng *rand.Rand, random int) (found int) {
	t.Helper()
	names := p.idx[8+256*4:]
	try := func(h plumbing.Hash) {
		o, ok := p.offset(h)
		wo, wok := p.offsetBinary(h)
		if o != wo || ok != wok {
			t.Fatalf("offset(%s) = %d %v, the binary search's %d %v", h, o, ok, wo, wok)
		}
		if ok {
			found++
		}
	}
	for i := 0; i < p.n; i++ {
		var h plumbing.Hash
		copy(h[:], names[i*20:])
		try(h)
		// Its neighbours in the order: the last byte ±1, and an id with
		// the same first 8 bytes (the interpolation's key) but another tail.
		for _, d := range []int{19, 12, 8} {
			for _, s := range []int{-1, 1} {
				g := h
				g[d] += byte(s)
				try(g)
			}
		}
	}
	for range random {
		var h plumbing.Hash
		rng.Read(h[:])
		try(h)
	}
	return found
}

// TestOffsetAsBinarySearch: the index lookup with interpolated probes
// (offset) gives the former binary search's answer (offsetBinary) for
// every id of real and synthetic indexes, ids beside them and random ids:
// evenly spread ids, ids crowded in a few places (where interpolation
// guesses badly), ids sharing their first 8 bytes, buckets of 0 to 70,000
// ids, 64-bit offsets. The seed is logged.
func TestOffsetAsBinarySearch(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	randomID := func() (h plumbing.Hash) { rng.Read(h[:]); return }
	shapes := []struct {
		name string
		ids  func() []plumbing.Hash
	}{
		{"empty", func() []plumbing.Hash { return nil }},
		{"one", func() []plumbing.Hash { return []plumbing.Hash{randomID()} }},
		{"even 1000", func() []plumbing.Hash {
			var ids []plumbing.Hash
			for range 1000 {
				ids = append(ids, randomID())
			}
			return ids
		}},
		{"even 200000", func() []plumbing.Hash {
			var ids []plumbing.Hash
			for range 200000 {
				ids = append(ids, randomID())
			}
			return ids
		}},
		{"one bucket 70000", func() []plumbing.Hash {
			var ids []plumbing.Hash
			for range 70000 {
				h := randomID()
				h[0] = 0x5a
				ids = append(ids, h)
			}
			return ids
		}},
		{"crowded", func() []plumbing.Hash {
			// Each bucket: its ends far apart, everything else in a
			// narrow band near one end, the middle or the other.
			var ids []plumbing.Hash
			for k := range 256 {
				lo, hi := randomID(), randomID()
				lo[0], hi[0] = byte(k), byte(k)
				binary.BigEndian.PutUint64(lo[:8], uint64(k)<<56)
				binary.BigEndian.PutUint64(hi[:8], uint64(k)<<56|(1<<56-1))
				ids = append(ids, lo, hi)
				base := uint64(k)<<56 | []uint64{1 << 10, 1 << 55, 1<<56 - 1<<22}[rng.Intn(3)]
				for range 300 {
					h := randomID()
					binary.BigEndian.PutUint64(h[:8], base+uint64(rng.Intn(1<<20)))
					ids = append(ids, h)
				}
			}
			return ids
		}},
		{"same first 8 bytes", func() []plumbing.Hash {
			var ids []plumbing.Hash
			for range 40 {
				h := randomID()
				for range 1 + rng.Intn(200) {
					g := randomID()
					copy(g[:8], h[:8])
					ids = append(ids, g)
				}
			}
			return ids
		}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			ids := sh.ids()
			p := syntheticIdx(ids)
			if found := checkOffsets(t, p, rng, 20000); found < len(ids) {
				t.Fatalf("found %d of %d ids", found, len(ids))
			}
		})
	}
	// The indexes git wrote: a memory repacked by git, and the big
	// memory's packs when GIT_MEM_TEST_PACKS names a pack folder.
	r := roundsRepo(t, 150)
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "repack", "-a", "-d").CombinedOutput(); err != nil {
		t.Fatalf("git repack: %v\n%s", err, out)
	}
	dirs := []string{filepath.Join(r.Dir(), "objects", "pack")}
	if d := os.Getenv("GIT_MEM_TEST_PACKS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		idxs, _ := filepath.Glob(filepath.Join(d, "pack-*.idx"))
		if len(idxs) == 0 {
			t.Fatalf("no pack in %s", d)
		}
		for _, idx := range idxs {
			p, err := mapPack(strings.TrimSuffix(idx, ".idx"))
			if err != nil {
				t.Fatal(err)
			}
			if found := checkOffsets(t, p, rng, 20000); found < p.n {
				t.Fatalf("%s: found %d of %d ids", idx, found, p.n)
			}
			t.Logf("%s: %d ids", idx, p.n)
			for _, u := range p.unmap {
				u()
			}
		}
	}
}
