package search

import (
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// mapSigs maps minhash.bin's n committed rows for a writer instead of
// reading them into the heap (readSigs): the file's pages are mapped
// private (a row changed is the process's copy), and after them, in the
// same mapping, zeroed room for withRoom(n) rows in all, so that an add's
// appended rows copy none. Reading the 245 MB of 1,000,000 rows into the
// heap was 62,000 page faults and 0.1 s of system time of an add. The
// committed bytes' checksum is verified as readSigs verifies it. free
// unmaps the rows (once, however often it is called): nothing may use
// them after. errNoMap: not mapped here, the caller reads the file.
//
// A writer only appends to the file past its committed length or renames
// a new file over it, so the mapped bytes never change under the mapping;
// the last mapped page may hold bytes past the committed length (a killed
// writer's tail, cut by appendAt), which are rows ≥ n: never read before
// an add writes them.
func mapSigs(path string, n int, crc uint32) (sigs [][sigLen]uint32, free func(), err error) {
	if !littleEndian {
		return nil, nil, errNoMap
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() < sigsLen(n) {
		return nil, nil, fmt.Errorf("%d bytes for %d signatures", st.Size(), n)
	}
	page := int64(os.Getpagesize())
	round := func(x int64) int64 { return (x + page - 1) / page * page }
	room := withRoom(n)
	region, err := syscall.Mmap(-1, 0, int(round(sigsLen(room))), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil, errNoMap
	}
	once := sync.Once{}
	free = func() { once.Do(func() { _ = syscall.Munmap(region) }) }
	// The file over the region's first pages (MAP_FIXED replaces them); the
	// last one holds part of the file, so no page lies past its end.
	fileLen := round(sigsLen(n))
	addr, _, errno := syscall.Syscall6(syscall.SYS_MMAP, uintptr(unsafe.Pointer(&region[0])), uintptr(fileLen),
		syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_FIXED, f.Fd(), 0)
	if errno != 0 || addr != uintptr(unsafe.Pointer(&region[0])) {
		free()
		return nil, nil, errNoMap
	}
	committed := region[:sigsLen(n)]
	if string(committed[:sigsHeader]) != sigsMagic {
		free()
		return nil, nil, errors.New("bad header")
	}
	if crc32.Checksum(committed, crcTable) != crc {
		free()
		return nil, nil, errors.New("checksum mismatch")
	}
	rows := unsafe.Slice((*[sigLen]uint32)(unsafe.Pointer(&region[sigsHeader])), room)
	return rows[:n:room], free, nil
}
