// Package mapfile maps files read-only: the one place the index, its caches
// and the git store map what they read in place.
package mapfile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// Map maps path read-only and shared. unmap releases the mapping; b must
// not be used after it. An empty file, one of 1 TiB or more, or a failed
// mmap is an error: the caller reads the file another way.
func Map(path string) (b []byte, unmap func(), err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	return mapOpen(fh, path)
}

// ReadOnly is Map, or the file's bytes where it cannot be mapped (an empty
// file, a file system without mmap); unmap is then a no-op.
func ReadOnly(path string) (b []byte, unmap func(), err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	if b, unmap, err := mapOpen(fh, path); err == nil {
		return b, unmap, nil
	}
	b, err = io.ReadAll(fh)
	return b, func() {}, err
}

func mapOpen(fh *os.File, path string) ([]byte, func(), error) {
	fi, err := fh.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size <= 0 || size >= 1<<40 {
		return nil, nil, fmt.Errorf("%s: %d bytes", path, size)
	}
	b, err := syscall.Mmap(int(fh.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	k, mp := key(b), &mapping{b: b}
	live.Lock()
	live.m[k] = mp
	live.Unlock()
	return b, func() {
		live.Lock()
		defer live.Unlock()
		if live.m[k] == mp { // once: a second call unmaps nothing
			delete(live.m, k)
			_ = syscall.Munmap(b)
		}
	}, nil
}

// live is every mapping Map and ReadOnly made and not yet unmapped, by
// its first byte's address. Its lock is held while a mapping is unmapped
// and while DropResident advises, so DropResident never advises an
// address range that another mapping (an anonymous one: the Go heap, a
// search's scratch) took over.
var live = struct {
	sync.Mutex
	m map[uintptr]*mapping
}{m: map[uintptr]*mapping{}}

type mapping struct {
	b   []byte
	hot bool // KeepResident: DropResident leaves it
}

func key(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// KeepResident marks the mapping that starts at b's first byte (b as Map
// or ReadOnly returned it) as one that every search reads whole:
// DropResident leaves its pages. A b that is not such a mapping is
// ignored.
func KeepResident(b []byte) {
	live.Lock()
	if m := live.m[key(b)]; m != nil {
		m.hot = true
	}
	live.Unlock()
}

// DropResident gives back this process's pages of every live mapping but
// KeepResident's (madvise MADV_DONTNEED), and returns how many bytes of
// mappings it advised. The mappings stay: a later read faults its pages in
// again from the page cache, where they stay (shared, not this process's
// resident memory), so the bytes read are the same. For a long-lived
// reader (the warm search process) whose searches each touch a little of
// large files (a pack, the document table), which otherwise stay in its
// resident set until it exits. Every mapping here is read-only and shared:
// nothing written to it can be lost.
func DropResident() int64 {
	live.Lock()
	defer live.Unlock()
	var n int64
	for _, m := range live.m {
		if !m.hot && syscall.Madvise(m.b, syscall.MADV_DONTNEED) == nil {
			n += int64(len(m.b))
		}
	}
	return n
}

// DropPages is DropResident for a read-only shared file mapping made
// elsewhere (zap's segments): b must stay mapped during the call.
func DropPages(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return syscall.Madvise(b, syscall.MADV_DONTNEED)
}

// FileResident is this process's resident memory backed by files (the
// third field of /proc/self/statm: RssFile and RssShmem), in bytes; -1
// where it cannot be read.
func FileResident() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return -1
	}
	pages, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return -1
	}
	return pages * int64(os.Getpagesize())
}
