package gitstore

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/klauspost/compress/zlib"
)

// writePackOpt writes the objects as one undeltified pack (v2) with its .idx.
// go-git's own encoder compresses at the default zlib level and its pack
// writer re-parses the pack to index it; both cost more than the git
// objects themselves, so this writer compresses at BestSpeed and builds
// the index from what it wrote. klauspost/compress's zlib, not the standard
// library's: half the time for a commit-sized object (19 against 36 µs at
// BestSpeed, the same size within 4 %), which is most of a forget's flush
// of 95,000 rewritten commits. The .pack lands before its .idx, each by
// rename, so a reader never sees an index without its pack.
//
// Trees smaller than storeTreesBelow bytes are stored uncompressed (zlib's
// stored blocks). A forget's rewrite stores every tree (math.MaxInt64): it
// writes a few trees per rewritten commit, and deflating them (small,
// mostly hashes) was a third of its CPU at 100,000 exchanges; the purge
// that follows repacks them (with deltas) at no measurable cost in size
// (15,000 exchanges: 32.11 → 32.14 MB after the purge, 4.9 → 3.8 s CPU for
// the forget, docs/BENCHMARKS.md). An add stores those below smallTree
// (see flush).
func (r *Repo) writePackOpt(mem *memory.Storage, order []plumbing.Hash, storeTreesBelow int64) error {
	dir := filepath.Join(r.dir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "tmp_gitmem_pack_")
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
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
	// The objects are deflated on all cores, a window at a time, and
	// written in order: the same bytes as deflating them one after the
	// other (TestPackEntriesAreSerial), but the add of a batch of exchanges
	// no longer leaves a core idle while its pack is compressed
	// (docs/BENCHMARKS.md, session 17).
	ents := make([]packEntry, min(len(order), packWindow))
	zs := newDeflaters(min(runtime.GOMAXPROCS(0), len(order)), storeTreesBelow)
	for start := 0; start < len(order); start += packWindow {
		win := order[start:min(start+packWindow, len(order))]
		if err := deflateEntries(mem, win, ents[:len(win)], zs); err != nil {
			return err
		}
		for i, h := range win {
			pos := cw.n
			if _, err := cw.Write(ents[i].data); err != nil {
				return err
			}
			if err := idx.OnInflatedObjectContent(h, pos, ents[i].crc, nil); err != nil {
				return err
			}
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
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := idx.OnFooter(packHash); err != nil {
		return err
	}
	mi, err := idx.Index()
	if err != nil {
		return err
	}
	// The .idx lists an object once; a pack whose header counts more
	// (an object written twice) is refused by git: never installed.
	if n, err := mi.Count(); err != nil || n != int64(len(order)) {
		return fmt.Errorf("write pack: %d objects given, %d distinct: not installed (%v)", len(order), n, err)
	}
	if err := installPack(dir, tmp.Name(), mi, packHash); err != nil {
		return err
	}
	r.st.refresh()
	return nil
}

// packWindow is how many objects writePackOpt deflates before it writes
// them: a few MB of compressed exchanges held at once.
const packWindow = 256

// packEntry is one object as a pack holds it: its type and size header and
// its deflated content, and their CRC-32 (for the .idx).
type packEntry struct {
	data []byte
	crc  uint32
}

// deflater is one worker's zlib writers: zw for every object but the trees
// a pack stores (below storeBelow bytes), which go through store, at
// NoCompression (nil when no tree is stored). Made once per pack: each
// holds ~1 MB of tables.
type deflater struct {
	zw, store  *zlib.Writer
	storeBelow int64
}

func newDeflaters(n int, storeTreesBelow int64) []deflater {
	zs := make([]deflater, n)
	for i := range zs {
		zs[i].zw, _ = zlib.NewWriterLevel(nil, zlib.BestSpeed)
		if storeTreesBelow > 0 {
			zs[i].store, _ = zlib.NewWriterLevel(nil, zlib.NoCompression)
			zs[i].storeBelow = storeTreesBelow
		}
	}
	return zs
}

// deflateEntries fills ents[i] with the pack entry of objects[i], one
// worker per deflater. Each entry's bytes depend on its object alone (a
// fresh or reset zlib writer gives the same stream), so the order of the
// work does not show in the pack. ents' buffers are reused.
func deflateEntries(mem *memory.Storage, objects []plumbing.Hash, ents []packEntry, zs []deflater) error {
	workers := min(len(zs), len(objects))
	errs := make([]error, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(objects) {
					return
				}
				if err := deflateEntry(mem, objects[i], &ents[i], &zs[w]); err != nil {
					errs[w] = err
					next.Store(int64(len(objects))) // the others stop too
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// deflateEntry writes object h's pack entry into e: a tree below
// z.storeBelow bytes stored (zlib at NoCompression), the rest deflated
// at BestSpeed.
func deflateEntry(mem *memory.Storage, h plumbing.Hash, e *packEntry, z *deflater) error {
	obj, err := mem.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return err
	}
	buf := bytes.NewBuffer(e.data[:0])
	buf.Write(objectHeader(obj.Type(), obj.Size()))
	rd, err := obj.Reader()
	if err != nil {
		return err
	}
	zw := z.zw
	if obj.Type() == plumbing.TreeObject && obj.Size() < z.storeBelow {
		zw = z.store
	}
	zw.Reset(buf)
	if _, err := io.Copy(zw, rd); err != nil {
		rd.Close()
		return err
	}
	rd.Close()
	if err := zw.Close(); err != nil {
		return err
	}
	e.data = buf.Bytes()
	e.crc = crc32.ChecksumIEEE(e.data)
	return nil
}

// removeOrphanPacks deletes .pack files without their .idx, left by a
// writer killed between the two renames (before this package wrote the
// .idx first) or by another tool: go-git cannot read any object while one
// exists. Only packs older than a minute go, so one that a git command is
// finishing right now is left alone; their objects were never referenced,
// since main moves only after a pack is complete.
func removeOrphanPacks(gitDir string) {
	packs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "pack-*.pack"))
	for _, p := range packs {
		if _, err := os.Stat(strings.TrimSuffix(p, ".pack") + ".idx"); !os.IsNotExist(err) {
			continue
		}
		if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > time.Minute {
			_ = os.Remove(p)
		}
	}
}

// objectHeader is a pack entry's type and size header.
func objectHeader(t plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(t)<<4 | byte(size&0x0f)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}
