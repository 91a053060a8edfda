package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
)

// A forget removes a few exchanges from main and rewrites every commit
// after the oldest of them, while the other exchanges keep their ids and
// text. Rebuilding the index for that costs as much as `git mem reindex`
// (232 s CPU at 100,000 exchanges); ForgetDocs instead empties the
// forgotten rows in place and moves the other documents to their new
// commits, and Compact merges Bleve's segments so that no term of the
// forgotten text stays in a file. The only difference from a rebuild is in
// the row numbers and sequence numbers (a hole where each forgotten row
// was), which order nothing but ties; `git mem reindex` closes the holes.

// deadPrefix starts the id of an emptied row: no exchange id can hold a
// NUL (exchange.CheckID), so it never meets a real one.
const deadPrefix = "\x00forgotten/"

func deadID(row int32) string { return deadPrefix + strconv.Itoa(int(row)) }

func isDead(id string) bool { return strings.HasPrefix(id, deadPrefix) }

// ForgetDocs empties the rows of the exchanges ids (their card, text,
// vector, signature and postings go) and moves every other document whose
// commit is a key of moved to the new commit. It returns how many rows it
// emptied. The caller holds the index exclusively, then sets the last
// commit (SetLastCommit) and compacts (Compact).
func (ix *Index) ForgetDocs(ids []string, moved map[string]string) (int, error) {
	if ix.readOnly {
		return 0, ErrReadOnly
	}
	if err := ix.ensureFull(); err != nil {
		return 0, err
	}
	if err := ix.ensureVectors(); err != nil {
		return 0, err
	}
	if err := ix.ensureDedupMaps(); err != nil {
		return 0, err
	}
	ix.touched = true // rows emptied, commits moved
	zero := make([]float32, ix.vecs.Dims)
	b := ix.idx.NewBatch()
	n := 0
	for _, id := range ids {
		row, ok := ix.byID[id]
		if !ok {
			continue
		}
		old := ix.recs[row]
		ix.xorDigest(DocDigest(old.ID, old.Commit))
		ix.man.BM25.FieldLen[fieldDistilled] -= int64(old.DistLen)
		// An empty document, not a deletion: Bleve's count stays the
		// table's (Verify), and the old postings are dropped by Compact.
		if err := b.Index(bleveID(row), map[string]any{}); err != nil {
			ix.broken = err
			return 0, fmt.Errorf("empty the row of %s: %w", id, err)
		}
		ix.unindexDedup(row, &old)
		ix.recs[row] = docRec{Seq: old.Seq, ID: deadID(row), Group: row}
		ix.groups[row] = row
		ix.sigs[row] = [sigLen]uint32{}
		ix.sigsKept = -1 // minhash.bin is written whole
		_ = ix.vecs.Set(int(row), zero)
		delete(ix.byID, id)
		ix.man.Dead = append(ix.man.Dead, row)
		n++
	}
	for i := range ix.recs {
		r := &ix.recs[i]
		if nc, ok := moved[r.Commit]; ok && !isDead(r.ID) && nc != r.Commit {
			ix.xorDigest(DocDigest(r.ID, r.Commit) ^ DocDigest(r.ID, nc))
			r.Commit = nc
		}
	}
	if err := ix.forgetLinks(ids, moved); err != nil { // links.go
		return n, err
	}
	ix.dead = nil
	ix.dirty = true
	ix.graph = nil
	ix.sctx = nil
	if n > 0 {
		if err := ix.idx.Batch(b); err != nil {
			ix.broken = err
			return 0, fmt.Errorf("empty %d forgotten rows: %w", n, err)
		}
	}
	return n, nil
}

// unindexDedup takes an emptied row out of the dedup maps, leaving them as
// buildDedupMaps would build them without it (a rebuild cost 1.8 s at
// 100,000 exchanges): band chains keep their row order, and an exact key
// passes to the next live row that has it.
func (ix *Index) unindexDedup(row int32, old *docRec) {
	for _, k := range bandKeys(&ix.sigs[row]) {
		ix.bands.remove(k, row)
	}
	if ix.exactIdx[old.Exact] != row {
		return
	}
	delete(ix.exactIdx, old.Exact)
	for i := range ix.recs {
		if int32(i) != row && ix.recs[i].Exact == old.Exact && !isDead(ix.recs[i].ID) {
			ix.exactIdx[old.Exact] = int32(i)
			return
		}
	}
}

// Compact merges Bleve's segments into one, which drops the postings and
// dictionary terms of replaced documents from the files.
func (ix *Index) Compact(ctx context.Context) error {
	adv, err := ix.idx.Advanced()
	if err != nil {
		return fmt.Errorf("compact the search index: %w", err)
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return fmt.Errorf("compact the search index: not a scorch index")
	}
	store := filepath.Join(ix.dir, "bleve", "store")
	// The segment files present before the merge are the ones that may
	// hold a forgotten document's words: the wait below is for them. A
	// file written after the merge began holds none (the merge's output
	// drops deleted documents; a batch persisted meanwhile holds only the
	// emptied rows), and at 1,000,000 exchanges one often stays beside the
	// merged segment for good: waiting for a single file there timed out
	// and the forget rebuilt the whole index (8+ minutes).
	before, _ := filepath.Glob(filepath.Join(store, "*.zap"))
	if err := s.ForceMerge(ctx, &mergeplan.SingleSegmentMergePlanOptions); err != nil {
		return fmt.Errorf("compact the search index: %w", err)
	}
	// Scorch deletes the merged-away segment files in its persister's
	// next idle moment; wait for it, or they keep the forgotten words.
	// It deletes them only when it goes idle and no snapshot refers to
	// them then; a file still referred to at that moment (the merge's own
	// snapshot, on a loaded machine) stays until the persister runs again,
	// which an idle index never does: a tiny internal write every 200 ms
	// wakes it (two runs of 20 beside two CPU hogs timed out without it).
	start := time.Now()
	deadline := start.Add(compactWait)
	nudged := start
	for {
		zaps, _ := filepath.Glob(filepath.Join(store, "*.zap"))
		if len(zaps) <= 1 {
			return nil
		}
		left := 0
		for _, z := range before {
			if _, err := os.Stat(z); err == nil {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("compact the search index: %d segment files still there after %s", left, compactWait)
		}
		if time.Since(nudged) > 200*time.Millisecond {
			nudged = time.Now()
			if err := ix.idx.SetInternal([]byte(compactNudgeKey), []byte(nudged.UTC().Format(time.RFC3339Nano))); err != nil {
				return fmt.Errorf("compact the search index: %w", err)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// compactNudgeKey is the Bleve internal key Compact writes to wake
// scorch's persister; nothing reads it.
const compactNudgeKey = "git-mem-compact-nudge"

// compactWait bounds the wait for scorch's cleanup.
const compactWait = 20 * time.Second

// deadRows is the set of emptied rows (nil when none).
func (ix *Index) deadRows() map[int32]bool {
	if len(ix.man.Dead) == 0 {
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.dead == nil {
		ix.dead = make(map[int32]bool, len(ix.man.Dead))
		for _, r := range ix.man.Dead {
			ix.dead[r] = true
		}
	}
	return ix.dead
}
