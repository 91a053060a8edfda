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
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/klauspost/compress/zlib"
	"github.com/pjbgf/sha1cd"
)

// PackfileWriter receives the pack of a fetch (go-git hands it the
// stream when the storage has this method) and indexes it here rather
// than with go-git's parser, which inflated every object twice with the
// standard library's zlib (0.22–0.24 s of a sync that fetches 1,000 new
// exchanges at 100,000, most of it inflating). This indexer inflates each
// object once (klauspost's zlib, as the rest of this package), resolves
// its deltas within the pack and names every object with the same
// collision-detecting SHA-1 go-git and git use (sha1cd: the pack comes
// from a remote). What it does not handle — a pack larger than
// fetchPackMax, a delta whose base is not in the pack (a thin pack), a
// version or type it does not know — goes to go-git's writer as before,
// from the same bytes; a pack damaged anywhere (its checksum, an object
// that does not inflate to its size) is refused, as go-git refuses it.
func (s *objectStore) PackfileWriter() (io.WriteCloser, error) {
	dir := filepath.Join(s.dir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "tmp_gitmem_fetch_")
	if err != nil {
		return nil, err
	}
	w := &fetchPackWriter{s: s, dir: dir, f: f, bw: bufio.NewWriterSize(f, 1<<20), in: newPackStream(), scanned: make(chan packScan, 1)}
	go func() { w.scanned <- scanPack(w.in) }()
	return w, nil
}

// fetchPackMax bounds the pack the fast indexer holds in memory with its
// objects inflated; larger ones (a first fetch of a large memory) are
// indexed by go-git, which streams.
const fetchPackMax = 64 << 20

type fetchPackWriter struct {
	s   *objectStore
	dir string
	f   *os.File
	bw  *bufio.Writer
	n   int64
	// in holds the bytes received so far for scanPack, which inflates and
	// names the objects on its own goroutine as they arrive (the pack
	// comes over the last ~0.15 s of the remote's ~0.7 s, and indexing
	// it after the last byte took 0.30 s at 1,000,000 exchanges).
	in      *packStream
	scanned chan packScan
}

func (w *fetchPackWriter) Write(p []byte) (int, error) {
	n, err := w.bw.Write(p)
	w.n += int64(n)
	if w.n > fetchPackMax {
		w.in.abort() // go-git's turn (Close); nothing more is kept
	} else {
		w.in.write(p[:n])
	}
	return n, err
}

func (w *fetchPackWriter) Close() (err error) {
	name := w.f.Name()
	defer os.Remove(name) // renamed away when indexed
	w.in.close()
	sc := <-w.scanned
	if err := w.bw.Flush(); err != nil {
		w.f.Close()
		return err
	}
	if w.n == 0 {
		w.f.Close()
		return nil // nothing was fetched (go-git's writer does the same)
	}
	if w.n > fetchPackMax {
		return w.toGoGit()
	}
	idx, sum, objs, err := finishPack(w.in.all(), sc)
	if testHookFetchIndexed != nil {
		testHookFetchIndexed(err)
	}
	if errors.Is(err, errPackFallback) {
		return w.toGoGit()
	}
	if err != nil {
		w.f.Close()
		return fmt.Errorf("index fetched pack: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return err
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	if err := installPack(w.dir, name, idx, sum); err != nil {
		return err
	}
	if w.s.memo != nil {
		// The sync reads the fetched commits and trees next (the ancestry
		// walks, the merge): they are at hand, named.
		for _, o := range objs {
			if o.typ == plumbing.CommitObject || o.typ == plumbing.TreeObject {
				w.s.memo.keepRaw(o.id, o.typ, o.data)
			}
		}
	}
	return nil
}

// testHookFetchIndexed sees indexPack's outcome for each fetched pack.
var testHookFetchIndexed func(error)

// toGoGit hands the received bytes to go-git's pack writer.
func (w *fetchPackWriter) toGoGit() error {
	defer w.f.Close()
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	gw, err := w.s.Storage.PackfileWriter()
	if err != nil {
		return err
	}
	if _, err := io.Copy(gw, bufio.NewReaderSize(w.f, 1<<20)); err != nil {
		gw.Close()
		return err
	}
	return gw.Close()
}

// errPackFallback: a pack this indexer leaves to go-git.
var errPackFallback = errors.New("pack left to go-git")

// packObject is an object of a pack as indexPack read it.
type packObject struct {
	id   plumbing.Hash
	typ  plumbing.ObjectType
	data []byte
}

// indexPack names every object of pack (a whole version 2 pack, its
// checksum included) and returns its index, its checksum and its objects.
func indexPack(pack []byte) (*idxfile.MemoryIndex, plumbing.Hash, []packObject, error) {
	in := newPackStream()
	in.write(pack)
	in.close()
	return finishPack(in.all(), scanPack(in))
}

// scanEntry is an object of a pack as scanPack read it.
type scanEntry struct {
	off     int64
	crc     uint32
	typ     plumbing.ObjectType // the resolved type (0 while unresolved)
	data    []byte              // content once resolved, else the delta
	baseOff int64               // offset delta: the base's offset
	baseID  plumbing.Hash       // id delta: the base's id
	isRef   bool
	id      plumbing.Hash
}

// packScan is what scanPack read of a pack: its objects up to the first
// error, where they end and the SHA-1 of the bytes before that.
type packScan struct {
	ents []scanEntry
	end  int
	sum  [sha1.Size]byte
	err  error
}

// scanPack reads the objects of the pack coming into in, each as its bytes
// arrive: it inflates it, checks its size, takes its CRC and names it (a
// delta is resolved by finishPack). It stops at the first error, or once
// the header's count of objects is read.
func scanPack(in *packStream) (sc packScan) {
	r := &packReader{in: in}
	h := sha1.New()
	b := r.avail(12)
	if len(b) < 12 || string(b[:4]) != "PACK" {
		sc.err = errors.New("not a pack")
		return sc
	}
	if v := binary.BigEndian.Uint32(b[4:]); v != 2 && v != 3 {
		sc.err = errPackFallback
		return sc
	}
	n := int(binary.BigEndian.Uint32(b[8:]))
	h.Write(b[:12])
	r.pos = 12
	sc.ents = make([]scanEntry, 0, min(n, 1<<16))
	var zr io.ReadCloser
	total := 0
	for k := 0; k < n; k++ {
		pos := r.pos
		b := r.avail(32) // the longest header: a size and an id
		if len(b) == 0 {
			sc.err = errors.New("pack ends early")
			return sc
		}
		e := scanEntry{off: int64(pos)}
		typ, size, i, err := objectHeaderAt(b)
		if err != nil {
			sc.err = err
			return sc
		}
		switch typ {
		case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		case plumbing.OFSDeltaObject:
			neg, n, err := ofsDeltaAt(b[i:])
			if err != nil {
				sc.err = err
				return sc
			}
			i += n
			e.baseOff = e.off - neg
			if e.baseOff < 12 || neg <= 0 {
				sc.err = errors.New("delta base outside the pack")
				return sc
			}
		case plumbing.REFDeltaObject:
			if i+20 > len(b) {
				sc.err = errors.New("bad delta header")
				return sc
			}
			copy(e.baseID[:], b[i:i+20])
			e.isRef = true
			i += 20
		default:
			sc.err = errPackFallback
			return sc
		}
		total += int(size)
		if size > 1<<30 || total > 4*fetchPackMax {
			sc.err = errPackFallback
			return sc
		}
		r.pos += i
		if zr == nil {
			if zr, err = zlib.NewReader(r); err != nil {
				sc.err = err
				return sc
			}
		} else if err := zr.(zlib.Resetter).Reset(r, nil); err != nil {
			sc.err = err
			return sc
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(zr, data); err != nil {
			sc.err = fmt.Errorf("object at %d: %w", e.off, err)
			return sc
		}
		var one [1]byte
		if k, err := zr.Read(one[:]); k != 0 || err != io.EOF {
			sc.err = fmt.Errorf("object at %d: longer than its size", e.off)
			return sc
		}
		raw := r.buf[pos:r.pos] // the object's bytes, all read by now
		e.crc = crc32.ChecksumIEEE(raw)
		h.Write(raw)
		e.data = data
		if typ <= plumbing.TagObject {
			e.typ = typ
			e.id = packObjectID(typ, data)
		}
		sc.ents = append(sc.ents, e)
	}
	if zr != nil {
		zr.Close()
	}
	sc.end = r.pos
	h.Sum(sc.sum[:0])
	return sc
}

// finishPack checks pack (all the bytes received) as indexPack always has
// — what it is, its version, its checksum, then what scanPack found, and
// that nothing follows the last object — resolves the deltas and makes
// the index.
func finishPack(pack []byte, sc packScan) (*idxfile.MemoryIndex, plumbing.Hash, []packObject, error) {
	var sum plumbing.Hash
	if len(pack) < 12+20 || string(pack[:4]) != "PACK" {
		return nil, sum, nil, errors.New("not a pack")
	}
	if v := binary.BigEndian.Uint32(pack[4:]); v != 2 && v != 3 {
		return nil, sum, nil, errPackFallback
	}
	n := int(binary.BigEndian.Uint32(pack[8:]))
	body := pack[:len(pack)-20]
	if sc.err == nil && sc.end == len(body) {
		// scanPack hashed every byte of the body as it came.
		if !bytes.Equal(sc.sum[:], pack[len(pack)-20:]) {
			return nil, sum, nil, errors.New("pack checksum does not match")
		}
	} else if c := sha1.Sum(body); !bytes.Equal(c[:], pack[len(pack)-20:]) {
		return nil, sum, nil, errors.New("pack checksum does not match")
	}
	copy(sum[:], pack[len(pack)-20:])
	if n == 0 {
		return nil, sum, nil, errPackFallback
	}
	if n > len(body)/2 { // every entry takes at least two bytes
		return nil, sum, nil, errors.New("pack holds fewer objects than its header says")
	}
	if sc.err != nil {
		return nil, sum, nil, sc.err
	}
	if sc.end != len(body) {
		return nil, sum, nil, errors.New("bytes after the last object")
	}
	ents := sc.ents
	byOff := make(map[int64]int, n)
	for k := range ents {
		byOff[ents[k].off] = k
	}

	// Deltas: an offset delta's base comes before it; an id delta's may
	// come anywhere in the pack (rounds until none is left), or outside it.
	byID := make(map[plumbing.Hash]int, n)
	for k := range ents {
		if ents[k].typ != 0 {
			byID[ents[k].id] = k
		}
	}
	for {
		left, progress := false, false
		for k := range ents {
			e := &ents[k]
			if e.typ != 0 {
				continue
			}
			var bk int
			var ok bool
			if e.isRef {
				bk, ok = byID[e.baseID]
			} else {
				bk, ok = byOff[e.baseOff]
			}
			if !ok && !e.isRef {
				return nil, sum, nil, errors.New("delta base is not an object of the pack")
			}
			if !ok || ents[bk].typ == 0 {
				left = true
				continue
			}
			data, err := packfile.PatchDelta(ents[bk].data, e.data)
			if err != nil {
				return nil, sum, nil, fmt.Errorf("object at %d: %w", e.off, err)
			}
			e.typ, e.data = ents[bk].typ, data
			e.id = packObjectID(e.typ, data)
			byID[e.id] = k
			progress = true
		}
		if !left {
			break
		}
		if !progress {
			return nil, sum, nil, errPackFallback // a thin pack: bases outside it
		}
	}

	w := &idxfile.Writer{}
	if err := w.OnHeader(uint32(n)); err != nil {
		return nil, sum, nil, err
	}
	for _, e := range ents {
		if err := w.OnInflatedObjectContent(e.id, e.off, e.crc, nil); err != nil {
			return nil, sum, nil, err
		}
	}
	if err := w.OnFooter(sum); err != nil {
		return nil, sum, nil, err
	}
	mi, err := w.Index()
	if err != nil {
		return nil, sum, nil, err
	}
	objs := make([]packObject, len(ents))
	for k, e := range ents {
		objs[k] = packObject{id: e.id, typ: e.typ, data: e.data}
	}
	return mi, sum, objs, nil
}

// packObjectID is an object's id by the collision-detecting SHA-1.
func packObjectID(typ plumbing.ObjectType, data []byte) plumbing.Hash {
	return hashObject(sha1cd.New(), typ, data)
}

// installPack puts the pack at tmp (written and synced) and its index in
// place as pack-<sum>, read-only as git writes its packs (CreateTemp makes
// them 0600). The .idx lands first, then the .pack: a reader lists packs
// by their .pack file, and go-git refuses to read any object while one
// .pack lacks its .idx (git ignores such a pack). A writer killed between
// the two renames leaves an .idx alone, which both ignore. A pack already
// there under the same name holds the same bytes and is left as it is.
// Both our packs (writePackOpt) and fetched ones come in here.
func installPack(dir, tmp string, mi *idxfile.MemoryIndex, sum plumbing.Hash) error {
	base := filepath.Join(dir, "pack-"+sum.String())
	if _, err := os.Stat(base + ".pack"); err == nil {
		if _, err := os.Stat(base + ".idx"); err == nil {
			return nil // the same pack is already there
		}
	}
	itmp, err := os.CreateTemp(dir, "tmp_gitmem_idx_")
	if err != nil {
		return err
	}
	defer os.Remove(itmp.Name())
	ibw := bufio.NewWriter(itmp)
	if _, err := idxfile.NewEncoder(ibw).Encode(mi); err != nil {
		itmp.Close()
		return err
	}
	if err := ibw.Flush(); err != nil {
		itmp.Close()
		return err
	}
	if err := itmp.Sync(); err != nil {
		itmp.Close()
		return err
	}
	itmp.Close()
	if err := os.Chmod(itmp.Name(), 0o444); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o444); err != nil {
		return err
	}
	// The .pack first, its .idx last (as git does): readers find packs by
	// their .idx, so none ever sees an index whose pack is not there yet.
	if err := os.Rename(tmp, base+".pack"); err != nil {
		return err
	}
	if err := os.Rename(itmp.Name(), base+".idx"); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// packStream is the bytes of a pack as they arrive, for scanPack on
// another goroutine. Bytes once written never change (a longer buffer is a
// copy), so a reader keeps the slice it was last given without the lock.
type packStream struct {
	mu      sync.Mutex
	more    sync.Cond
	buf     []byte
	closed  bool // no more bytes come
	aborted bool // the pack is left to go-git: scanPack stops
}

func newPackStream() *packStream {
	p := &packStream{}
	p.more.L = &p.mu
	return p
}

func (p *packStream) write(b []byte) {
	p.mu.Lock()
	if !p.aborted {
		p.buf = append(p.buf, b...)
	}
	p.mu.Unlock()
	p.more.Broadcast()
}

func (p *packStream) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.more.Broadcast()
}

func (p *packStream) abort() {
	p.mu.Lock()
	p.aborted, p.buf = true, nil
	p.mu.Unlock()
	p.more.Broadcast()
}

// all is every byte received (once closed).
func (p *packStream) all() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf
}

// wait returns the bytes received once there are more than have, or no
// more come.
func (p *packStream) wait(have int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) <= have && !p.closed && !p.aborted {
		p.more.Wait()
	}
	if p.aborted {
		return nil
	}
	return p.buf
}

// packReader reads a packStream from pos, waiting for bytes not yet
// there; it is an io.ByteReader, so the inflater takes no byte past its
// stream's end and pos is where the next object starts.
type packReader struct {
	in  *packStream
	buf []byte
	pos int
}

// avail is the bytes from pos on, at least n of them unless the stream
// ends first.
func (r *packReader) avail(n int) []byte {
	for len(r.buf)-r.pos < n {
		b := r.in.wait(len(r.buf))
		if len(b) <= len(r.buf) {
			break // no more come
		}
		r.buf = b
	}
	if r.pos >= len(r.buf) {
		return nil
	}
	return r.buf[r.pos:]
}

func (r *packReader) ReadByte() (byte, error) {
	if r.pos >= len(r.buf) && len(r.avail(1)) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	c := r.buf[r.pos]
	r.pos++
	return c, nil
}

func (r *packReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b := r.avail(1)
	if len(b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, b)
	r.pos += n
	return n, nil
}
