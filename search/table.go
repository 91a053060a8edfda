package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"
)

// The document table (docs.bin) is read by every search process, so it is a
// flat binary file that opens without decoding every record: a fixed-width
// column part (Seq, Group, offset) that ranking needs, then the records
// themselves, decoded only for the hits shown (or all of them when a filter
// needs their fields).
//
//	magic[8] n:u32 crc:u32 (crc of everything after the header)
//	n × { seq:i64 group:i32 off:u32 }
//	records: uvarint-prefixed strings and numbers (see encodeRec)

const (
	tableMagic  = "GMDOCS\x00\x03"
	tableHeader = 16
	tableFixed  = 16
)

func encodeRec(b []byte, r *docRec) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	strs := func(ss []string) {
		b = binary.AppendUvarint(b, uint64(len(ss)))
		for _, s := range ss {
			str(s)
		}
	}
	str(r.Commit)
	str(r.ID)
	str(r.Core)
	str(r.Context)
	str(r.Project)
	str(r.Agent)
	str(r.Session)
	strs(r.Rooms)
	strs(r.Files)
	tb, _ := r.Time.MarshalBinary() // keeps the zone offset
	str(string(tb))
	b = binary.AppendUvarint(b, uint64(r.VerbLen))
	b = binary.AppendUvarint(b, uint64(r.DistLen))
	b = binary.AppendUvarint(b, uint64(r.HeadLen))
	b = binary.AppendUvarint(b, uint64(r.AskLen))
	b = binary.AppendUvarint(b, uint64(r.OutLen))
	b = binary.LittleEndian.AppendUint64(b, r.Exact)
	// Optional, at the end: records without it (written before it was
	// stored) still decode, and so do these in a binary that ignores it.
	if r.Link != nil {
		flag := byte(1)
		if r.Link.Change {
			flag |= 2
		}
		b = append(b, flag)
		b = binary.AppendUvarint(b, uint64(len(r.Link.Facts)))
		for _, kv := range r.Link.Facts {
			str(kv[0])
			str(kv[1])
		}
	}
	return b
}

var errShort = errors.New("record truncated")

func decodeRec(b []byte, r *docRec) error {
	p := 0
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(b[p:])
		if n <= 0 {
			return 0, errShort
		}
		p += n
		return v, nil
	}
	str := func() (string, error) {
		l, err := uv()
		if err != nil || uint64(len(b)-p) < l {
			return "", errShort
		}
		s := string(b[p : p+int(l)])
		p += int(l)
		return s, nil
	}
	strs := func() ([]string, error) {
		n, err := uv()
		if err != nil || n > uint64(len(b)) {
			return nil, errShort
		}
		var out []string
		for i := uint64(0); i < n; i++ {
			s, err := str()
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	var err error
	for _, dst := range []*string{&r.Commit, &r.ID, &r.Core, &r.Context, &r.Project, &r.Agent, &r.Session} {
		if *dst, err = str(); err != nil {
			return err
		}
	}
	if r.Rooms, err = strs(); err != nil {
		return err
	}
	if r.Files, err = strs(); err != nil {
		return err
	}
	tb, err := str()
	if err != nil {
		return err
	}
	r.Time = time.Time{}
	if err := r.Time.UnmarshalBinary([]byte(tb)); err != nil {
		return fmt.Errorf("time: %w", err)
	}
	var lens [5]uint64
	for i := range lens {
		if lens[i], err = uv(); err != nil {
			return err
		}
		if lens[i] > 1<<31-1 {
			return fmt.Errorf("length %d out of range", lens[i])
		}
	}
	r.VerbLen, r.DistLen, r.HeadLen, r.AskLen, r.OutLen = int32(lens[0]), int32(lens[1]), int32(lens[2]), int32(lens[3]), int32(lens[4])
	if len(b)-p < 8 {
		return errShort
	}
	r.Exact = binary.LittleEndian.Uint64(b[p:])
	p += 8
	r.Link = nil
	if p == len(b) {
		return nil
	}
	flag := b[p]
	p++
	if flag&1 == 0 || flag > 3 {
		return fmt.Errorf("link flags %#x: %w", flag, errShort)
	}
	n, err := uv()
	if err != nil || n > uint64(len(b)-p) {
		return errShort
	}
	m := &linkMeta{Change: flag&2 != 0}
	if n > 0 {
		m.Facts = make([][2]string, n)
	}
	for i := range m.Facts {
		for j := range m.Facts[i] {
			if m.Facts[i][j], err = str(); err != nil {
				return err
			}
		}
	}
	r.Link = m
	return nil
}

// writeTable writes recs; size, when not 0, is the expected file size (a
// writer knows the table it loaded): growing the buffer by doubling copied
// the table about twice over (1.1 of the 2.8 s a writer's flush took at
// 1,000,000 rows).
func writeTable(path string, recs []docRec, size int) error {
	n := len(recs)
	b := make([]byte, tableHeader+n*tableFixed, max(size, tableHeader+n*(tableFixed+200)))
	copy(b, tableMagic)
	binary.LittleEndian.PutUint32(b[8:], uint32(n))
	for i := range recs {
		fx := b[tableHeader+i*tableFixed:]
		binary.LittleEndian.PutUint64(fx, uint64(int64(recs[i].Seq)))
		binary.LittleEndian.PutUint32(fx[8:], uint32(recs[i].Group))
		binary.LittleEndian.PutUint32(fx[12:], uint32(len(b)))
		b = encodeRec(b, &recs[i])
	}
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[tableHeader:], crcTable))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write document table: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write document table: %w", err)
	}
	return nil
}

// table is the loaded file: hot columns decoded, records on demand.
type table struct {
	raw    []byte // the file, memory-mapped where possible
	seqs   []int
	groups []int32
	offs   []uint32
}

// readTable maps the file rather than reading it: a search decodes ten
// records, and reading the whole file cost every process a copy of it (6 MB
// at 15,000 exchanges, 40 MB at 100,000; docs/BENCHMARKS.md). Writers replace
// the file by renaming, so a mapping never sees it change. verify checks
// the whole file's checksum: writers and Verify do; a search does not (the
// seal's size and mtime are checked on every open, and the checksum of 40 MB
// at 100,000 exchanges was 5 % of a search, docs/BENCHMARKS.md).
func readTable(path string, verify bool) (*table, error) {
	b, unmap, err := MapReadOnly(path)
	if err != nil {
		return nil, err
	}
	t, err := parseTable(b, verify)
	if err != nil {
		unmap()
		return nil, err
	}
	// Every record is decoded into copies (decodeRec), so nothing refers to
	// the mapping once the table is unreachable.
	runtime.AddCleanup(t, func(f func()) { f() }, unmap)
	return t, nil
}

// MapReadOnly maps path read-only, or reads it where it cannot be mapped (an
// empty file, a file system without mmap). unmap releases the mapping; b
// must not be used after it. Exported for the caches beside the index
// (memory's card cache), so that one place maps files.
func MapReadOnly(path string) (b []byte, unmap func(), err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, nil, err
	}
	if size := fi.Size(); size > 0 && size < 1<<40 {
		if b, err := syscall.Mmap(int(fh.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
			return b, func() { _ = syscall.Munmap(b) }, nil
		}
	}
	b, err = io.ReadAll(fh)
	return b, func() {}, err
}

func parseTable(b []byte, verify bool) (*table, error) {
	if len(b) < tableHeader || string(b[:8]) != tableMagic {
		return nil, errors.New("bad header")
	}
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if n < 0 || len(b) < tableHeader+n*tableFixed {
		return nil, fmt.Errorf("%d bytes for %d records", len(b), n)
	}
	if verify && crc32.Checksum(b[tableHeader:], crcTable) != binary.LittleEndian.Uint32(b[12:]) {
		return nil, errors.New("checksum mismatch")
	}
	t := &table{raw: b, seqs: make([]int, n, withRoom(n)), groups: make([]int32, n, withRoom(n)), offs: make([]uint32, n+1)}
	for i := 0; i < n; i++ {
		fx := b[tableHeader+i*tableFixed:]
		t.seqs[i] = int(int64(binary.LittleEndian.Uint64(fx)))
		t.groups[i] = int32(binary.LittleEndian.Uint32(fx[8:]))
		t.offs[i] = binary.LittleEndian.Uint32(fx[12:])
		if int(t.offs[i]) < tableHeader+n*tableFixed || int(t.offs[i]) > len(b) || i > 0 && t.offs[i] < t.offs[i-1] ||
			t.groups[i] < 0 || int(t.groups[i]) >= n {
			return nil, fmt.Errorf("record %d: bad offset or group", i)
		}
	}
	t.offs[n] = uint32(len(b))
	return t, nil
}

func (t *table) rec(row int) (docRec, error) {
	var r docRec
	err := decodeRec(t.raw[t.offs[row]:t.offs[row+1]], &r)
	runtime.KeepAlive(t) // the mapping lives as long as t
	if err != nil {
		return r, fmt.Errorf("document table record %d: %w", row, err)
	}
	r.Seq, r.Group = t.seqs[row], t.groups[row]
	return r, nil
}
