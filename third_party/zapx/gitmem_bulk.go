//  Added for git mem (see GITMEM.md); not part of upstream zap.

package zap

import (
	"errors"
	"fmt"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
)

// BulkPostings reads a postings list's documents, frequencies and norm
// bits in batches, the ones PostingsIterator.Next gives one by one with
// includeFreq and includeNorm set (locations are never read): the same
// documents (deleted ones left out) in the same ascending order, with the
// same frequency and norm bits each. It walks the roaring bitmap with a
// ManyIterator and decodes a chunk's freq/norm varints in one loop,
// instead of Next's peekable iterators, per-posting chunk bookkeeping and
// cleared Posting struct.
//
// A BulkPostings is reused across lists by Reset.
type BulkPostings struct {
	p *PostingsList

	// 1-hit encoding
	hit1     bool
	hit1Done bool

	all    roaring.ManyIntIterable
	except roaring.IntPeekable
	fn     *chunkedIntDecoder
	noFreq bool // the list's freq/norm data is not encoded: 0, 0 each
	chunk  int  // the chunk loaded in fn, -1 for none
	// the documents chunk covers, [lo, hi): Next compares a document with
	// them instead of dividing it by the chunk size (a division per
	// posting was a fifth of Next's time at 1,000,000 exchanges).
	lo, hi  uint64
	S       []byte
	C       int
	chunkSz uint32
	docs    []uint32 // NextPairs' document numbers, reused
}

// Reset makes b read p (a *PostingsList from this package). It returns
// false for a list it cannot read (another type).
func (b *BulkPostings) Reset(pl interface{}) (bool, error) {
	p, ok := pl.(*PostingsList)
	if !ok {
		return false, nil
	}
	fn, docs := b.fn, b.docs
	*b = BulkPostings{p: p, fn: fn, chunk: -1, docs: docs}
	if p.normBits1Hit != 0 {
		b.hit1 = true
		b.hit1Done = p.except != nil && p.except.Contains(uint32(p.docNum1Hit))
		return true, nil
	}
	if p.postings == nil {
		b.hit1, b.hit1Done = true, true // empty
		return true, nil
	}
	if p.chunkSize == 0 {
		// A list reused for a term the dictionary lacks is an empty
		// bitmap with no chunk size; the iterator gives nothing for it,
		// and fails for a list with postings.
		b.hit1, b.hit1Done = true, true
		if p.Count() > 0 {
			return true, ErrChunkSizeZero
		}
		return true, nil
	}
	if p.chunkSize > math.MaxUint32 {
		b.chunkSz = math.MaxUint32
	} else {
		b.chunkSz = uint32(p.chunkSize)
	}
	b.all = p.postings.ManyIterator()
	if p.except != nil && !p.except.IsEmpty() {
		b.except = p.except.Iterator()
	}
	if p.freqOffset == termNotEncoded {
		b.noFreq = true
	} else {
		b.fn = newChunkedIntDecoder(p.sb.mem, p.freqOffset, b.fn, p.sb.fileReader)
	}
	return true, nil
}

// uvarint reads the varint at S[C:] as memUvarintReader does (0 past the
// end) and returns it and the index after it; ok is false for one that
// overflows or is cut off at the end (memUvarintReader would panic there).
// Next reads one- and two-byte varints itself and calls it for the rest.
//
//go:noinline
func uvarint(S []byte, C int) (x uint64, next int, ok bool) {
	if C >= len(S) {
		return 0, C, true
	}
	var s uint
	for C < len(S) {
		c := S[C]
		C++
		if c < 0x80 {
			if s >= 63 && (s > 63 || c > 1) {
				return 0, C, false
			}
			return x | uint64(c)<<s, C, true
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, C, false
}

var errBulkVarint = fmt.Errorf("memUvarintReader overflow or a varint cut off")

// Next fills docs, freqs and norms (of equal length) from the start with
// the next postings and returns how many; 0 at the end. A norm is the
// bits Posting.NormUint64 gives.
func (b *BulkPostings) Next(docs []uint32, freqs, norms []uint64) (int, error) {
	max := min(len(docs), len(freqs), len(norms))
	if b.hit1 {
		if b.hit1Done || max == 0 {
			return 0, nil
		}
		b.hit1Done = true
		docs[0], freqs[0], norms[0] = uint32(b.p.docNum1Hit), 1, uint64(uint32(b.p.normBits1Hit))
		return 1, nil
	}
	S, C, chunk, sz, lo, hi := b.S, b.C, b.chunk, b.chunkSz, b.lo, b.hi
	defer func() { b.S, b.C, b.chunk, b.lo, b.hi = S, C, chunk, lo, hi }()
	n := 0
	for n < max {
		// The documents go straight into docs; deleted ones are
		// squeezed out as the batch is decoded (w ≤ the index read).
		k := b.all.NextMany(docs[n:max])
		if k == 0 {
			break
		}
		w := n
		for _, d := range docs[n : n+k] {
			var freq, norm uint64
			if !b.noFreq {
				if uint64(d) < lo || uint64(d) >= hi {
					// d is past the loaded chunk: its own is d / sz.
					if c := int(d / sz); c != chunk {
						if err := b.fn.loadChunk(c); err != nil {
							return w, fmt.Errorf("error loading chunk: %v", err)
						}
						chunk = c
						S, C = b.fn.curChunkBytes, 0
					}
					lo = uint64(chunk) * uint64(sz)
					hi = lo + uint64(sz)
				}
				var fh uint64
				if C < len(S) && S[C] < 0x80 {
					fh = uint64(S[C])
					C++
				} else {
					var ok bool
					if fh, C, ok = uvarint(S, C); !ok {
						return w, fmt.Errorf("error reading frequency: %v", errBulkVarint)
					}
				}
				if freq = fh >> 1; freq != 0 {
					if C+1 < len(S) && S[C] >= 0x80 && S[C+1] < 0x80 {
						norm = uint64(S[C]&0x7f) | uint64(S[C+1])<<7
						C += 2
					} else if C < len(S) && S[C] < 0x80 {
						norm = uint64(S[C])
						C++
					} else {
						var ok bool
						if norm, C, ok = uvarint(S, C); !ok {
							return w, fmt.Errorf("error reading norm: %v", errBulkVarint)
						}
					}
				}
			}
			if b.except != nil {
				b.except.AdvanceIfNeeded(d)
				if b.except.HasNext() && b.except.PeekNext() == d {
					continue // deleted
				}
			}
			// Next keeps the norm bits as a float32 (NormUint64 gives
			// its 32 bits back).
			docs[w], freqs[w], norms[w] = d, freq, uint64(uint32(norm))
			w++
		}
		n = w
	}
	return n, nil
}

// Pair is a posting's document and frequency, as NextPairs gives them.
type Pair struct{ Doc, Freq uint32 }

// ErrPairFreq is NextPairs' error for a frequency over 2^32-1, which a
// Pair cannot hold.
var ErrPairFreq = errors.New("a frequency over 2^32-1")

// NextPairs is Next for a reader of documents and frequencies alone: the
// same postings in the same order, each as one Pair, the norm varints
// read past but not kept. One pass writing 8 bytes a posting instead of
// three arrays of 20 that the caller reads again. It uses a buffer of
// len(dst) document numbers, kept for the next call.
func (b *BulkPostings) NextPairs(dst []Pair) (int, error) {
	max := len(dst)
	if b.hit1 {
		if b.hit1Done || max == 0 {
			return 0, nil
		}
		b.hit1Done = true
		dst[0] = Pair{uint32(b.p.docNum1Hit), 1}
		return 1, nil
	}
	if cap(b.docs) < max {
		b.docs = make([]uint32, max)
	}
	docs := b.docs[:max]
	S, C, chunk, sz, lo, hi := b.S, b.C, b.chunk, b.chunkSz, b.lo, b.hi
	defer func() { b.S, b.C, b.chunk, b.lo, b.hi = S, C, chunk, lo, hi }()
	n := 0
	for n < max {
		k := b.all.NextMany(docs[:max-n])
		if k == 0 {
			break
		}
		w := n
		for _, d := range docs[:k] {
			var freq uint64
			if !b.noFreq {
				if uint64(d) < lo || uint64(d) >= hi {
					if c := int(d / sz); c != chunk {
						if err := b.fn.loadChunk(c); err != nil {
							return w, fmt.Errorf("error loading chunk: %v", err)
						}
						chunk = c
						S, C = b.fn.curChunkBytes, 0
					}
					lo = uint64(chunk) * uint64(sz)
					hi = lo + uint64(sz)
				}
				var fh uint64
				if C < len(S) && S[C] < 0x80 {
					fh = uint64(S[C])
					C++
				} else {
					var ok bool
					if fh, C, ok = uvarint(S, C); !ok {
						return w, fmt.Errorf("error reading frequency: %v", errBulkVarint)
					}
				}
				if freq = fh >> 1; freq != 0 {
					// The norm, read past as Next reads it.
					if C+1 < len(S) && S[C] >= 0x80 && S[C+1] < 0x80 {
						C += 2
					} else if C < len(S) && S[C] < 0x80 {
						C++
					} else {
						var ok bool
						if _, C, ok = uvarint(S, C); !ok {
							return w, fmt.Errorf("error reading norm: %v", errBulkVarint)
						}
					}
				}
			}
			if b.except != nil {
				b.except.AdvanceIfNeeded(d)
				if b.except.HasNext() && b.except.PeekNext() == d {
					continue // deleted
				}
			}
			if freq > math.MaxUint32 {
				return w, ErrPairFreq
			}
			dst[w] = Pair{d, uint32(freq)}
			w++
		}
		n = w
	}
	return n, nil
}

// NormOfBits is Posting.Norm of a posting whose NormUint64 is bits.
func NormOfBits(bits uint64) float64 {
	return float64(float32(1.0 / math.Sqrt(float64(uint32(bits)))))
}

// ChunkSize is the number of document numbers each freq/norm chunk of p
// covers (0 for a 1-hit or empty list); tests use it to check that they
// cover lists of several chunks.
func (p *PostingsList) ChunkSize() uint64 {
	if p.normBits1Hit != 0 || p.postings == nil {
		return 0
	}
	return p.chunkSize
}
