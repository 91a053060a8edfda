package search

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/gitmem/git-mem/internal/mapfile"
)

// The document table (docs.bin) is read by every search process, so it is a
// flat binary file that opens without decoding every record: a fixed-width
// column part (Seq, Group, offset) that ranking needs, a string dictionary,
// then the records themselves, decoded only for the hits shown (or all of
// them when a filter needs their fields).
//
//	magic[8] n:u32 crc:u32 (crc of everything after the header)
//	n × { seq:i64 group:i32 off:u32 }
//	m:u32 (m+1) × end:u32 dictionary bytes (string i = bytes[end[i]:end[i+1]])
//	records: uvarint-prefixed strings, dictionary numbers and numbers (see encodeRec)
//
// Project, agent, session, rooms, files and the link facts repeat across
// rows (100,000 synthetic exchanges hold 8,600 distinct ones among 1.1
// million): they are stored once in the dictionary and named by number,
// and a commit hash is stored as its 20 bytes, not 40 hex digits. That took
// docs.bin from 41.3 to 30.0 MB at 100,000 (schema 9), and a writer's full
// decode shares one string per dictionary entry instead of a copy per row.

const (
	tableMagic  = "GMDOCS\x00\x04"
	tableHeader = 16
	tableFixed  = 16
)

// strDict numbers the repeated strings of a table being written, in the
// order first met (so the same records give the same bytes).
type strDict struct {
	idx  map[string]uint32
	list []string
}

func newStrDict() *strDict { return &strDict{idx: map[string]uint32{}} }

func (d *strDict) ref(s string) uint64 {
	i, ok := d.idx[s]
	if !ok {
		i = uint32(len(d.list))
		d.idx[s] = i
		d.list = append(d.list, s)
	}
	return uint64(i)
}

// get returns string i.
func (d *strDict) get(i uint64) (string, bool) {
	if i >= uint64(len(d.list)) {
		return "", false
	}
	return d.list[i], true
}

// appendCommit stores a commit hash: a lower-case hex string of even
// length as its bytes (uvarint 2·len+1), anything else as itself (uvarint
// 2·len), so that every string decodes to exactly what was encoded.
func appendCommit(b []byte, s string) []byte {
	if len(s) > 0 && len(s)%2 == 0 && isLowerHex(s) {
		b = binary.AppendUvarint(b, uint64(len(s)/2)<<1|1)
		b, _ = hex.AppendDecode(b, []byte(s)) // lower-case hex, checked
		return b
	}
	b = binary.AppendUvarint(b, uint64(len(s))<<1)
	return append(b, s...)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// encodeRec appends r's record; d numbers its repeated strings. The time
// comes first, so that rowTime reads it without skipping anything.
func encodeRec(b []byte, r *docRec, d *strDict) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	refs := func(ss []string) {
		b = binary.AppendUvarint(b, uint64(len(ss)))
		for _, s := range ss {
			b = binary.AppendUvarint(b, d.ref(s))
		}
	}
	tb, _ := r.Time.MarshalBinary() // keeps the zone offset
	str(string(tb))
	b = appendCommit(b, r.Commit)
	str(r.ID)
	str(r.Core)
	str(r.Context)
	b = binary.AppendUvarint(b, d.ref(r.Project))
	b = binary.AppendUvarint(b, d.ref(r.Agent))
	b = binary.AppendUvarint(b, d.ref(r.Session))
	refs(r.Rooms)
	refs(r.Files)
	b = binary.AppendUvarint(b, uint64(r.VerbLen))
	b = binary.AppendUvarint(b, uint64(r.DistLen))
	b = binary.AppendUvarint(b, uint64(r.HeadLen))
	b = binary.AppendUvarint(b, uint64(r.AskLen))
	b = binary.AppendUvarint(b, uint64(r.OutLen))
	b = binary.LittleEndian.AppendUint64(b, r.Exact)
	// Optional, at the end: a record whose link meta is not worked out yet
	// has none.
	if r.Link != nil {
		flag := byte(1)
		if r.Link.Change {
			flag |= 2
		}
		b = append(b, flag)
		b = binary.AppendUvarint(b, uint64(len(r.Link.Facts)))
		for _, kv := range r.Link.Facts {
			b = binary.AppendUvarint(b, d.ref(kv[0]))
			b = binary.AppendUvarint(b, d.ref(kv[1]))
		}
	}
	return b
}

var errShort = errors.New("record truncated")

// decodeRec decodes a record of encodeRec; dict returns dictionary string
// i (false: no such entry).
func decodeRec(b []byte, r *docRec, dict func(uint64) (string, bool)) error {
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
	ref := func() (string, error) {
		i, err := uv()
		if err != nil {
			return "", err
		}
		s, ok := dict(i)
		if !ok {
			return "", fmt.Errorf("dictionary entry %d missing", i)
		}
		return s, nil
	}
	refs := func() ([]string, error) {
		n, err := uv()
		if err != nil || n > uint64(len(b)) {
			return nil, errShort
		}
		var out []string
		for i := uint64(0); i < n; i++ {
			s, err := ref()
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	tb, err := str()
	if err != nil {
		return err
	}
	r.Time = time.Time{}
	if err := r.Time.UnmarshalBinary([]byte(tb)); err != nil {
		return fmt.Errorf("time: %w", err)
	}
	cl, err := uv()
	if err != nil || uint64(len(b)-p) < cl>>1 {
		return errShort
	}
	if raw := b[p : p+int(cl>>1)]; cl&1 == 1 {
		r.Commit = hex.EncodeToString(raw)
	} else {
		r.Commit = string(raw)
	}
	p += int(cl >> 1)
	for _, dst := range []*string{&r.ID, &r.Core, &r.Context} {
		if *dst, err = str(); err != nil {
			return err
		}
	}
	for _, dst := range []*string{&r.Project, &r.Agent, &r.Session} {
		if *dst, err = ref(); err != nil {
			return err
		}
	}
	if r.Rooms, err = refs(); err != nil {
		return err
	}
	if r.Files, err = refs(); err != nil {
		return err
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
			if m.Facts[i][j], err = ref(); err != nil {
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
//
// keep, when not nil, is the table the records were loaded from, and the
// caller vouches that recs[:len(keep.seqs)] are its records unchanged
// (Index.flush: no loaded row was replaced, emptied or given link meta
// since). Those rows' bytes are then copied from it instead of encoded
// again, and the dictionary starts with its strings in its order: each
// string is still numbered in the order first met over all rows, so the
// file is byte for byte the one a full encoding writes (tested), and the
// copied records name the same numbers. Encoding every row again was a
// third of an add's flush at 100,000 rows.
func writeTable(path string, recs []docRec, size int, keep *table) error {
	_, err := writeTableState(path, recs, size, keep)
	return err
}

// docsState commits docs.bin (schema 11): the image writeTable made
// (Image bytes, described by its own header) and the segments appended
// after it (Parts of them), Size bytes in all, whose CRC-32C is CRC. The
// manifest holds it; bytes past Size are a killed writer's and never read.
//
// A segment is the rows one flush added:
//
//	segMagic[8] len:u32 n:u32 m:u32 pad:u32
//	n × { seq:i64 group:i32 off:u32 }   off: where the record starts in the file
//	(m+1) × end:u32, dictionary bytes   the strings first met in these rows
//	records
//
// Its strings are numbered after every string of the parts before it, so
// that a record's numbers mean what a full encoding's would (writeTable
// numbers strings in the order first met, too).
type docsState struct {
	Image int64  `json:"image"`
	Size  int64  `json:"size"`
	CRC   uint32 `json:"crc32c"`
	Parts int    `json:"parts,omitempty"`
}

const (
	segMagic  = "GMDSEG\x00\x01"
	segHeader = 24
	// maxParts: past that many segments a flush writes the table whole
	// again (one rewrite per maxParts adds; a reader walks every segment).
	maxParts = 256
)

// writeTableState is writeTable, returning the file's state.
func writeTableState(path string, recs []docRec, size int, keep *table) (docsState, error) {
	if keep != nil && keep.parts > 0 {
		keep = nil // its records are not one run of bytes
	}
	n := len(recs)
	k := 0
	if keep != nil && len(keep.seqs) <= n {
		k = len(keep.seqs)
	}
	fixed := make([]byte, tableHeader+n*tableFixed)
	d := newStrDict()
	var old []byte // the kept rows' records, as they are in keep
	if k > 0 {
		for i := 0; i < keep.dictN; i++ {
			s, _ := keep.dictStr(uint64(i))
			d.idx[s] = uint32(i)
			d.list = append(d.list, s)
		}
		old = keep.raw[keep.offs[0]:keep.offs[k]]
		size -= len(old)
	}
	body := make([]byte, 0, max(size, (n-k)*200))
	offs := make([]int, n)
	for i := 0; i < k; i++ {
		offs[i] = int(keep.offs[i] - keep.offs[0])
	}
	for i := k; i < n; i++ {
		offs[i] = len(old) + len(body)
		body = encodeRec(body, &recs[i], d)
	}
	dict := binary.LittleEndian.AppendUint32(nil, uint32(len(d.list)))
	end := 0
	dict = binary.LittleEndian.AppendUint32(dict, 0)
	for _, s := range d.list {
		end += len(s)
		dict = binary.LittleEndian.AppendUint32(dict, uint32(end))
	}
	for _, s := range d.list {
		dict = append(dict, s...)
	}
	base := len(fixed) + len(dict)
	if int64(base)+int64(len(old))+int64(len(body)) > math.MaxUint32 {
		return docsState{}, fmt.Errorf("write document table: %d bytes is past the 4 GiB the format addresses", base+len(old)+len(body))
	}
	copy(fixed, tableMagic)
	binary.LittleEndian.PutUint32(fixed[8:], uint32(n))
	for i := range recs {
		fx := fixed[tableHeader+i*tableFixed:]
		binary.LittleEndian.PutUint64(fx, uint64(int64(recs[i].Seq)))
		binary.LittleEndian.PutUint32(fx[8:], uint32(recs[i].Group))
		binary.LittleEndian.PutUint32(fx[12:], uint32(base+offs[i]))
	}
	crc := crc32.Update(crc32.Checksum(fixed[tableHeader:], crcTable), crcTable, dict)
	crc = crc32.Update(crc, crcTable, old)
	binary.LittleEndian.PutUint32(fixed[12:], crc32.Update(crc, crcTable, body))
	all := crc32.Checksum(fixed, crcTable)
	for _, p := range [][]byte{dict, old, body} {
		all = crc32.Update(all, crcTable, p)
	}
	size64 := int64(len(fixed) + len(dict) + len(old) + len(body))
	tmp := path + ".tmp"
	err := writeParts(tmp, fixed, dict, old, body)
	runtime.KeepAlive(keep) // old lies in its mapping
	if err != nil {
		return docsState{}, fmt.Errorf("write document table: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return docsState{}, fmt.Errorf("write document table: %w", err)
	}
	return docsState{Image: size64, Size: size64, CRC: all}, nil
}

// appendTable appends the rows added after keep's to path as a segment;
// keep is the table read from path by st, and its rows are the rows before
// added, unchanged (the caller vouches, as for writeTable's keep).
func appendTable(path string, added []docRec, keep *table, st docsState) (docsState, error) {
	n := len(added)
	d := &strDict{idx: make(map[string]uint32, keep.dictN), list: make([]string, 0, keep.dictN)}
	for i := 0; i < keep.dictN; i++ {
		s, _ := keep.dictStr(uint64(i))
		d.idx[s] = uint32(i)
		d.list = append(d.list, s)
	}
	var body []byte
	rel := make([]int, n)
	for i := range n {
		rel[i] = len(body)
		body = encodeRec(body, &added[i], d)
	}
	fresh := d.list[keep.dictN:]
	m := len(fresh)
	head := make([]byte, segHeader+n*tableFixed, segHeader+n*tableFixed+4*(m+1))
	head = binary.LittleEndian.AppendUint32(head, 0)
	end := 0
	for _, s := range fresh {
		end += len(s)
		head = binary.LittleEndian.AppendUint32(head, uint32(end))
	}
	for _, s := range fresh {
		head = append(head, s...)
	}
	total := int64(len(head) + len(body))
	recAt := st.Size + int64(len(head))
	if st.Size+total > math.MaxUint32 {
		return docsState{}, fmt.Errorf("append to the document table: %d bytes is past the 4 GiB the format addresses", st.Size+total)
	}
	copy(head, segMagic)
	binary.LittleEndian.PutUint32(head[8:], uint32(total))
	binary.LittleEndian.PutUint32(head[12:], uint32(n))
	binary.LittleEndian.PutUint32(head[16:], uint32(m))
	for i := range n {
		fx := head[segHeader+i*tableFixed:]
		binary.LittleEndian.PutUint64(fx, uint64(int64(added[i].Seq)))
		binary.LittleEndian.PutUint32(fx[8:], uint32(added[i].Group))
		binary.LittleEndian.PutUint32(fx[12:], uint32(recAt+int64(rel[i])))
	}
	if err := appendAt(path, st.Size, append(head, body...)); err != nil {
		return docsState{}, fmt.Errorf("append to the document table: %w", err)
	}
	crc := crc32.Update(crc32.Update(st.CRC, crcTable, head), crcTable, body)
	return docsState{Image: st.Image, Size: st.Size + total, CRC: crc, Parts: st.Parts + 1}, nil
}

// writeParts writes the parts to path, created or truncated.
func writeParts(path string, parts ...[]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := f.Write(p); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// table is the loaded file: hot columns decoded, records on demand.
type table struct {
	raw    []byte // the file, memory-mapped where possible
	seqs   []int
	groups []int32
	offs   []uint32
	dictN  int // dictionary entries, the segments' included
	dictAt int // where the image's dictionary's m+1 ends start
	dictB  int // where its bytes start
	// Appended segments (docsState): how many, their strings (numbered
	// after the image's imgDictN) as [start, end) in raw, and the rows
	// that end a part, with where their records end (offs[row+1] is the
	// next part's first record, after that part's header).
	parts    int
	imgDictN int
	segDict  [][2]uint32
	partLast []int32
	partEnd  []uint32
}

// readTable maps the file rather than reading it: a search decodes ten
// records, and reading the whole file cost every process a copy of it (6 MB
// at 15,000 exchanges, 40 MB at 100,000; docs/BENCHMARKS.md). Writers replace
// the file by renaming, so a mapping never sees it change. verify checks
// the whole file's checksum: writers and Verify do; a search does not (the
// seal's size and mtime are checked on every open, and the checksum of 40 MB
// at 100,000 exchanges was 5 % of a search, docs/BENCHMARKS.md).
func readTable(path string, verify bool) (*table, error) { return readTableState(path, verify, nil) }

// readTableState reads docs.bin by its state (nil: the image alone, by its
// header); verify checks the CRC of the committed bytes.
func readTableState(path string, verify bool, st *docsState) (*table, error) {
	return readTableCols(path, verify, st, false)
}

// readTableCols is readTableState; mapped takes the table's columns (seqs,
// groups, offs) from a mapping of their own (newScratch: transparent huge
// pages) instead of the Go heap, unmapped when the table is unreachable.
// Only a reader's table may: a writer appends to the columns and keeps
// them past the table (a flush replaces ix.tab, not ix.seqs). At 1,000,000
// exchanges the columns are 16 MB, from the heap ~4,000 fresh 4 KB pages,
// each a page fault, a fifth of a cold search's set-up (docs/BENCHMARKS.md,
// session 19). Whoever reads the columns holds the table (ix.tab).
func readTableCols(path string, verify bool, st *docsState, mapped bool) (*table, error) {
	b, unmap, err := mapfile.ReadOnly(path)
	if err != nil {
		return nil, err
	}
	var t *table
	var mem *scratch
	if st == nil {
		t, err = parseTable(b, verify)
	} else {
		t, mem, err = parseTableState(b, verify, *st, mapped)
	}
	if err != nil {
		mem.release()
		unmap()
		return nil, err
	}
	// Every record is decoded into copies (decodeRec), so nothing refers to
	// the mapping once the table is unreachable.
	runtime.AddCleanup(t, func(f func()) { f() }, unmap)
	if mem != nil {
		runtime.AddCleanup(t, func(m *scratch) { m.release() }, mem)
	}
	return t, nil
}

// tableCols returns the columns of a table of n rows with room for c,
// taken from mem (nil: the heap).
func tableCols(mem *scratch, n, c int) (seqs []int, groups []int32, offs []uint32) {
	return scratchSlice[int](mem, n, c), scratchSlice[int32](mem, n, c), scratchSlice[uint32](mem, n+1, c+1)
}

// tableColsSize is the bytes tableCols takes for room for c rows.
func tableColsSize(c int) int { return 8*c + 4*c + 4*(c+1) + 3*8 }

func parseTable(b []byte, verify bool) (*table, error) {
	return parseImage(b, verify, func(n int) ([]int, []int32, []uint32) { return tableCols(nil, n, withRoom(n)) })
}

// parseImage parses a table image, its columns made by cols.
func parseImage(b []byte, verify bool, cols func(n int) ([]int, []int32, []uint32)) (*table, error) {
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
	t := &table{raw: b}
	t.seqs, t.groups, t.offs = cols(n)
	p := tableHeader + n*tableFixed
	if len(b)-p < 8 {
		return nil, errors.New("no dictionary")
	}
	m := binary.LittleEndian.Uint32(b[p:])
	if uint64(m) > uint64(len(b)-p-8)/4 {
		return nil, fmt.Errorf("dictionary of %d entries in %d bytes", m, len(b)-p)
	}
	t.dictN, t.dictAt = int(m), p+4
	t.dictB = t.dictAt + 4*(t.dictN+1)
	prev := 0
	for i := 0; i <= t.dictN; i++ {
		e := t.dictEnd(i)
		if i == 0 && e != 0 || e < prev || t.dictB+e > len(b) {
			return nil, fmt.Errorf("dictionary entry %d: bad end", i)
		}
		prev = e
	}
	recStart := t.dictB + prev
	seqs, groups, offs := t.seqs[:n], t.groups[:n], t.offs[:n+1]
	fixed := b[tableHeader : tableHeader+n*tableFixed]
	for i := range n {
		fx := fixed[i*tableFixed : i*tableFixed+tableFixed]
		seqs[i] = int(int64(binary.LittleEndian.Uint64(fx)))
		groups[i] = int32(binary.LittleEndian.Uint32(fx[8:]))
		offs[i] = binary.LittleEndian.Uint32(fx[12:])
		if int(offs[i]) < recStart || int(offs[i]) > len(b) || i > 0 && offs[i] < offs[i-1] ||
			groups[i] < 0 || int(groups[i]) >= n {
			return nil, fmt.Errorf("record %d: bad offset or group", i)
		}
	}
	offs[n] = uint32(len(b))
	return t, nil
}

// parseTableState parses the image and the segments after it (docsState);
// mapped: the columns from a mapping of their own (readTableCols), which
// the caller releases when the table is gone (nil: from the heap).
func parseTableState(b []byte, verify bool, st docsState, mapped bool) (t *table, mem *scratch, err error) {
	if st.Size < st.Image || st.Image < tableHeader || int64(len(b)) < st.Size {
		return nil, nil, fmt.Errorf("%d bytes, committed %d (image %d)", len(b), st.Size, st.Image)
	}
	b = b[:st.Size]
	if verify && crc32.Checksum(b, crcTable) != st.CRC {
		return nil, nil, errors.New("checksum mismatch")
	}
	// The segments' rows counted first, so that the columns are made once
	// for every row (a copy of every offset per segment was quadratic in
	// the segments).
	// Their dictionary strings too, so that segDict is made once: grown
	// by append, its copies and fresh pages were ~2–3 ms of a cold search's
	// open at 1,000,000 exchanges (docs/BENCHMARKS.md, session 25).
	extra, strs := 0, 0
	for at := st.Image; st.Size-at >= segHeader; {
		total := int64(binary.LittleEndian.Uint32(b[at+8:]))
		if total < segHeader {
			break // reported below
		}
		n := int64(binary.LittleEndian.Uint32(b[at+12:]))
		extra += int(n)
		// only a segment whose header the loop below accepts: no more
		// room than its dictionary's ends fill
		if m := int64(binary.LittleEndian.Uint32(b[at+16:])); total <= st.Size-at && segHeader+n*tableFixed+4*(m+1) <= total {
			strs += int(m)
		}
		at += total
	}
	if extra < 0 || extra >= len(b)/tableFixed {
		extra = 0 // damaged: reported below
	}
	t, err = parseImage(b[:st.Image], false, func(n int) ([]int, []int32, []uint32) {
		c := withRoom(n + extra)
		if mapped {
			c = n + extra
			mem = newScratch(tableColsSize(c))
		}
		return tableCols(mem, n, c)
	})
	defer func() {
		if err != nil {
			mem.release()
			t, mem = nil, nil
		}
	}()
	if err != nil {
		return nil, mem, err
	}
	t.raw, t.imgDictN = b, t.dictN
	if strs > 0 {
		t.segDict = make([][2]uint32, 0, strs)
	}
	imageRows := len(t.groups)
	for at := st.Image; at < st.Size; {
		if st.Size-at < segHeader || string(b[at:at+8]) != segMagic {
			return nil, nil, fmt.Errorf("segment at %d: bad header", at)
		}
		h := b[at:]
		total := int64(binary.LittleEndian.Uint32(h[8:]))
		n := int64(binary.LittleEndian.Uint32(h[12:]))
		m := int64(binary.LittleEndian.Uint32(h[16:]))
		if total > st.Size-at || segHeader+n*tableFixed+4*(m+1) > total {
			return nil, nil, fmt.Errorf("segment at %d: %d rows, %d strings in %d bytes", at, n, m, total)
		}
		seg := b[at : at+total]
		ends := seg[segHeader+n*tableFixed:]
		strAt := segHeader + n*tableFixed + 4*(m+1)
		prev := uint32(0)
		for i := int64(0); i <= m; i++ {
			e := binary.LittleEndian.Uint32(ends[4*i:])
			if i == 0 && e != 0 || e < prev || strAt+int64(e) > total {
				return nil, nil, fmt.Errorf("segment at %d: dictionary entry %d: bad end", at, i)
			}
			if i > 0 {
				t.segDict = append(t.segDict, [2]uint32{uint32(at + strAt + int64(prev)), uint32(at + strAt + int64(e))})
			}
			prev = e
		}
		t.dictN += int(m)
		recStart, recEnd := uint32(at+strAt+int64(prev)), uint32(at+total)
		last := len(t.seqs) - 1
		t.partLast = append(t.partLast, int32(last))
		t.partEnd = append(t.partEnd, t.offs[last+1])
		// The rows stored by index into columns grown once per segment
		// (room for every row was made above: no copy), reading the fixed
		// records by re-slicing: appending each row to three slices took
		// ~3 ms more of a cold search's open at 1,000,000 exchanges, on its
		// critical path (docs/BENCHMARKS.md, session 25).
		rows := int(n)
		seqs := slices.Grow(t.seqs, rows)[:last+1+rows]
		groups := slices.Grow(t.groups, rows)[:last+1+rows]
		offs := slices.Grow(t.offs[:last+1], rows+1)[:last+1+rows+1]
		ss, gs, fs := seqs[last+1:], groups[last+1:], offs[last+1:last+1+rows]
		if i, ok := decodeRows(seg[segHeader:segHeader+n*tableFixed], ss, gs, fs, recStart, recEnd); !ok {
			return nil, nil, fmt.Errorf("segment at %d: record %d: bad offset", at, i)
		}
		offs[last+1+rows] = recEnd
		t.seqs, t.groups, t.offs = seqs, groups, offs
		t.parts++
		at += total
	}
	// parseTable checked the image's groups against its own rows, fewer
	// than the table's: the segments' rows are left.
	for i := imageRows; i < len(t.groups); i++ {
		if g := t.groups[i]; g < 0 || int(g) >= len(t.groups) {
			return nil, nil, fmt.Errorf("record %d: bad group", i)
		}
	}
	return t, mem, nil
}

// decodeRows decodes a segment's fixed records into its rows' columns,
// checking that each record starts where the one before does or after
// (the first at recStart) and not past recEnd; ok is false at the first
// that does not (i). A function of its own so that its loop keeps its
// values in registers: inlined into parseTableState, they were spilled to
// the stack and reloaded every row.
//
//go:noinline
func decodeRows(fixed []byte, seqs []int, groups []int32, offs []uint32, recStart, recEnd uint32) (i int, ok bool) {
	prevOff := recStart
	for i := range seqs {
		fx := fixed[:tableFixed:tableFixed]
		fixed = fixed[tableFixed:]
		off := binary.LittleEndian.Uint32(fx[12:])
		if off < prevOff || off > recEnd || i == 0 && off != recStart {
			return i, false
		}
		prevOff = off
		seqs[i] = int(int64(binary.LittleEndian.Uint64(fx)))
		groups[i] = int32(binary.LittleEndian.Uint32(fx[8:]))
		offs[i] = off
	}
	return 0, true
}

// recBytes is row's record.
func (t *table) recBytes(row int) []byte {
	end := t.offs[row+1]
	if t.parts > 0 {
		if i, ok := slices.BinarySearch(t.partLast, int32(row)); ok {
			end = t.partEnd[i]
		}
	}
	return t.raw[t.offs[row]:end]
}

// dictEnd is where dictionary string i ends, relative to its bytes.
func (t *table) dictEnd(i int) int {
	return int(binary.LittleEndian.Uint32(t.raw[t.dictAt+4*i:]))
}

// dictStr returns a copy of dictionary string i (a search decodes a few
// records: no dictionary is built).
func (t *table) dictStr(i uint64) (string, bool) {
	if i >= uint64(t.dictN) {
		return "", false
	}
	if i >= uint64(t.imgDictN) && t.parts > 0 {
		se := t.segDict[i-uint64(t.imgDictN)]
		return string(t.raw[se[0]:se[1]]), true
	}
	return string(t.raw[t.dictB+t.dictEnd(int(i)) : t.dictB+t.dictEnd(int(i)+1)]), true
}

func (t *table) rec(row int) (docRec, error) {
	return t.recWith(row, t.dictStr)
}

func (t *table) recWith(row int, dict func(uint64) (string, bool)) (docRec, error) {
	var r docRec
	err := decodeRec(t.recBytes(row), &r, dict)
	runtime.KeepAlive(t) // the mapping lives as long as t
	if err != nil {
		return r, fmt.Errorf("document table record %d: %w", row, err)
	}
	r.Seq, r.Group = t.seqs[row], t.groups[row]
	return r, nil
}

// all decodes every record into recs (len(t.seqs) of them), the
// dictionary's strings made once and shared by the rows that name them.
func (t *table) all(recs []docRec) error {
	d := &strDict{list: t.dictList()}
	for i := range recs {
		r, err := t.recWith(i, d.get)
		if err != nil {
			return err
		}
		recs[i] = r
	}
	return nil
}

// recScan is what scanRec reads of a record: the fields a writer that only
// appends needs of every row it loaded (lazyRows), nothing copied out of
// the table (id points into it). Rooms and files are dictionary numbers.
type recScan struct {
	id                    []byte
	session               uint64
	rooms, files          []uint64
	verb, head, ask, outl int32
	exact                 uint64
}

// skipStr skips a uvarint-prefixed string at p, returning it.
func skipStr(b []byte, p int) ([]byte, int, error) {
	l, n := binary.Uvarint(b[p:])
	if n <= 0 || uint64(len(b)-p-n) < l {
		return nil, p, errShort
	}
	p += n
	return b[p : p+int(l)], p + int(l), nil
}

// recID is a record's exchange id, in place, and where the field after it
// starts (a writer checks an id it looked up by hash: lazyRows.rowOf).
func recID(b []byte) ([]byte, int, error) {
	_, p, err := skipStr(b, 0) // the time
	if err != nil {
		return nil, 0, err
	}
	cl, n := binary.Uvarint(b[p:])
	if n <= 0 || uint64(len(b)-p-n) < cl>>1 {
		return nil, 0, errShort
	}
	return skipStr(b, p+n+int(cl>>1))
}

// scanRec reads s's fields of a record of encodeRec without decoding the
// rest (decodeRec's checks of structure, dictionary numbers below dictN;
// the time's and the link meta's contents are decoded only by decodeRec).
func scanRec(b []byte, s *recScan, dictN uint64) error {
	var p int
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(b[p:])
		if n <= 0 {
			return 0, errShort
		}
		p += n
		return v, nil
	}
	ref := func() (uint64, error) {
		i, err := uv()
		if err == nil && i >= dictN {
			err = fmt.Errorf("dictionary entry %d missing", i)
		}
		return i, err
	}
	refs := func(out []uint64) ([]uint64, error) {
		n, err := uv()
		if err != nil || n > uint64(len(b)) {
			return nil, errShort
		}
		out = out[:0]
		for i := uint64(0); i < n; i++ {
			r, err := ref()
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	id, p, err := recID(b)
	if err != nil {
		return err
	}
	s.id = id
	for range 2 { // core, context
		if _, p, err = skipStr(b, p); err != nil {
			return err
		}
	}
	for range 2 { // project, agent
		if _, err := ref(); err != nil {
			return err
		}
	}
	if s.session, err = ref(); err != nil {
		return err
	}
	if s.rooms, err = refs(s.rooms); err != nil {
		return err
	}
	if s.files, err = refs(s.files); err != nil {
		return err
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
	s.verb, s.head, s.ask, s.outl = int32(lens[0]), int32(lens[2]), int32(lens[3]), int32(lens[4])
	if len(b)-p < 8 {
		return errShort
	}
	s.exact = binary.LittleEndian.Uint64(b[p:])
	return nil
}

// dictList is every dictionary string, made once (all shares them between
// the rows that name them).
func (t *table) dictList() []string {
	list := make([]string, t.dictN)
	for i := range list {
		list[i], _ = t.dictStr(uint64(i))
	}
	return list
}
