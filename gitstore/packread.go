package gitstore

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/klauspost/compress/zlib"

	"github.com/gitmem/git-mem/internal/mapfile"
)

// packSet reads trees straight from the packs, memory-mapped, for the
// tree walks of an append (Has, then the append's own edits): go-git
// opens the pack file again for every object it reads and, to look an
// object up in its cache, first builds a map from offset to id over every
// object of each pack it touches (700,000 entries at 100,000 exchanges).
// That map and those opens were half of the 0.23 s an add of 1,000 into
// 100,000 spent reading ~1,000 trees, and the map's pages a tenth of its
// system time.
//
// It is only a faster way to the same bytes: every object it returns is
// hashed again and must be the id asked for, and whatever it cannot read
// (an object that is loose, in a pack made after the set was listed, a
// damaged or unknown entry) is left to go-git, which reads it as before.
// A pack that a repack deletes while it is mapped stays readable until it
// is unmapped, which happens only once no reader holds the set.
type packSet struct {
	packs []*mappedPack
	// bases keeps the delta bases resolved, by pack and offset, up to
	// basesMax bytes (then it starts again): a chain's base is read once
	// for the objects deltified against it, as go-git's cache does.
	mu        sync.Mutex
	bases     map[baseKey]baseObj
	basesSize int
	// dirTime is the pack folder's modification time when listed: a miss
	// in a folder that changed since (a fetch or a writer added a pack)
	// lists it again (objectStore.packSet).
	dirTime time.Time
	// names are the pack indexes listed (sorted): ReadPathsPacked reads
	// only from a set whose listing is the folder's now.
	names []string
	dir   string // the git dir (ReadPathsPacked's loose objects)
}

type baseKey struct {
	p   *mappedPack
	off int64
}

// baseObj is a resolved delta base, its type and content, shared uncopied
// by the objects deltified against it: base hands it only to object's
// PatchDelta, which reads it. (A copy with the type byte in front was
// half of what a cold search's exact tier allocated at 1,000,000
// exchanges, 3.4 of 6.9 MB, each fresh page a fault; docs/BENCHMARKS.md,
// session 29.)
type baseObj struct {
	typ  plumbing.ObjectType
	data []byte
}

const basesMax = 32 << 20

func (s *packSet) base(p *mappedPack, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	k := baseKey{p, off}
	s.mu.Lock()
	b, ok := s.bases[k]
	s.mu.Unlock()
	if ok {
		return b.typ, b.data, nil
	}
	typ, data, err := s.object(p, off, depth)
	if err != nil {
		return typ, data, err
	}
	if cap(data)-len(data) > len(data)/8 {
		// PatchDelta's buffer grows by doubling past 64 KB: kept, it
		// would hold up to twice what basesMax counts.
		data = append([]byte(nil), data...)
	}
	s.mu.Lock()
	// Counted as before the copy was dropped: the type byte and the content.
	if s.bases == nil || s.basesSize+1+len(data) > basesMax {
		s.bases, s.basesSize = map[baseKey]baseObj{}, 0
	}
	s.bases[k] = baseObj{typ, data}
	s.basesSize += 1 + len(data)
	s.mu.Unlock()
	return typ, data, nil
}

type mappedPack struct {
	idx, pack []byte
	n         int
	unmap     []func()
}

// openPackSet maps every pack of the repo at dir that has its index.
// Packs it cannot map or whose index it does not understand are skipped
// (go-git reads their objects).
func openPackSet(dir string) *packSet {
	s := &packSet{dir: dir}
	if st, err := os.Stat(filepath.Join(dir, "objects", "pack")); err == nil {
		s.dirTime = st.ModTime()
	}
	names := listPacks(dir)
	s.names = names
	for _, name := range names {
		p, err := mapPack(strings.TrimSuffix(name, ".idx"))
		if err != nil {
			continue
		}
		s.packs = append(s.packs, p)
	}
	runtime.AddCleanup(s, func(ps []*mappedPack) {
		for _, p := range ps {
			for _, u := range p.unmap {
				u()
			}
		}
	}, s.packs)
	return s
}

// listPacks names the pack indexes in dir's pack folder, sorted.
func listPacks(dir string) []string {
	names, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.idx"))
	return names
}

func mapPack(base string) (*mappedPack, error) {
	idx, ui, err := mapfile.Map(base + ".idx")
	if err != nil {
		return nil, err
	}
	pack, up, err := mapfile.Map(base + ".pack")
	if err != nil {
		ui()
		return nil, err
	}
	p := &mappedPack{idx: idx, pack: pack, unmap: []func(){ui, up}}
	// Version 2 only: magic, version, 256 fan-out counts, then n ids, n
	// CRCs, n 32-bit offsets, the 64-bit offsets, two trailing ids.
	if len(idx) < 8+256*4+40 || string(idx[:4]) != "\xfftOc" || binary.BigEndian.Uint32(idx[4:]) != 2 ||
		len(pack) < 32 || string(pack[:4]) != "PACK" {
		ui()
		up()
		return nil, errors.New("not a version 2 pack index")
	}
	p.n = int(binary.BigEndian.Uint32(idx[8+255*4:]))
	if len(idx) < 8+256*4+p.n*(20+4+4)+40 {
		ui()
		up()
		return nil, errors.New("pack index too short")
	}
	return p, nil
}

// offset finds h in the pack's index.
//
// The ids of a fan-out bucket are sorted and, being hashes, spread evenly:
// the first probe goes where h's first 8 bytes fall in the bucket's range
// of them (interpolation), the next ones at growing distances from it until h
// is bracketed, and a binary search takes the range left. Every probe
// splits the range as a binary search's does (the ids below the range are
// smaller than h, the ids from its end on are not), so on a sorted index
// the answer is the binary search's (offsetBinary in the tests, the former
// code). What it saves is page faults: at 1,000,000 exchanges a bucket's
// ids are 427 KB, and the binary search's probes fell in ~2.9 of its
// 64 KB windows (the kernel maps a window a fault) where these fall in
// about one.
func (p *mappedPack) offset(h plumbing.Hash) (int64, bool) {
	fan := func(b int) int { return int(binary.BigEndian.Uint32(p.idx[8+b*4:])) }
	lo, hi := 0, fan(int(h[0]))
	if h[0] > 0 {
		lo = fan(int(h[0]) - 1)
	}
	if hi > p.n || lo > hi {
		return 0, false
	}
	names := p.idx[8+256*4:]
	cmp := func(m int) int { return bytes.Compare(names[m*20:m*20+20], h[:]) }
	if hi-lo > interpMin {
		// The bucket holds the ids whose first byte is h's: the other
		// seven of the first eight place h among them. (Reading the
		// bucket's first and last ids to interpolate between would touch
		// two windows more.)
		frac := float64(binary.BigEndian.Uint64(h[:8])<<8) / (1 << 64)
		g := min(lo+int(frac*float64(hi-lo)), hi-1)
		switch c := cmp(g); {
		case c == 0:
			return p.offsetAt(names, g)
		case c < 0: // h after g: probe g+8, g+16, g+32, … until past h
			lo = g + 1
			for step := interpStep; lo+step < hi; step *= 2 {
				m := lo + step
				c := cmp(m)
				if c == 0 {
					return p.offsetAt(names, m)
				}
				if c > 0 {
					hi = m
					break
				}
				lo = m + 1
			}
		default: // h before g
			hi = g
			for step := interpStep; hi-1-step >= lo; step *= 2 {
				m := hi - 1 - step
				c := cmp(m)
				if c == 0 {
					return p.offsetAt(names, m)
				}
				if c < 0 {
					lo = m + 1
					break
				}
				hi = m
			}
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := cmp(m); {
		case c == 0:
			return p.offsetAt(names, m)
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}

// offset's interpolated probe is made when more than interpMin ids are
// left (fewer fit in a page or two: bisected); the probes after it go
// interpStep ids from it, then twice as far each time.
const (
	interpMin  = 64
	interpStep = 8
)

// offsetAt is the pack offset of the m-th id of the index (names is the
// index from its ids on).
func (p *mappedPack) offsetAt(names []byte, m int) (int64, bool) {
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
}

var zlibReaders sync.Pool

// inflate reads size bytes of the zlib stream at b.
func inflate(b []byte, size uint64) ([]byte, error) {
	// Deflate expands at most ~1,032 times: a size past that (a damaged
	// header) is refused before anything is allocated for it.
	if size > 1<<30 || size > uint64(len(b))*1100+1024 {
		return nil, fmt.Errorf("object of %d bytes in %d", size, len(b))
	}
	var zr io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(bytes.NewReader(b), nil); err != nil {
			return nil, err
		}
	} else {
		var err error
		if zr, err = zlib.NewReader(bytes.NewReader(b)); err != nil {
			return nil, err
		}
	}
	defer zlibReaders.Put(zr)
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, err
	}
	return out, nil
}

// objectHeaderAt parses the header of the pack entry that starts b: its
// type, its inflated size, and the header's length.
func objectHeaderAt(b []byte) (typ plumbing.ObjectType, size uint64, n int, err error) {
	if len(b) == 0 {
		return 0, 0, 0, errors.New("bad object header")
	}
	c := b[0]
	typ = plumbing.ObjectType(c >> 4 & 7)
	size = uint64(c & 15)
	i, shift := 1, 4
	for c&0x80 != 0 {
		if i >= len(b) || shift > 60 {
			return 0, 0, 0, errors.New("bad object header")
		}
		c = b[i]
		size |= uint64(c&0x7f) << shift
		shift += 7
		i++
	}
	return typ, size, i, nil
}

// ofsDeltaAt parses an offset delta's distance back to its base, which
// starts b, and its length.
func ofsDeltaAt(b []byte) (neg int64, n int, err error) {
	if len(b) == 0 {
		return 0, 0, errors.New("bad delta header")
	}
	c := b[0]
	i := 1
	neg = int64(c & 0x7f)
	for c&0x80 != 0 {
		if i >= len(b) || neg > 1<<48 {
			return 0, 0, errors.New("bad delta offset")
		}
		c = b[i]
		i++
		neg = (neg+1)<<7 | int64(c&0x7f)
	}
	return neg, i, nil
}

// object returns the type and content of the object at off, resolving
// deltas (depth bounds a delta chain).
func (s *packSet) object(p *mappedPack, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > 500 {
		return 0, nil, errors.New("delta chain too long")
	}
	if off < 12 || off >= int64(len(p.pack)) {
		return 0, nil, fmt.Errorf("offset %d outside the pack", off)
	}
	b := p.pack[off:]
	typ, size, i, err := objectHeaderAt(b)
	if err != nil {
		return 0, nil, err
	}
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		data, err := inflate(b[i:], size)
		return typ, data, err
	case plumbing.OFSDeltaObject, plumbing.REFDeltaObject:
		bp, boff, delta, err := s.deltaAt(p, off, typ, b, i, size)
		if err != nil {
			return 0, nil, err
		}
		bt, base, err := s.base(bp, boff, depth+1)
		if err != nil {
			return 0, nil, err
		}
		data, err := packfile.PatchDelta(base, delta)
		return bt, data, err
	}
	return 0, nil, fmt.Errorf("object type %d", typ)
}

// deltaAt reads the delta object of type typ at off of p (b is the pack
// from off, i the end of its header): its base's pack and offset, and the
// inflated delta.
func (s *packSet) deltaAt(p *mappedPack, off int64, typ plumbing.ObjectType, b []byte, i int, size uint64) (*mappedPack, int64, []byte, error) {
	if typ == plumbing.OFSDeltaObject {
		neg, n, err := ofsDeltaAt(b[i:])
		if err != nil {
			return nil, 0, nil, err
		}
		delta, err := inflate(b[i+n:], size)
		return p, off - neg, delta, err
	}
	if i+20 > len(b) {
		return nil, 0, nil, errors.New("bad delta header")
	}
	var bh plumbing.Hash
	copy(bh[:], b[i:i+20])
	delta, err := inflate(b[i+20:], size)
	if err != nil {
		return nil, 0, nil, err
	}
	bp, boff, ok := s.find(bh)
	if !ok {
		return nil, 0, nil, plumbing.ErrObjectNotFound
	}
	return bp, boff, delta, nil
}

func (s *packSet) find(h plumbing.Hash) (*mappedPack, int64, bool) {
	for _, p := range s.packs {
		if off, ok := p.offset(h); ok {
			return p, off, true
		}
	}
	return nil, 0, false
}

// treeObject returns tree h as read here (see verified).
func (s *packSet) treeObject(h plumbing.Hash) (plumbing.EncodedObject, bool) {
	mo, ok := treeObject(s.verified(h))
	if !ok {
		return nil, false
	}
	return mo, true
}

// treeObject wraps a verified read of a tree as go-git's object; ok is
// false when the read failed or is not a tree.
func treeObject(typ plumbing.ObjectType, data []byte, ok bool) (*plumbing.MemoryObject, bool) {
	if !ok || typ != plumbing.TreeObject {
		return nil, false
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(plumbing.TreeObject)
	if _, err := mo.Write(data); err != nil {
		return nil, false
	}
	return mo, true
}

// BlobID is the id git gives a blob of b (memory's lookup compares it with
// the blob stored at an exchange's path).
func BlobID(b []byte) plumbing.Hash { return objectHash(plumbing.BlobObject, b) }

// objectHash is git's id of an object: the SHA-1 of its header and bytes.
func objectHash(typ plumbing.ObjectType, data []byte) plumbing.Hash {
	return hashObject(sha1.New(), typ, data)
}

// hashObject is an object's id by sum (SHA-1, or sha1cd for what a remote
// sent).
func hashObject(sum hash.Hash, typ plumbing.ObjectType, data []byte) plumbing.Hash {
	sum.Write([]byte(typ.String() + " " + strconv.Itoa(len(data)) + "\x00"))
	sum.Write(data)
	var h plumbing.Hash
	sum.Sum(h[:0])
	return h
}

// verified returns the type and content of object h once they hash to h;
// ok is false when it cannot (the caller reads the object through go-git).
func (s *packSet) verified(h plumbing.Hash) (typ plumbing.ObjectType, data []byte, ok bool) {
	typ, data, _, ok = s.verifiedNear(h, nil)
	return typ, data, ok
}

// verifiedNear is verified looking in pack near first (the pack of an
// object read just before: a commit's trees and blobs are mostly in its
// pack), and says which pack held h.
func (s *packSet) verifiedNear(h plumbing.Hash, near *mappedPack) (typ plumbing.ObjectType, data []byte, p *mappedPack, ok bool) {
	return s.verifiedNearOnce(h, near, nil)
}

// verifiedNearOnce is verifiedNear resolving deltas through objectOnce
// with bufs (object when bufs is nil).
func (s *packSet) verifiedNearOnce(h plumbing.Hash, near *mappedPack, bufs *[2][]byte) (typ plumbing.ObjectType, data []byte, p *mappedPack, ok bool) {
	var off int64
	found := false
	if near != nil {
		off, found = near.offset(h)
		p = near
	}
	if !found {
		if p, off, found = s.find(h); !found {
			return 0, nil, nil, false
		}
	}
	var err error
	if bufs != nil {
		typ, data, err = s.objectOnce(p, off, bufs)
	} else {
		typ, data, err = s.object(p, off, 0)
	}
	runtime.KeepAlive(s) // the mappings live as long as s
	if err != nil || !typ.Valid() || typ > plumbing.TagObject {
		return 0, nil, nil, false
	}
	if objectHash(typ, data) != h {
		return 0, nil, nil, false
	}
	return typ, data, p, true
}

// tree returns the entries of tree h (see treeObject).
func (s *packSet) tree(h plumbing.Hash) ([]object.TreeEntry, bool) {
	obj, ok := s.treeObject(h)
	if !ok {
		return nil, false
	}
	var t object.Tree
	if err := t.Decode(obj); err != nil {
		return nil, false
	}
	return t.Entries, true
}

// stored returns object h as its pack stores it, when undeltified: type,
// size and a copy of its zlib stream, which a new pack can hold as it is
// (sync's push sends it without deflating it again). The stream is
// inflated to its end (zlib's checksum included) and the content hashed:
// ok only when that is h.
func (s *packSet) stored(h plumbing.Hash) (typ plumbing.ObjectType, size int64, z []byte, ok bool) {
	typ, data, z, ok := s.readStored(h)
	if !ok || z == nil {
		return 0, 0, nil, false
	}
	return typ, int64(len(data)), z, true
}

// readStored is verified(h) that also returns, when the pack stores h
// undeltified, a copy of its zlib stream (else z is nil): one inflate
// gives both the content (a tree the sync's walk decodes) and what the
// push sends (stored).
func (s *packSet) readStored(h plumbing.Hash) (typ plumbing.ObjectType, data, z []byte, ok bool) {
	p, off, found := s.find(h)
	if !found || off < 12 || off >= int64(len(p.pack)) {
		return 0, nil, nil, false
	}
	defer runtime.KeepAlive(s)
	b := p.pack[off:]
	c := b[0]
	typ = plumbing.ObjectType(c >> 4 & 7)
	if typ < plumbing.CommitObject || typ > plumbing.TagObject {
		typ, data, ok = s.verified(h)
		return typ, data, nil, ok
	}
	n := uint64(c & 15)
	i, shift := 1, 4
	for c&0x80 != 0 {
		if i >= len(b) || shift > 60 {
			return 0, nil, nil, false
		}
		c = b[i]
		n |= uint64(c&0x7f) << shift
		shift += 7
		i++
	}
	if n > 1<<30 || n > uint64(len(b))*1100+1024 {
		return 0, nil, nil, false
	}
	rd := bytes.NewReader(b[i:])
	var zr io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(rd, nil); err != nil {
			return 0, nil, nil, false
		}
	} else {
		var err error
		if zr, err = zlib.NewReader(rd); err != nil {
			return 0, nil, nil, false
		}
	}
	defer zlibReaders.Put(zr)
	data = make([]byte, n)
	if _, err := io.ReadFull(zr, data); err != nil {
		return 0, nil, nil, false
	}
	// To the stream's end: the checksum is read and checked, and nothing
	// is left over.
	var one [1]byte
	if k, err := zr.Read(one[:]); k != 0 || err != io.EOF {
		return 0, nil, nil, false
	}
	if objectHash(typ, data) != h {
		return 0, nil, nil, false
	}
	used := len(b) - i - rd.Len()
	return typ, data, append([]byte(nil), b[i:i+used]...), true
}
