package zap

import (
	"math"
	"slices"
	"sort"
	"strings"

	index "github.com/blevesearch/bleve_index_api"
)

// git mem: a new segment's postings without a map look-up per document
// and term in process, and without a roaring Add per posting.
//
// Upstream looks every (document, field, term) up in the field's
// dictionary twice: in realloc, which numbers the postings lists, and again
// in process, which adds the document to the list's bitmap one Add at a
// time. Here realloc records each posting's list id beside its
// TokenFreq, process appends the recorded postings (the document number
// goes into interimFreqNorm), and writeDicts builds each list's bitmap
// once, with AddMany of its documents in ascending order — the same
// container operations as one Add each, so the bitmap, and the file, are
// the same (TestGitmemBuildSameFile compares with upstream's path).
//
// A document that holds a field twice (the same name) is processed as
// upstream does: process merges the two fields' frequencies (MergeAll),
// which the recorded postings, one per field, do not.

// recordedPosting is one (document, field, term) seen by realloc.
type recordedPosting struct {
	tf      *index.TokenFreq
	pid     uint32
	fieldID uint16
}

type gitmemBuild struct {
	recorded    []recordedPosting // every document's postings, in order
	recordedEnd []int             // document → end of its postings in recorded
	recordedDup []bool            // document → holds a field twice
	fieldSeen   []int             // field id → last document + 1 that held it
	docNums     []uint32          // writeDicts: a list's documents
	dictPids    [][]uint32        // field id → the list id of each of DictKeys
	dictPairs   []termPid         // sortDictKeys
}

type termPid struct {
	term string
	pid  uint32
}

// recordKey notes the list id of the term realloc appended to
// DictKeys[fieldID].
func (g *gitmemBuild) recordKey(fieldID uint16, pid uint32) {
	for int(fieldID) >= len(g.dictPids) {
		g.dictPids = append(g.dictPids, nil)
	}
	g.dictPids[fieldID] = append(g.dictPids[fieldID], pid)
}

// sortDictKeys sorts each field's DictKeys (upstream's sort.Strings) and
// their list ids with them, so that writeDicts need not look each term up
// again.
func (io *invertedIndexOpaque) sortDictKeys() {
	for fieldID, keys := range io.DictKeys {
		if gitmemUpstream {
			sort.Strings(keys)
			continue
		}
		for fieldID >= len(io.dictPids) {
			io.dictPids = append(io.dictPids, nil)
		}
		pids := io.dictPids[fieldID]
		pairs := io.dictPairs[:0]
		for k, term := range keys {
			pairs = append(pairs, termPid{term, pids[k]})
		}
		slices.SortFunc(pairs, func(a, b termPid) int { return strings.Compare(a.term, b.term) })
		for k, p := range pairs {
			keys[k], pids[k] = p.term, p.pid
		}
		clear(pairs)
		io.dictPairs = pairs[:0]
	}
}

// gitmemUpstream (tests): process as upstream, a dictionary look-up and a
// bitmap Add per posting (writeDicts then reads the documents from
// interimFreqNorm, in the bitmap's order, and adds none).
var gitmemUpstream bool

func (g *gitmemBuild) resetGitmemBuild() {
	clear(g.recorded)
	g.recorded = g.recorded[:0]
	g.recordedEnd = g.recordedEnd[:0]
	g.recordedDup = g.recordedDup[:0]
	g.fieldSeen = g.fieldSeen[:0]
	g.docNums = g.docNums[:0]
	for f := range g.dictPids {
		g.dictPids[f] = g.dictPids[f][:0]
	}
	g.dictPids = g.dictPids[:0]
}

func (g *gitmemBuild) startRecording() {
	g.resetGitmemBuild()
}

// recordDoc ends the postings of the document before (realloc calls it
// before each document and once after the last).
func (g *gitmemBuild) recordDoc() {
	if len(g.recordedDup) > len(g.recordedEnd) {
		g.recordedEnd = append(g.recordedEnd, len(g.recorded))
	}
	g.recordedDup = append(g.recordedDup, false)
}

// recordField notes that docNum holds fieldID.
func (g *gitmemBuild) recordField(docNum int, fieldID uint16) {
	for int(fieldID) >= len(g.fieldSeen) {
		g.fieldSeen = append(g.fieldSeen, 0)
	}
	if g.fieldSeen[fieldID] == docNum+1 {
		g.recordedDup[docNum] = true
	}
	g.fieldSeen[fieldID] = docNum + 1
}

// processRecorded appends docNum's recorded postings (process's work for a
// document once its fields are visited); false: not recorded, process does
// it as upstream.
func (io *invertedIndexOpaque) processRecorded(docNum uint32) bool {
	if gitmemUpstream || int(docNum) >= len(io.recordedEnd) || io.recordedDup[docNum] {
		return false
	}
	start := 0
	if docNum > 0 {
		start = io.recordedEnd[docNum-1]
	}
	for _, rp := range io.recorded[start:io.recordedEnd[docNum]] {
		tf := rp.tf
		pid := rp.pid
		io.FreqNorms[pid] = append(io.FreqNorms[pid],
			interimFreqNorm{
				freq:    uint64(tf.Frequency()),
				norm:    math.Float32frombits(uint32(io.reusableFieldLens[rp.fieldID])),
				docNum:  docNum,
				numLocs: len(tf.Locations),
			})
		if len(tf.Locations) > 0 {
			locs := io.Locs[pid]
			for _, loc := range tf.Locations {
				var locf = rp.fieldID
				if loc.Field != "" {
					locf = uint16(io.getOrDefineField(loc.Field))
				}
				var arrayposs []uint64
				if len(loc.ArrayPositions) > 0 {
					arrayposs = loc.ArrayPositions
				}
				locs = append(locs, interimLoc{
					fieldID:   locf,
					pos:       uint64(loc.Position),
					start:     uint64(loc.Start),
					end:       uint64(loc.End),
					arrayposs: arrayposs,
				})
			}
			io.Locs[pid] = locs
		}
	}
	for i := 0; i < len(io.FieldsInv); i++ { // clear these for reuse
		io.reusableFieldLens[i] = 0
		io.reusableFieldTFs[i] = nil
	}
	return true
}
