//go:build !unix

package search

import "os"

// fileID is the file's inode number (0 when unknown).
func fileID(os.FileInfo) uint64 { return 0 }
