package gitstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/memory"
)

// BadPack is a pack whose header counts another number of objects than
// its .idx lists. A forget before main e544dbc wrote such packs (the same
// rewritten tree twice into one pack): git refuses the whole pack ("claims
// to have 125 objects while index indicates 116"), so the purge's
// pack-objects failed and the forget stayed pending.
type BadPack struct {
	Pack   string `json:"pack"` // the .pack file
	Header int    `json:"header"`
	Index  int    `json:"index"`
}

// BadPacks lists the packs whose header count differs from their index's
// (two 4-byte reads per pack).
func (r *Repo) BadPacks() []BadPack {
	var out []BadPack
	for _, idx := range listPacks(r.dir) {
		pack := strings.TrimSuffix(idx, ".idx") + ".pack"
		h, ok1 := readUint32At(pack, 0, "PACK")
		n, ok2 := readUint32At(idx, 8+255*4, "\xfftOc")
		if ok1 && ok2 && h != n {
			out = append(out, BadPack{Pack: pack, Header: int(h), Index: int(n)})
		}
	}
	return out
}

// readUint32At reads the big-endian uint32 at off of a version-2 pack
// (off 0: the count at 8) or index file that starts with magic.
func readUint32At(path string, off int64, magic string) (uint32, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var head [8]byte
	if _, err := f.ReadAt(head[:], 0); err != nil || string(head[:4]) != magic || binary.BigEndian.Uint32(head[4:]) != 2 {
		return 0, false
	}
	if off == 0 {
		off = 8
	}
	var b [4]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint32(b[:]), true
}

// RepairPacks rewrites every pack BadPacks lists: each object its .idx
// lists is read from it (hashed again: it must be the id listed), written
// once into a new pack by the normal pack writer and installed; only then
// is the bad pack removed. Before that, every entry of the bad pack (by a
// scan from its header) must be an object its index lists, so nothing
// that only the pack's unindexed entries hold is lost; a pack that fails
// that is left as it is, with an error.
//
// It takes mem/pack.lock, like the background repack, and no objects
// level: like the geometric roll-up it deletes only a pack whose every
// object is already in another installed pack, so no writer's or
// reader's object is ever missing; a reader that has the old pack mapped
// keeps reading it until it lets go of it.
func (r *Repo) RepairPacks() (mended []BadPack, err error) {
	if len(r.BadPacks()) == 0 {
		return nil, nil
	}
	pl, err := LockFile(filepath.Join(r.MemDir(), "pack.lock"), 10*time.Minute)
	if err != nil {
		return nil, err
	}
	defer pl.Unlock()
	for _, b := range r.BadPacks() { // again, under the lock
		if err := r.repairPack(b); err != nil {
			return mended, fmt.Errorf("mend %s: %w", filepath.Base(b.Pack), err)
		}
		mended = append(mended, b)
	}
	return mended, nil
}

func (r *Repo) repairPack(b BadPack) error {
	base := strings.TrimSuffix(b.Pack, ".pack")
	p, err := mapPack(base)
	if err != nil {
		return err
	}
	defer func() {
		for _, u := range p.unmap {
			u()
		}
	}()
	s := openPackSet(r.dir) // ref-delta bases in other packs
	defer runtime.KeepAlive(s)

	// The index's objects, by offset.
	type ent struct {
		h   plumbing.Hash
		off int64
	}
	ents := make([]ent, 0, p.n)
	names := p.idx[8+256*4:]
	indexed := make(map[plumbing.Hash]bool, p.n)
	atOff := make(map[int64]bool, p.n)
	for i := 0; i < p.n; i++ {
		var h plumbing.Hash
		copy(h[:], names[i*20:i*20+20])
		off, ok := p.offset(h)
		if !ok {
			return fmt.Errorf("index entry %s has no offset", h)
		}
		ents = append(ents, ent{h, off})
		indexed[h] = true
		atOff[off] = true
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].off < ents[j].off })

	mem := memory.NewStorage()
	order := make([]plumbing.Hash, 0, len(ents))
	for _, e := range ents {
		typ, data, err := s.object(p, e.off, 0)
		if err != nil {
			return fmt.Errorf("object %s: %w", e.h, err)
		}
		if !typ.Valid() || typ > plumbing.TagObject || objectHash(typ, data) != e.h {
			return fmt.Errorf("object %s does not read back as itself", e.h)
		}
		o := mem.NewEncodedObject()
		o.SetType(typ)
		o.SetSize(int64(len(data)))
		w, _ := o.Writer()
		_, _ = w.Write(data)
		_ = w.Close()
		if _, err := mem.SetEncodedObject(o); err != nil {
			return err
		}
		order = append(order, e.h)
	}

	// Every entry of the pack, the unindexed ones included, must be one of
	// those objects.
	sc := packfile.NewScanner(bytes.NewReader(p.pack))
	_, count, err := sc.Header()
	if err != nil {
		return err
	}
	for i := uint32(0); i < count; i++ {
		oh, err := sc.NextObjectHeader()
		if err != nil {
			return fmt.Errorf("scan entry %d: %w", i, err)
		}
		if atOff[oh.Offset] {
			continue
		}
		typ, data, err := s.object(p, oh.Offset, 0)
		if err != nil {
			return fmt.Errorf("unindexed entry at %d: %w", oh.Offset, err)
		}
		if h := objectHash(typ, data); !indexed[h] {
			return fmt.Errorf("unindexed entry at %d holds %s, which the index does not list: left as it is", oh.Offset, h)
		}
	}
	runtime.KeepAlive(s)

	if err := r.writePackOpt(mem, order, 0); err != nil {
		return err
	}
	// Every object is in the new pack: the bad one goes, .idx after .pack
	// (as Purge).
	for _, ext := range []string{".pack", ".idx", ".rev", ".bitmap", ".keep", ".mtimes", ".promisor"} {
		_ = os.Remove(base + ext)
	}
	_ = os.Remove(filepath.Join(r.dir, "objects", "pack", "multi-pack-index"))
	syncDir(filepath.Join(r.dir, "objects", "pack"))
	r.st.refresh()
	return nil
}
