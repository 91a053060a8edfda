//go:build unix

package search

import (
	"os"
	"syscall"
)

// fileID is the file's inode number (0 when unknown).
func fileID(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
