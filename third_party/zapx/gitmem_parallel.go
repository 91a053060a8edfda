package zap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/blevesearch/vellum"
)

// git mem: a new segment's inverted index built field by field on several
// goroutines.
//
// The inverted index section of a new segment is, per field in field id
// order, the postings of its terms (sorted), the term dictionary (an FST
// whose values are the postings' absolute offsets), the doc values and
// three offsets. Building a field — numbering its terms (realloc), listing
// each term's postings (process), encoding each term's frequencies, norms
// and locations and its documents' bitmap (writeDicts) — reads only that
// field's analysed terms, so fields are built at once, each into its own
// buffers, by up to GOMAXPROCS goroutines (the largest fields first). The
// pieces that depend on where a field lands in the file — a postings
// header's absolute offsets and the FST built from the postings offsets —
// are written by writeDicts, field after field in id order, as each field
// is ready: the same bytes as the serial path, which is kept for
// segments too small to gain, for gitmemUpstream, and for what the
// parallel build does not handle (a document holding a field twice, whose
// frequencies process merges; geo shapes' extra doc values; fields
// another section excludes; a location, in a field with term vectors,
// naming a field no document holds — elsewhere the build returns an
// error). New's writer has no callback (NewFileWriterEmpty); one with a
// callback is an error. TestGitmemParallelSameFile compares the bytes.

// gitmemWorkers: goroutines that build a new segment's fields (≤ 0:
// GOMAXPROCS); 1 is the serial path.
var gitmemWorkers = 0

// gitmemParallelMin: a new segment of fewer postings than this is built by
// the serial path (the goroutines would cost more than they save).
var gitmemParallelMin = 4096

// gitmemParallelBuilds counts segments built in parallel (tests).
var gitmemParallelBuilds atomic.Int64

// GitmemParallelBuilds is how many new segments this process built in
// parallel (git mem's tests).
func GitmemParallelBuilds() int64 { return gitmemParallelBuilds.Load() }

// fieldOcc is a document's field (the documents hold each field once).
type fieldOcc struct {
	field  index.Field
	docNum uint32
}

// fieldPosting is a (document, term) of one field: its list, document
// and frequency, read once from its TokenFreq, which is kept only when it
// has locations or a frequency past 32 bits (aux: 1 + its index in
// fieldBuild.withTF; 0: none, no locations). 16 bytes and no pointer
// (the collector does not scan them).
type fieldPosting struct {
	pid    uint32
	docNum uint32
	freq   uint32
	aux    uint32
}

// termPieces are the lengths of a term's encoded pieces in fieldBuild.data:
// its frequencies/norms (chunkedIntCoder.Write's bytes; 0: none), its
// locations (likewise) and its bitmap (length-prefixed); bitmap 0: the
// term has no postings (nothing written, no FST entry).
type termPieces struct {
	tf, loc, bitmap uint32
}

// fieldBuild is one field of a new segment, built by one goroutine.
type fieldBuild struct {
	fieldID   uint16
	includeDV bool
	postings  int // number of (document, term)s: the work, for the order
	occs      []fieldOcc

	dict   map[string]uint32 // term → list id
	keys   []string          // terms, sorted once listed
	pids   []uint32          // list id of each of keys
	counts []uint32          // list id → postings, then end in byList
	nlocs  []uint32          // list id → locations, then start in locs
	rec    []fieldPosting    // in document order
	withTF []*index.TokenFreq
	lens   []uint32 // docNum → the field's analysed length
	pairs  []termPid

	byList []fieldPosting // rec by list, each list in document order
	locs   []interimLoc

	data   []byte       // the terms' encoded pieces, in term order
	pieces []termPieces // per term of keys
	dv     bytes.Buffer // the doc values (chunkedContentCoder.Write's bytes)

	bytesWritten uint64
	err          error
	done         chan struct{}
}

// gitmemParallel is the state of a parallel build in invertedIndexOpaque.
type gitmemParallel struct {
	par    bool          // this segment's fields are built by fieldBuilds
	fields []*fieldBuild // by field id (reused)
	parWG  sync.WaitGroup
}

// startParallel decides, on the first process call, whether this segment
// is built in parallel, and if so starts the goroutines; false: the
// serial path (realloc, process, writeDicts) builds it.
func (io *invertedIndexOpaque) startParallel() bool {
	workers := gitmemWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers <= 1 || gitmemUpstream || len(io.results) == 0 {
		return false
	}
	numFields := len(io.FieldsInv)
	for len(io.fields) < numFields {
		io.fields = append(io.fields, &fieldBuild{})
	}
	fields := io.fields[:numFields]
	for fieldID, fb := range fields {
		fb.reset(uint16(fieldID))
	}
	// The fields' occurrences, and whether the parallel build handles
	// every one.
	ok := true
	total := 0
	for docNum, result := range io.results {
		visit := func(field index.Field) {
			if !ok {
				return
			}
			if isFieldExcludedFromInvertedTextIndexSection(field) {
				ok = false
				return
			}
			if _, geo := field.(index.GeoShapeField); geo {
				ok = false
				return
			}
			idPlus1, exists := io.FieldsMap[field.Name()]
			if !exists {
				ok = false
				return
			}
			fb := fields[idPlus1-1]
			if n := len(fb.occs); n > 0 && fb.occs[n-1].docNum == uint32(docNum) {
				ok = false // the field twice: process merges them
				return
			}
			fb.occs = append(fb.occs, fieldOcc{field, uint32(docNum)})
			tfs := field.AnalyzedTokenFrequencies()
			fb.postings += len(tfs)
			total += len(tfs)
			if field.Options().IncludeDocValues() {
				fb.includeDV = true
			}
			if field.Options().IncludeTermVectors() {
				last := ""
				for _, tf := range tfs {
					for _, loc := range tf.Locations {
						if loc.Field != "" && loc.Field != last {
							if _, exists := io.FieldsMap[loc.Field]; !exists {
								ok = false
							}
							last = loc.Field
						}
					}
				}
			}
		}
		result.VisitComposite(func(field index.CompositeField) { visit(field) })
		result.VisitFields(visit)
		if !ok {
			break
		}
	}
	if !ok || total < gitmemParallelMin {
		for _, fb := range fields {
			clear(fb.occs)
			fb.occs = fb.occs[:0]
		}
		return false
	}
	// Largest fields first, on at most workers goroutines.
	order := make([]*fieldBuild, numFields)
	copy(order, fields)
	slices.SortStableFunc(order, func(a, b *fieldBuild) int { return b.postings - a.postings })
	workers = min(workers, numFields)
	var next atomic.Int64
	io.par = true
	io.parWG.Add(workers)
	for range workers {
		go func() {
			defer io.parWG.Done()
			var w fieldWorker
			for {
				k := int(next.Add(1)) - 1
				if k >= len(order) {
					return
				}
				fb := order[k]
				fb.err = w.build(io, fb)
				close(fb.done)
			}
		}()
	}
	gitmemParallelBuilds.Add(1)
	return true
}

func (fb *fieldBuild) reset(fieldID uint16) {
	fb.fieldID = fieldID
	fb.includeDV = false
	fb.postings = 0
	clear(fb.occs)
	fb.occs = fb.occs[:0]
	if fb.dict == nil {
		fb.dict = map[string]uint32{}
	} else {
		clear(fb.dict)
	}
	clear(fb.keys)
	fb.keys = fb.keys[:0]
	fb.pids = fb.pids[:0]
	fb.counts = fb.counts[:0]
	fb.nlocs = fb.nlocs[:0]
	fb.rec = fb.rec[:0]
	clear(fb.withTF)
	fb.withTF = fb.withTF[:0]
	fb.lens = fb.lens[:0]
	clear(fb.pairs)
	fb.pairs = fb.pairs[:0]
	fb.byList = fb.byList[:0]
	clear(fb.locs)
	fb.locs = fb.locs[:0]
	fb.data = fb.data[:0]
	fb.pieces = fb.pieces[:0]
	fb.dv.Reset()
	fb.bytesWritten = 0
	fb.err = nil
	fb.done = make(chan struct{})
}

// fieldWorker is one goroutine's scratch.
type fieldWorker struct {
	tfEncoder, locEncoder *chunkedIntCoder
	bitmap                *roaring.Bitmap
	docNums               []uint32
	docTerms              [][]byte
	varint                [binary.MaxVarintLen64]byte
	out                   bytes.Buffer
}

// build builds fb: its terms, their postings, and their encoded pieces.
func (w *fieldWorker) build(io *invertedIndexOpaque, fb *fieldBuild) error {
	numDocs := len(io.results)
	// realloc's part: number the terms, note each posting.
	if cap(fb.lens) < numDocs {
		fb.lens = make([]uint32, numDocs)
	}
	fb.lens = fb.lens[:numDocs]
	for _, o := range fb.occs {
		fb.lens[o.docNum] = uint32(o.field.AnalyzedLength())
		for term, tf := range o.field.AnalyzedTokenFrequencies() {
			pid, exists := fb.dict[term]
			if !exists {
				pid = uint32(len(fb.keys))
				fb.dict[term] = pid
				fb.keys = append(fb.keys, term)
				fb.counts = append(fb.counts, 0)
				fb.nlocs = append(fb.nlocs, 0)
			}
			p := fieldPosting{pid: pid, docNum: o.docNum}
			freq, numLocs := tf.Frequency(), len(tf.Locations)
			if numLocs == 0 && uint64(freq) <= math.MaxUint32 {
				p.freq = uint32(freq)
			} else {
				fb.withTF = append(fb.withTF, tf)
				p.aux = uint32(len(fb.withTF))
			}
			fb.rec = append(fb.rec, p)
			fb.counts[pid]++
			fb.nlocs[pid] += uint32(numLocs)
		}
	}
	// sortDictKeys' part.
	for pid, term := range fb.keys {
		fb.pairs = append(fb.pairs, termPid{term, uint32(pid)})
	}
	slices.SortFunc(fb.pairs, func(a, b termPid) int { return strings.Compare(a.term, b.term) })
	for _, p := range fb.pairs {
		fb.pids = append(fb.pids, p.pid)
	}
	for k, p := range fb.pairs {
		fb.keys[k] = p.term
	}
	// process's part: each list's postings, in document order.
	var nf, nl uint32
	for pid := range fb.counts {
		c, l := fb.counts[pid], fb.nlocs[pid]
		fb.counts[pid], fb.nlocs[pid] = nf, nl
		nf += c
		nl += l
	}
	if cap(fb.byList) < int(nf) {
		fb.byList = make([]fieldPosting, nf)
	}
	fb.byList = fb.byList[:nf]
	if cap(fb.locs) < int(nl) {
		fb.locs = make([]interimLoc, nl)
	}
	fb.locs = fb.locs[:nl]
	fieldID := fb.fieldID
	for _, rp := range fb.rec {
		fb.byList[fb.counts[rp.pid]] = rp
		fb.counts[rp.pid]++
		if rp.aux > 0 {
			at := fb.nlocs[rp.pid]
			for _, loc := range fb.withTF[rp.aux-1].Locations {
				locf := fieldID
				if loc.Field != "" {
					idPlus1, ok := io.FieldsMap[loc.Field]
					if !ok { // startParallel checked the fields with term vectors
						return fmt.Errorf("zap: a location of field %q names an undefined field %q",
							io.FieldsInv[fieldID], loc.Field)
					}
					locf = idPlus1 - 1
				}
				var arrayposs []uint64
				if len(loc.ArrayPositions) > 0 {
					arrayposs = loc.ArrayPositions
				}
				fb.locs[at] = interimLoc{
					fieldID:   locf,
					pos:       uint64(loc.Position),
					start:     uint64(loc.Start),
					end:       uint64(loc.End),
					arrayposs: arrayposs,
				}
				at++
			}
			fb.nlocs[rp.pid] = at
		}
	}
	// counts and nlocs are now each list's end.
	return w.encode(io, fb)
}

// encode is writeDicts' loop over a field's terms, into fb's buffers.
func (w *fieldWorker) encode(io *invertedIndexOpaque, fb *fieldBuild) error {
	numDocs := uint64(len(io.results))
	if w.tfEncoder == nil {
		w.tfEncoder = newChunkedIntCoder(1024, numDocs-1)
		w.locEncoder = newChunkedIntCoder(1024, numDocs-1)
		w.bitmap = roaring.New()
	}
	tfEncoder, locEncoder := w.tfEncoder, w.locEncoder
	tfEncoder.SetChunkSize(1024, numDocs-1)
	locEncoder.SetChunkSize(1024, numDocs-1)
	tfEncoder.Reset()
	locEncoder.Reset()
	if fb.includeDV {
		if cap(w.docTerms) < int(numDocs) {
			w.docTerms = make([][]byte, numDocs)
		}
		w.docTerms = w.docTerms[:numDocs]
		for d := range w.docTerms {
			w.docTerms[d] = w.docTerms[d][:0]
		}
	}
	for k, term := range fb.keys {
		pid := fb.pids[k]
		var fStart, lStart uint32
		if pid > 0 {
			fStart, lStart = fb.counts[pid-1], fb.nlocs[pid-1]
		}
		postings := fb.byList[fStart:fb.counts[pid]]
		locs := fb.locs[lStart:fb.nlocs[pid]]
		locOffset := 0

		cardinality := uint64(len(postings))
		chunkSize, err := getChunkSize(io.chunkMode, cardinality, numDocs)
		if err != nil {
			return err
		}
		tfEncoder.SetChunkSize(chunkSize, numDocs-1)
		locEncoder.SetChunkSize(chunkSize, numDocs-1)

		w.docNums = w.docNums[:0]
		for _, p := range postings {
			// process's interimFreqNorm of the posting
			freqNorm := interimFreqNorm{freq: uint64(p.freq), norm: math.Float32frombits(fb.lens[p.docNum]), docNum: p.docNum}
			if p.aux > 0 {
				tf := fb.withTF[p.aux-1]
				freqNorm.freq, freqNorm.numLocs = uint64(tf.Frequency()), len(tf.Locations)
			}
			docNum := uint64(freqNorm.docNum)
			w.docNums = append(w.docNums, freqNorm.docNum)
			if freqNorm.freq > 0 {
				err = tfEncoder.Add(docNum,
					encodeFreqHasLocs(freqNorm.freq, freqNorm.numLocs > 0),
					uint64(math.Float32bits(freqNorm.norm)))
			} else {
				err = tfEncoder.Add(docNum,
					encodeFreqHasLocs(freqNorm.freq, freqNorm.numLocs > 0))
			}
			if err != nil {
				return err
			}
			if freqNorm.numLocs > 0 {
				numBytesLocs := 0
				for _, loc := range locs[locOffset : locOffset+freqNorm.numLocs] {
					numBytesLocs += totalUvarintBytes(
						uint64(loc.fieldID), loc.pos, loc.start, loc.end,
						uint64(len(loc.arrayposs)), loc.arrayposs)
				}
				err = locEncoder.Add(docNum, uint64(numBytesLocs))
				if err != nil {
					return err
				}
				for _, loc := range locs[locOffset : locOffset+freqNorm.numLocs] {
					err = locEncoder.Add(docNum,
						uint64(loc.fieldID), loc.pos, loc.start, loc.end,
						uint64(len(loc.arrayposs)))
					if err != nil {
						return err
					}
					err = locEncoder.Add(docNum, loc.arrayposs...)
					if err != nil {
						return err
					}
				}
				locOffset += freqNorm.numLocs
			}
			if fb.includeDV {
				w.docTerms[docNum] = append(append(w.docTerms[docNum], term...), index.DocValueTermSeparator)
			}
		}

		tfEncoder.Close()
		locEncoder.Close()
		fb.bytesWritten += locEncoder.getBytesWritten() + tfEncoder.getBytesWritten()

		// writePostings' position-free part.
		w.bitmap.Clear()
		w.bitmap.AddMany(w.docNums)
		var pieces termPieces
		if w.bitmap.GetCardinality() > 0 {
			w.out.Reset()
			if tfEncoder.FinalSize() > 0 {
				if _, err = tfEncoder.Write(&w.out); err != nil {
					return err
				}
				pieces.tf = uint32(w.out.Len())
			}
			if locEncoder.FinalSize() > 0 {
				if _, err = locEncoder.Write(&w.out); err != nil {
					return err
				}
				pieces.loc = uint32(w.out.Len()) - pieces.tf
			}
			fb.data = append(fb.data, w.out.Bytes()...)
			buf, err := w.bitmap.ToBytes()
			if err != nil {
				return err
			}
			n := binary.PutUvarint(w.varint[:], uint64(len(buf)))
			fb.data = append(fb.data, w.varint[:n]...)
			fb.data = append(fb.data, buf...)
			pieces.bitmap = uint32(n + len(buf))
		}
		fb.pieces = append(fb.pieces, pieces)

		tfEncoder.Reset()
		locEncoder.Reset()
	}

	// The doc values (writeDicts' fdvEncoder, into fb.dv).
	if fb.includeDV {
		chunkSize, err := getChunkSize(LegacyChunkMode, 0, 0)
		if err != nil {
			return err
		}
		opts := io.FieldsOptions[io.FieldsInv[fb.fieldID]]
		if opts.SkipDVChunking() {
			chunkSize = 1
		}
		dvw := NewFileWriterEmpty(NewCountHashWriter(&fb.dv))
		fdvEncoder := newChunkedContentCoder(chunkSize, numDocs-1, dvw, false, opts.SkipDVCompression())
		for docNum, docTerms := range w.docTerms {
			if len(docTerms) > 0 {
				if err := fdvEncoder.Add(uint64(docNum), docTerms); err != nil {
					return err
				}
			}
		}
		if err := fdvEncoder.Close(); err != nil {
			return err
		}
		fb.bytesWritten += fdvEncoder.getBytesWritten()
		if _, err := fdvEncoder.Write(); err != nil {
			return err
		}
	}
	return nil
}

// writeDictsParallel writes the fields built by startParallel's
// goroutines, in field id order, as writeDicts does.
func (io *invertedIndexOpaque) writeDictsParallel(w *FileWriter) error {
	defer io.waitParallel()
	if w.processor != nil {
		// New's writer has no callback (NewFileWriterEmpty); the pieces
		// were encoded without one.
		return fmt.Errorf("zap: parallel segment build with a writer callback")
	}
	buf := io.grabBuf(binary.MaxVarintLen64)
	var err error
	if io.builder == nil {
		io.builder, err = vellum.New(&io.builderBuf, vellumBuilderOpts)
		if err != nil {
			return err
		}
	}
	const flushAt = 64 << 10
	var batch []byte
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := w.Write(batch)
		batch = batch[:0]
		return err
	}
	var hdr [2 * binary.MaxVarintLen64]byte
	for fieldID, fb := range io.fields[:len(io.FieldsInv)] {
		<-fb.done
		if fb.err != nil {
			return fb.err
		}
		io.incrementBytesWritten(fb.bytesWritten)
		data := fb.data
		for k, term := range fb.keys {
			p := fb.pieces[k]
			if p.bitmap == 0 {
				continue // no postings: writePostings writes nothing
			}
			at := uint64(w.Count() + len(batch))
			var tfOffset, locOffset uint64
			if p.tf > 0 {
				tfOffset = at
			}
			if p.loc > 0 {
				locOffset = at + uint64(p.tf)
			}
			n := p.tf + p.loc
			batch = append(batch, data[:n]...)
			data = data[n:]
			postingsOffset := at + uint64(n)
			h := binary.PutUvarint(hdr[:], tfOffset)
			h += binary.PutUvarint(hdr[h:], locOffset)
			batch = append(batch, hdr[:h]...)
			batch = append(batch, data[:p.bitmap]...)
			data = data[p.bitmap:]
			if len(batch) >= flushAt {
				if err = flush(); err != nil {
					return err
				}
			}
			// Insert copies what it keeps of the key: no copy of term.
			key := unsafe.Slice(unsafe.StringData(term), len(term))
			if err = io.builder.Insert(key, postingsOffset); err != nil {
				return err
			}
		}
		if err = flush(); err != nil {
			return err
		}

		if err = io.builder.Close(); err != nil {
			return err
		}
		dictOffset := uint64(w.Count())
		vellumData := w.process(io.builderBuf.Bytes())
		n := binary.PutUvarint(buf, uint64(len(vellumData)))
		if _, err = w.Write(buf[:n]); err != nil {
			return err
		}
		io.incrementBytesWritten(uint64(len(vellumData)))
		if _, err = w.Write(vellumData); err != nil {
			return err
		}
		io.builderBuf.Reset()
		if err = io.builder.Reset(&io.builderBuf); err != nil {
			return err
		}

		fdvStart, fdvEnd := uint64(fieldNotUninverted), uint64(fieldNotUninverted)
		if fb.includeDV {
			fdvStart = uint64(w.Count())
			if _, err = w.Write(fb.dv.Bytes()); err != nil {
				return err
			}
			fdvEnd = uint64(w.Count())
		}

		fieldStart := w.Count()
		for _, v := range []uint64{fdvStart, fdvEnd, dictOffset} {
			n = binary.PutUvarint(buf, v)
			if _, err = w.Write(buf[:n]); err != nil {
				return err
			}
		}
		io.fieldAddrs[fieldID] = fieldStart
	}
	return nil
}

// waitParallel waits for the goroutines of a parallel build (none: returns
// at once).
func (io *invertedIndexOpaque) waitParallel() {
	io.parWG.Wait()
}

// resetParallel drops a parallel build's state (its goroutines ended).
func (io *invertedIndexOpaque) resetParallel() {
	io.waitParallel()
	io.par = false
	for _, fb := range io.fields {
		fb.reset(0)
	}
}
