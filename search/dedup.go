package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Near-duplicate detection. Exchanges whose normalised verbatim (lower case,
// whitespace folded) is identical, or whose word 5-gram shingle sets have an
// estimated Jaccard similarity ≥ NearDupJaccard, belong to one group and take
// one slot in a result list: a message repeated every week cannot crowd a
// rare one out of the top k. Groups are assigned when a document is added
// (the group of the earliest-added matching document), stored with the
// document, and therefore identical after a rebuild from the same commits.

const (
	sigLen    = 64 // MinHash functions: ±0.05 on J near 0.9
	bandRows  = 4  // LSH: 16 bands of 4 rows miss a J=0.9 pair with p < 1e-7
	shingleSz = 5
)

// NearDupJaccard is the estimated shingle Jaccard similarity at or above
// which two exchanges are folded together. Groups are fixed when a document
// is added: after changing it, reindex.
var NearDupJaccard = 0.9

// normalize lower-cases and folds runs of whitespace to one space: it is
// normalizeRef in one pass and one allocation instead of three passes
// (ToLower, FieldsFunc, Join), with a fast path for ASCII bytes (below
// 0x80 unicode.IsSpace is \t \n \v \f \r and space, and unicode.ToLower
// maps A-Z alone). Other runes go as strings.ToLower takes them (an
// invalid byte becomes U+FFFD) and FieldsFunc splits the result.
// TestNormalizeIsRef holds it to normalizeRef; it was 0.33 of 11 CPU-s of
// `git mem add` of the coding corpus (docs/BENCHMARKS.md, "Session 13,
// ingest").
//
// Session 19: ASCII bytes that are neither white space nor upper case
// (most of a text) are copied in runs (normPlain), not one WriteByte each:
// normalize was 0.18 of ~8 CPU-s of that add.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false // a space is owed before the next word
	for i := 0; i < len(s); {
		c := s[i]
		if normPlain[c] {
			if space {
				b.WriteByte(' ')
				space = false
			}
			j := i + 1
			for j < len(s) && normPlain[s[j]] {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
				space = b.Len() > 0
				continue
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteByte(c)
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		r = unicode.ToLower(r)
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// normPlain holds the bytes normalize copies as they are: ASCII, neither
// white space (\t \n \v \f \r and space) nor upper case.
var normPlain = func() (t [256]bool) {
	for c := 0; c < utf8.RuneSelf; c++ {
		t[c] = !('A' <= c && c <= 'Z') && !strings.ContainsRune(" \t\n\v\f\r", rune(c))
	}
	return t
}()

// hash64 is FNV-1a, 64 bits (hash/fnv's New64a), computed in place: it runs
// once per shingle, and hash/fnv needs the string copied to a []byte.
func hash64[T string | []byte](s T) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix is splitmix64: a cheap, well-spread permutation for MinHash.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// signature returns the exact hash of the normalised text and its MinHash
// signature over word 5-gram shingles (the whole text when shorter).
func signature(text string) (uint64, [sigLen]uint32) {
	norm := normalize(text)
	exact := hash64(norm)
	// norm is its words joined by single spaces, so a shingle of words is the
	// substring from its first word's start to its last word's end: no join
	// per shingle (it was a quarter of the signature's cost in `git mem add`).
	starts := []int{0}
	for i := 0; i < len(norm); i++ {
		if norm[i] == ' ' {
			starts = append(starts, i+1)
		}
	}
	var sig [sigLen]uint32
	for i := range sig {
		sig[i] = ^uint32(0)
	}
	if len(starts) < shingleSz {
		minHashes(&sig, []uint64{exact})
		return exact, sig
	}
	shingle := func(i int) string {
		end := len(norm)
		if i+shingleSz < len(starts) {
			end = starts[i+shingleSz] - 1
		}
		return norm[starts[i]:end]
	}
	// The shingles' hashes go to minHashes a chunk at a time (on the
	// stack): one call per chunk lets it keep the signature in registers.
	var hs [256]uint64
	n := len(starts) - shingleSz + 1
	for i := 0; i < n; {
		k := 0
		for ; k+4 <= len(hs) && i+4 <= n; i, k = i+4, k+4 {
			hs[k], hs[k+1], hs[k+2], hs[k+3] = hash64x4(shingle(i), shingle(i+1), shingle(i+2), shingle(i+3))
		}
		for ; k < len(hs) && i < n; i, k = i+1, k+1 {
			hs[k] = hash64(shingle(i))
		}
		minHashes(&sig, hs[:k])
	}
	return exact, sig
}

// minHashKey is the key of MinHash function i (0-based): function i of a
// shingle hash h is uint32(mix(h ^ minHashKey(i))).
func minHashKey(i int) uint64 { return uint64(i+1) * 0x9e3779b97f4a7c15 }

// minHashesGo lowers sig to the MinHash values of the shingle hashes hs:
// sig[i] = min(sig[i], uint32(mix(h ^ minHashKey(i)))) for each h. (Four
// hashes side by side with sig[i] read once for the four measured slower:
// the branch is nearly always not taken once sig is low.)
func minHashesGo(sig *[sigLen]uint32, hs []uint64) {
	for _, h := range hs {
		for i := range sig {
			if v := uint32(mix(h ^ minHashKey(i))); v < sig[i] {
				sig[i] = v
			}
		}
	}
}

// hash64x4 is hash64 of four strings, their bytes taken in step: FNV-1a
// is a chain of multiplies, one per byte, each waiting for the last, so
// four chains side by side keep the multiplier busy where one leaves it
// idle most of the time (the shingles' hashes were 0.1 of ~8 CPU-s of
// `git mem add` of the coding corpus; session 19). Same values as hash64
// of each (TestHash64x4).
func hash64x4(a, b, c, d string) (uint64, uint64, uint64, uint64) {
	const prime = 1099511628211
	ha, hb, hc, hd := uint64(14695981039346656037), uint64(14695981039346656037), uint64(14695981039346656037), uint64(14695981039346656037)
	n := min(len(a), len(b), len(c), len(d))
	for k := 0; k < n; k++ {
		ha = (ha ^ uint64(a[k])) * prime
		hb = (hb ^ uint64(b[k])) * prime
		hc = (hc ^ uint64(c[k])) * prime
		hd = (hd ^ uint64(d[k])) * prime
	}
	for k := n; k < len(a); k++ {
		ha = (ha ^ uint64(a[k])) * prime
	}
	for k := n; k < len(b); k++ {
		hb = (hb ^ uint64(b[k])) * prime
	}
	for k := n; k < len(c); k++ {
		hc = (hc ^ uint64(c[k])) * prime
	}
	for k := n; k < len(d); k++ {
		hd = (hd ^ uint64(d[k])) * prime
	}
	return ha, hb, hc, hd
}

// similar reports whether two signatures estimate a Jaccard ≥ NearDupJaccard.
func similar(a, b *[sigLen]uint32) bool {
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) >= NearDupJaccard*sigLen
}

func bandKeys(sig *[sigLen]uint32) [sigLen / bandRows]uint64 {
	var keys [sigLen / bandRows]uint64
	for b := range keys {
		keys[b] = bandKey(sig, b)
	}
	return keys
}

// bandKey is band b's key of sig.
func bandKey(sig *[sigLen]uint32, b int) uint64 {
	h := uint64(b + 1)
	for r := 0; r < bandRows; r++ {
		h = mix(h ^ uint64(sig[b*bandRows+r]))
	}
	return h
}

// keyFilter is a bitmap of a few keys (a batch's), so that most keys of
// the rows it is tested against are passed over without a map lookup: a
// key not in it is surely not among them, one in it is looked up.
type keyFilter [1 << (keyFilterBits - 6)]uint64

const keyFilterBits = 20 // 128 KB: a batch of 1,000 sets 1.6 % of it

func keyBit(k uint64) uint64 { return (k * 0x9e3779b97f4a7c15) >> (64 - keyFilterBits) }

func (f *keyFilter) set(k uint64) { b := keyBit(k); f[b>>6] |= 1 << (b & 63) }

func (f *keyFilter) has(k uint64) bool { b := keyBit(k); return f[b>>6]&(1<<(b&63)) != 0 }

// bandHead is what keyFilter holds of band b of sig: its values and its
// number combined, more cheaply than bandKey mixes them. Two signatures
// with the same band key for b whose band differs collide only by chance,
// and dedupPass needs none of those: a similar row shares whole bands
// (similarBandsSure). (The first value alone passed too many rows of the
// synthetic million, whose signatures share many minima.)
func bandHead(sig *[sigLen]uint32, b int) uint64 {
	var _ [0]struct{} = [bandRows - 4]struct{}{} // four values a band
	v := sig[b*bandRows : b*bandRows+bandRows]
	return (uint64(v[0])|uint64(v[1])<<32)*0xff51afd7ed558ccd ^ (uint64(v[2])|uint64(v[3])<<32)*0xc4ceb9fe1a85ec53 ^ uint64(b)
}

// minhash.bin is append-only (schema 11): a fixed 8-byte header, then one
// row of sigLen little-endian uint32s per document. The file carries no
// count and no checksum of its own: the manifest's Docs is its committed
// row count and SigsCRC the CRC-32C of the file's first
// sigsHeader+Docs×sigRowBytes bytes. A writer that only added rows appends
// them at that length (after cutting off anything past it: the tail of a
// writer killed before its manifest) and extends the checksum over the new
// bytes (crc32.Update), so an add no longer rewrites the whole file (25.6
// MB at 100,000 rows, 256 MB at 1,000,000); a writer that replaced or
// emptied a row writes a new file and renames it over the old one. A
// reader reads exactly the committed length, so bytes past it are never
// read (docs/CONTRACT.md, "The indexer").
const (
	sigsMagic   = "GMSIGS\x00\x01"
	sigsHeader  = len(sigsMagic)
	sigRowBytes = sigLen * 4
)

// sigsLen is minhash.bin's committed length for n rows.
func sigsLen(n int) int64 { return int64(sigsHeader) + int64(n)*sigRowBytes }

// encodeSigs is rows' bytes: their own memory on a little-endian machine.
func encodeSigs(rows [][sigLen]uint32) []byte {
	body := sigBytes(rows)
	if body == nil && len(rows) > 0 { // not little-endian: encode
		body = make([]byte, 0, len(rows)*sigRowBytes)
		for i := range rows {
			for _, v := range rows[i] {
				body = binary.LittleEndian.AppendUint32(body, v)
			}
		}
	}
	return body
}

// writeSigs writes every signature to a new file renamed over path and
// returns the file's checksum.
func writeSigs(path string, sigs [][sigLen]uint32) (uint32, error) {
	body := encodeSigs(sigs)
	crc := crc32.Update(crc32.Checksum([]byte(sigsMagic), crcTable), crcTable, body)
	tmp := path + ".tmp"
	if err := writeParts(tmp, []byte(sigsMagic), body); err != nil {
		return 0, fmt.Errorf("write signatures: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, fmt.Errorf("write signatures: %w", err)
	}
	return crc, nil
}

// appendSigs appends sigs[from:] to path, whose committed rows are
// sigs[:from] with checksum crc, and returns the new checksum.
func appendSigs(path string, sigs [][sigLen]uint32, from int, crc uint32) (uint32, error) {
	body := encodeSigs(sigs[from:])
	if err := appendAt(path, sigsLen(from), body); err != nil {
		return 0, fmt.Errorf("append signatures: %w", err)
	}
	return crc32.Update(crc, crcTable, body), nil
}

// appendAt writes b at offset at of the existing file path, first cutting
// the file to at: bytes past the committed length are a killed writer's
// and nobody reads them. A file shorter than at is refused (it is not the
// file the manifest describes).
func appendAt(path string, at int64, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && st.Size() < at {
		err = fmt.Errorf("%s: %d bytes, %d committed", path, st.Size(), at)
	}
	if err == nil && st.Size() > at {
		err = f.Truncate(at)
	}
	if err == nil {
		_, err = f.WriteAt(b, at)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sigBytes is the signatures' memory seen as the file's bytes (the rows of
// little-endian uint32s, in order) where the machine is little-endian, nil
// elsewhere. Writing and reading minhash.bin through it, instead of a copy
// encoded value by value, spared a writer at 100,000 rows two 25.6 MB
// buffers (their page faults were a tenth of an add's system time).
func sigBytes(sigs [][sigLen]uint32) []byte {
	if !littleEndian || len(sigs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&sigs[0][0])), len(sigs)*sigLen*4)
}

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// readSigs reads the n committed rows of minhash.bin and checks them
// against crc, the manifest's checksum of the committed length; bytes past
// it (a killed writer's tail) are not read.
func readSigs(path string, n int, crc uint32) ([][sigLen]uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < sigsLen(n) {
		return nil, fmt.Errorf("%d bytes for %d signatures", st.Size(), n)
	}
	var head [sigsHeader]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return nil, err
	}
	if string(head[:]) != sigsMagic {
		return nil, errors.New("bad header")
	}
	out := make([][sigLen]uint32, n, withRoom(n))
	body := sigBytes(out)
	if body == nil {
		body = make([]byte, n*sigRowBytes)
	}
	if _, err := io.ReadFull(f, body); err != nil {
		return nil, err
	}
	if crc32.Update(crc32.Checksum(head[:], crcTable), crcTable, body) != crc {
		return nil, errors.New("checksum mismatch")
	}
	if !littleEndian {
		p := 0
		for i := range out {
			for j := range out[i] {
				out[i][j] = binary.LittleEndian.Uint32(body[p:])
				p += 4
			}
		}
	}
	return out, nil
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errNoMap: mapSigs did not map the file (another system, a failed mmap).
var errNoMap = errors.New("signatures not mapped")

// dedupPassFactor bounds the rows dedupPass reads in one process to that
// many times the rows there are; past it the maps are built (a rebuild's
// hundreds of batches reach it while the index is small). Zero: never.
var dedupPassFactor = 4

// batchDedup groups one batch of new ids without the maps over every row:
// the batch's own signatures are put in small maps and every earlier row's
// band keys are looked up in them, once. Building the maps over 100,000
// rows was 1.84 s of the 9 s an add of 1,000 exchanges into them cost;
// BenchmarkDedupScan/pass reads the same rows in a few ms. It finds the
// rows the maps find, for the reason dedupScan does (similarBandsSure).
type batchDedup struct {
	first    int32   // the batch's first row
	oldExact []int32 // per batch document: the earliest live earlier row with its exact key, or -1
	oldSim   []int32 // per batch document: the earliest live earlier row similar to it, or -1
	exact    map[uint64]int32
	bands    map[uint64][]int32 // of the batch's rows grouped so far
}

// dedupPass returns the batch's grouping state, or nil when the maps are
// to be used (ids already known, maps built, or the pass budget spent).
func (ix *Index) dedupPass(docs []Doc, preps []prep) *batchDedup {
	rows := len(ix.seqs)
	if ix.exactIdx != nil || !similarBandsSure() || dedupPassFactor == 0 || ix.passed+rows > dedupPassFactor*rows {
		return nil
	}
	seen := make(map[string]bool, len(docs))
	for i := range docs {
		if _, known := ix.rowOfID(docs[i].ID); known || seen[docs[i].ID] {
			return nil // rows are then not the batch's in order
		}
		seen[docs[i].ID] = true
	}
	ix.passed += rows
	p := &batchDedup{first: int32(rows), oldExact: make([]int32, len(docs)), oldSim: make([]int32, len(docs)),
		exact: make(map[uint64]int32, len(docs)), bands: make(map[uint64][]int32, len(docs)*sigLen/bandRows)}
	newExact := make(map[uint64][]int32, len(docs))
	newBands := make(map[uint64][]int32, len(docs)*sigLen/bandRows)
	// The batch's exact keys and band heads in bitmaps: a row's keys are
	// worked out and looked up only where a bitmap has them. Every row's 16
	// band keys and 17 map lookups were 0.46 s of an add of 1,000 into
	// 1,000,000; the rows found are the same (keyFilter, bandHead).
	exactF, headF := new(keyFilter), new(keyFilter)
	for j := range preps {
		p.oldExact[j], p.oldSim[j] = -1, -1
		newExact[preps[j].exact] = append(newExact[preps[j].exact], int32(j))
		exactF.set(preps[j].exact)
		for b, k := range bandKeys(&preps[j].sig) {
			newBands[k] = append(newBands[k], int32(j))
			headF.set(bandHead(&preps[j].sig, b))
		}
	}
	for r := range int32(rows) {
		if ix.rowDead(r) {
			continue
		}
		if e := ix.exactOf(r); exactF.has(e) {
			for _, j := range newExact[e] {
				if p.oldExact[j] < 0 {
					p.oldExact[j] = int32(r)
				}
			}
		}
		sig := &ix.sigs[r]
		for b := range sigLen / bandRows {
			if !headF.has(bandHead(sig, b)) {
				continue
			}
			for _, j := range newBands[bandKey(sig, b)] {
				if p.oldSim[j] < 0 && similar(sig, &preps[j].sig) {
					p.oldSim[j] = int32(r)
				}
			}
		}
	}
	return p
}

// groupOf is assignGroup for a row of the batch: an exact copy first (an
// earlier row's before one in the batch), else the earliest similar row.
func (p *batchDedup) groupOf(ix *Index, row int32, rec *docRec) int32 {
	j := row - p.first
	best := p.oldExact[j]
	if best < 0 {
		if r, ok := p.exact[rec.Exact]; ok {
			best = r
		}
	}
	keys := bandKeys(&ix.sigs[row])
	if best < 0 {
		best = p.oldSim[j]
	}
	if best < 0 {
		for _, k := range keys {
			for _, r := range p.bands[k] {
				if (best < 0 || r < best) && similar(&ix.sigs[r], &ix.sigs[row]) {
					best = r
				}
			}
		}
	}
	if _, ok := p.exact[rec.Exact]; !ok {
		p.exact[rec.Exact] = row
	}
	for _, k := range keys {
		p.bands[k] = append(p.bands[k], row)
	}
	if best < 0 {
		return row
	}
	return ix.groups[best]
}

// bandIndex lists the rows under each LSH band key, for the writer's
// grouping. It was a map[uint64][]int32: 96 MB of a 100,000-exchange
// reindex's 382 MB heap (1.6 million one-row lists). Here a key is cut to 32
// bits, which only adds candidates that similar then refuses, and a key's
// rows are a chain through two flat arrays.
type bandIndex struct {
	head      map[uint32]int32 // key → its newest entry
	row, next []int32          // per entry: the row, the key's entry before it (-1: none)
}

func newBandIndex(n int) *bandIndex {
	return &bandIndex{head: make(map[uint32]int32, n), row: make([]int32, 0, n), next: make([]int32, 0, n)}
}

func (b *bandIndex) add(k uint64, row int32) {
	h, ok := b.head[uint32(k)]
	if !ok {
		h = -1
	}
	b.head[uint32(k)] = int32(len(b.row))
	b.row, b.next = append(b.row, row), append(b.next, h)
}

// each calls f for every row under k, newest first.
func (b *bandIndex) each(k uint64, f func(row int32)) {
	e, ok := b.head[uint32(k)]
	for ok && e >= 0 {
		f(b.row[e])
		e = b.next[e]
	}
}

// remove takes row out of k's chain (its entry is left unused).
func (b *bandIndex) remove(k uint64, row int32) {
	prev := int32(-1)
	e, ok := b.head[uint32(k)]
	for ok && e >= 0 {
		if b.row[e] == row {
			switch {
			case prev >= 0:
				b.next[prev] = b.next[e]
			case b.next[e] >= 0:
				b.head[uint32(k)] = b.next[e]
			default:
				delete(b.head, uint32(k))
			}
			return
		}
		prev, e = e, b.next[e]
	}
}

// lists is every key's rows in row order (for tests: two indexes compare).
func (b *bandIndex) lists() map[uint32][]int32 {
	out := make(map[uint32][]int32, len(b.head))
	for k := range b.head {
		var rows []int32
		b.each(uint64(k), func(r int32) { rows = append(rows, r) })
		slices.Reverse(rows)
		out[k] = rows
	}
	return out
}
