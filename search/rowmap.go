package search

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"unsafe"

	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/gitmem/git-mem/internal/mapfile"
)

// The row map turns Bleve internal ids into table rows for a read-only
// search without asking Bleve for each posting's external id: that lookup
// dominated session-bm25, which must map every posting to its row to reach
// the row's session neighbours. Internal ids are fixed for a given set of
// segment files, so the map is saved with a key made of the segment files'
// names, sizes and times, and rebuilt whenever a writer changed them.
const (
	rowMapFile  = "rowmap.bin"
	rowMapMagic = "GMROWS\x00\x02" // 2: a CRC-32C after the rows
)

// snapshotKey fingerprints the Bleve store's files.
func (ix *Index) snapshotKey() ([32]byte, error) {
	dir := filepath.Join(ix.dir, bleveDir, "store")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return [32]byte{}, err
	}
	var lines []string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			return [32]byte{}, err
		}
		lines = append(lines, fmt.Sprintf("%s %d %d", e.Name(), fi.Size(), fi.ModTime().UnixNano()))
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k, nil
}

// ensureRowMap loads the saved row map of this snapshot, or builds and
// saves it (best effort: it is a cache). Called with cacheMu held, only on
// read-only indexes.
func (ix *Index) ensureRowMap(r bleveindex.IndexReader) {
	if ix.rowMap != nil || ix.rowMapTried {
		return
	}
	ix.rowMapTried = true
	key, err := ix.snapshotKey()
	if err != nil {
		return
	}
	path := filepath.Join(ix.dir, rowMapFile)
	// A damaged map would give postings to the wrong rows: its checksum
	// and every row's range are checked, and anything wrong means rebuild.
	// The rows are read in place from the file's mapping where the host's
	// byte order allows (a copy was 400 KB of fresh pages at 100,000
	// exchanges, docs/BENCHMARKS.md, session 13).
	if b, unmap, err := mapfile.ReadOnly(path); err == nil {
		if m := ix.parseRowMap(b, key); m != nil {
			ix.rowMap = m
			if len(m) > 0 && unsafe.SliceData(m) == (*int32)(unsafe.Pointer(&b[44])) {
				// Readers of rowMap hold ix: unmapped when ix is gone.
				runtime.AddCleanup(ix, func(f func()) { f() }, unmap)
				return
			}
		}
		unmap()
		if ix.rowMap != nil {
			return
		}
	}
	dr, err := r.DocIDReaderAll()
	if err != nil {
		return
	}
	defer dr.Close()
	var m []int32
	for {
		id, err := dr.Next()
		if err != nil || id == nil {
			if err != nil {
				return
			}
			break
		}
		iid := binary.BigEndian.Uint64(id)
		if iid > 1<<31 {
			return
		}
		row, err := ix.rowOf(r, map[uint64]int32{}, iid)
		if err != nil {
			return
		}
		for uint64(len(m)) <= iid {
			m = append(m, -1)
		}
		m[iid] = row
	}
	ix.rowMap = m
	// Save only if no writer changed the segments meanwhile.
	if again, err := ix.snapshotKey(); err != nil || again != key {
		return
	}
	b := make([]byte, 0, 44+4*len(m))
	b = append(b, rowMapMagic...)
	b = append(b, key[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m)))
	for _, row := range m {
		b = binary.LittleEndian.AppendUint32(b, uint32(row))
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	tmp, err := os.CreateTemp(ix.dir, rowMapFile+".tmp*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// parseRowMap returns the rows of a saved row map b made for key: slices
// of b itself on a little-endian host, else a copy; nil when b is not a
// whole, undamaged map of this snapshot whose rows are all in the table.
func (ix *Index) parseRowMap(b []byte, key [32]byte) []int32 {
	if len(b) < 48 || string(b[:8]) != rowMapMagic || string(b[8:40]) != string(key[:]) {
		return nil
	}
	n := int(binary.LittleEndian.Uint32(b[40:]))
	if len(b) != 48+4*n {
		return nil
	}
	var m []int32
	if hostLittleEndian && n > 0 {
		m = unsafe.Slice((*int32)(unsafe.Pointer(&b[44])), n) // 44: 4-aligned in a mapping
	} else {
		m = make([]int32, n)
		for i := range m {
			m[i] = int32(binary.LittleEndian.Uint32(b[44+4*i:]))
		}
	}
	// The checksum and the rows' range in one pass (checkChunk).
	crc, ok := crc32.Checksum(b[:44], crcTable), true
	const per = checkChunk / 4
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		crc = crc32.Update(crc, crcTable, b[44+4*lo:44+4*hi])
		ok = ok && rowsIn(m[lo:hi], len(ix.seqs))
	}
	if !ok || crc != binary.LittleEndian.Uint32(b[44+4*n:]) {
		return nil
	}
	return m
}

// rowsIn reports whether every row of m is -1 or a row of n.
func rowsIn(m []int32, n int) bool {
	for _, row := range m {
		if row < -1 || int(row) >= n {
			return false
		}
	}
	return true
}

// mappedRow is the row of iid from the row map, when there is one.
func (ix *Index) mappedRow(iid uint64) (int32, bool) {
	if ix.rowMap == nil || iid >= uint64(len(ix.rowMap)) {
		return 0, false
	}
	return ix.rowMap[iid], true
}
