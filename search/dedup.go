package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"unicode"
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

// normalize lower-cases and folds runs of whitespace to one space.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), unicode.IsSpace), " ")
}

// hash64 is FNV-1a, 64 bits (hash/fnv's New64a), computed in place: it runs
// once per shingle, and hash/fnv needs the string copied to a []byte.
func hash64(s string) uint64 {
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
	addShingle := func(h uint64) {
		for i := range sig {
			v := uint32(mix(h ^ (uint64(i+1) * 0x9e3779b97f4a7c15)))
			if v < sig[i] {
				sig[i] = v
			}
		}
	}
	if len(starts) < shingleSz {
		addShingle(exact)
		return exact, sig
	}
	for i := 0; i+shingleSz <= len(starts); i++ {
		end := len(norm)
		if i+shingleSz < len(starts) {
			end = starts[i+shingleSz] - 1
		}
		addShingle(hash64(norm[starts[i]:end]))
	}
	return exact, sig
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
		h := uint64(b + 1)
		for r := 0; r < bandRows; r++ {
			h = mix(h ^ uint64(sig[b*bandRows+r]))
		}
		keys[b] = h
	}
	return keys
}

// writeSigs stores the signatures as raw little-endian uint32s after a
// CRC-32C, atomically.
func writeSigs(path string, sigs [][sigLen]uint32) error {
	b := make([]byte, 4, 4+len(sigs)*sigLen*4)
	for i := range sigs {
		for _, v := range sigs[i] {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
	}
	binary.LittleEndian.PutUint32(b, crc32.Checksum(b[4:], crcTable))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write signatures: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write signatures: %w", err)
	}
	return nil
}

func readSigs(path string, n int) ([][sigLen]uint32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 4+n*sigLen*4 {
		return nil, fmt.Errorf("%d bytes for %d signatures", len(b), n)
	}
	if crc32.Checksum(b[4:], crcTable) != binary.LittleEndian.Uint32(b) {
		return nil, errors.New("checksum mismatch")
	}
	out := make([][sigLen]uint32, n)
	p := 4
	for i := range out {
		for j := range out[i] {
			out[i][j] = binary.LittleEndian.Uint32(b[p:])
			p += 4
		}
	}
	return out, nil
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)
