package search

import (
	"cmp"
	"slices"
	"strconv"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"
)

// rowOrderPlugin is Bleve's default segment plugin (zap v17) with one
// change: a new segment numbers its documents in the order of their rows
// (our Bleve ids are rows, bleveID), and a merge concatenates its segments
// in the order of their first rows. Scorch hands a batch's documents to the
// plugin in the order their analysis finished, from a map, so a segment's
// documents were a random permutation of the batch: the session scorer
// reads per-row tables (links, weights, lengths) for every posting, and
// those reads missed the cache (docs/BENCHMARKS.md, sessions 16 and 17).
// The files are zap v17 as before (same Type and Version, every other call
// is the real plugin's): indexes written before open and search as they
// did; only the order inside segments written from now on changes.
//
// Our own code and not a Bleve option: scorch has no setting for the order
// of a segment's documents.
type rowOrderPlugin struct {
	*zap.ZapPlugin
}

func init() {
	// Replaces the default zap v17 plugin registered by scorch's init
	// (same Type and Version), and stays the default.
	scorch.RegisterSegmentPlugin(rowOrderPlugin{&zap.ZapPlugin{}}, true)
}

// docRowKey is the row a Bleve id names; ids that are not rows sort last.
func docRowKey(id string) uint64 {
	v, err := strconv.ParseUint(id, 10, 63)
	if err != nil {
		return 1 << 63
	}
	return v
}

// byRow returns results sorted by row (stably; a copy, the caller's slice
// is left as it was).
func byRow(results []bleveindex.Document) []bleveindex.Document {
	keys := make([]uint64, len(results))
	sorted := true
	for i, d := range results {
		keys[i] = docRowKey(d.ID())
		if i > 0 && keys[i] < keys[i-1] {
			sorted = false
		}
	}
	if sorted {
		return results
	}
	idx := make([]int, len(results))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	out := make([]bleveindex.Document, len(results))
	for i, j := range idx {
		out[i] = results[j]
	}
	return out
}

// segGates orders the segments of Bleve batches built at once
// (bleveBatches): a batch's document of lowest row → the channel closed
// when the batch before it has been introduced. Scorch introduces a
// segment when the Batch call that built it has built it, so the segment
// built second waits here, once built, for its turn.
var segGates sync.Map // bleveindex.Document → chan struct{}

// gate waits for the turn of the segment of sorted (documents by row).
func gate(sorted []bleveindex.Document) {
	if len(sorted) == 0 {
		return
	}
	if c, ok := segGates.LoadAndDelete(sorted[0]); ok {
		<-c.(chan struct{})
	}
	if segmentBuilt != nil {
		segmentBuilt(sorted[0].ID())
	}
}

// segmentBuilt, when set (tests), is told the first document of each
// segment built, in the order the segments are introduced.
var segmentBuilt func(firstID string)

func (p rowOrderPlugin) New(results []bleveindex.Document) (segment.Segment, uint64, error) {
	sorted := byRow(results)
	seg, n, err := p.ZapPlugin.New(sorted)
	gate(sorted)
	return seg, n, err
}

func (p rowOrderPlugin) NewUsing(results []bleveindex.Document, config map[string]any) (segment.Segment, uint64, error) {
	sorted := byRow(results)
	seg, n, err := p.ZapPlugin.NewUsing(sorted, config)
	gate(sorted)
	return seg, n, err
}

func (p rowOrderPlugin) Merge(segs []segment.Segment, drops []*roaring.Bitmap, path string,
	closeCh chan struct{}, s segment.StatsReporter) ([][]uint64, uint64, error) {
	order := mergeOrder(segs, drops)
	nums, n, err := p.ZapPlugin.Merge(permute(segs, order), permute(drops, order), path, closeCh, s)
	return unpermute(nums, order), n, err
}

func (p rowOrderPlugin) MergeUsing(segs []segment.Segment, drops []*roaring.Bitmap, path string,
	closeCh chan struct{}, s segment.StatsReporter, config map[string]any) ([][]uint64, uint64, error) {
	order := mergeOrder(segs, drops)
	nums, n, err := p.ZapPlugin.MergeUsing(permute(segs, order), permute(drops, order), path, closeCh, s, config)
	return unpermute(nums, order), n, err
}

// mergeOrder orders a merge's segments by the row of their first live
// document (scorch gives them largest first). Segments written by this
// plugin hold their rows ascending, so the merged segment does too when
// the segments' row ranges do not overlap, as in a reindex; it is only an
// order, any order merges correctly.
func mergeOrder(segs []segment.Segment, drops []*roaring.Bitmap) []int {
	order := make([]int, len(segs))
	for i := range order {
		order[i] = i
	}
	if len(drops) != len(segs) {
		return order // not expected: merged as given
	}
	keys := make([]uint64, len(segs))
	for i, sg := range segs {
		keys[i] = 1 << 63
		drop := drops[i]
		n := sg.Count()
		for num := uint64(0); num < n; num++ {
			if drop != nil && drop.Contains(uint32(num)) {
				continue
			}
			if id, err := sg.DocID(num); err == nil {
				keys[i] = docRowKey(string(id))
			}
			break
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	return order
}

func permute[T any](s []T, order []int) []T {
	if len(s) != len(order) {
		return s // not expected; left as given
	}
	out := make([]T, len(s))
	for i, j := range order {
		out[i] = s[j]
	}
	return out
}

// unpermute returns the merge's new document numbers in the caller's order
// of segments.
func unpermute(nums [][]uint64, order []int) [][]uint64 {
	if len(nums) != len(order) {
		return nums
	}
	out := make([][]uint64, len(nums))
	for i, j := range order {
		out[j] = nums[i]
	}
	return out
}
