package search

import (
	"github.com/blevesearch/bleve/v2/index/scorch"
	zap "github.com/blevesearch/zapx/v17"

	"github.com/gitmem/git-mem/internal/mapfile"
)

// DropResident gives back this process's pages of the files the index
// maps: its zap segments, and every mapping of package mapfile (the
// document table, the neighbour table, the row map, the links; and the
// packs of a repo that keeps them mapped) but the session cache, which
// every search reads whole (mapfile.KeepResident). The mappings stay; a
// later search faults in the pages it reads from the page cache. For a
// long-lived reader (the warm search process): each search touches a
// little of those files, a different little each, and what it touched
// stayed in the process's resident memory until it exited (at 1,000,000
// exchanges ~440 MB after 20 different queries; docs/BENCHMARKS.md,
// session 30). mapfile's part is process-wide. ix must not be closed
// during the call; nil or closed: mapfile's part only.
func (ix *Index) DropResident() {
	mapfile.DropResident()
	if ix == nil || ix.idx == nil {
		return
	}
	r, err := ix.reader()
	if err != nil {
		return
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return
	}
	// The reader holds the snapshot's segments open (mapped) until Close.
	for _, s := range snap.Segments() {
		if z, ok := s.Segment().(*zap.Segment); ok {
			_ = mapfile.DropPages(z.Data())
		}
	}
}
