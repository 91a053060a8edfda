package search

import (
	"errors"
	"path/filepath"
)

// Bleve's store (bleve/store/root.bolt) is a bolt database, and bolt keeps
// a file lock on it while it is open: shared for a reader, exclusive for
// a writer, which waits at most a second for it (openBleve) and then
// reports ErrBusy. A long-lived reader — the warm search process — would
// so keep every writer out between its searches. The memory's own index
// lock (mem/index.lock) already keeps readers and writers apart, so such
// a reader lets go of bolt's lock between searches (ReleaseStoreLock) and
// takes it again, without waiting, before the next (TakeStoreLock).

// ErrStoreLock says the store's file lock cannot be let go of or taken
// again here: the caller closes the index instead.
var ErrStoreLock = errors.New("the search index's store lock cannot be handed back")

// storePath is the bolt file of the index in dir.
func storePath(dir string) string { return filepath.Join(dir, bleveDir, "store", "root.bolt") }

// ReleaseStoreLock lets go of the file lock Bleve's store holds on a
// read-only index. The index must not be searched until TakeStoreLock.
func (ix *Index) ReleaseStoreLock() error {
	if !ix.readOnly || ix.idx == nil {
		return ErrStoreLock
	}
	return storeLock(storePath(ix.dir), false)
}

// TakeStoreLock takes the store's shared file lock again, without
// waiting; an error (ErrBusy: a writer holds it) means the index must be
// closed and opened again.
func (ix *Index) TakeStoreLock() error {
	if !ix.readOnly || ix.idx == nil {
		return ErrStoreLock
	}
	return storeLock(storePath(ix.dir), true)
}
