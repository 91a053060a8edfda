// Package mapfile maps files read-only: the one place the index, its caches
// and the git store map what they read in place.
package mapfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
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
	return b, func() { _ = syscall.Munmap(b) }, nil
}
