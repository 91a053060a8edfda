package redact

import (
	"encoding/binary"
	"strings"
	"unsafe"
)

// pairSet is a set of byte pairs: a bit for each of the 65,536, 8 KiB in
// all, so that asking for the pair at every position of a text costs a
// load and a test. The literal searches below skip every position whose
// first two bytes begin none of their literals, which in a transcript is
// most of them: the tests of which literals occur in a string went one
// byte at a time through a table of first bytes (prefilter.scan,
// mayGeneric) or through the Aho-Corasick trie of gitleaks' keywords
// (restFor), ~5 ns a byte each, and every letter but a few begins some
// literal (docs/BENCHMARKS.md, "Session 20, ingest: redaction").
type pairSet [1 << 16 / 64]uint64

func (p *pairSet) add(a, b byte) {
	k := uint(a)<<8 | uint(b)
	p[k>>6] |= 1 << (k & 63)
}

func (p *pairSet) has(a, b byte) bool {
	k := uint(a)<<8 | uint(b)
	return p[k>>6]&(1<<(k&63)) != 0
}

// byFirstByte lists words (each at least two bytes long) by their first
// byte, in the order given, with the set of their first two bytes.
func byFirstByte(words []string) (at [256][]string, pairs pairSet) {
	for _, w := range words {
		at[w[0]] = append(at[w[0]], w)
		pairs.add(w[0], w[1])
	}
	return at, pairs
}

// litSet finds which of a set of literals occur in a string, in one pass:
// the same answer as strings.Contains for each literal. A literal occurs at
// i only if its first two bytes are s[i:i+2] (its pair is in pairs; when
// hashed, at positions with four bytes left, the hashes below say so
// too) or it is one byte long (those are looked for with
// strings.IndexByte); at a position that passes, every literal with that
// pair is compared. The empty literal occurs in every string, as
// strings.Contains says.
type litSet struct {
	lits  []string
	pairs pairSet
	// next holds bytes 1-2 of the literals of three bytes or more, short
	// the pairs that begin a two-byte literal: at a position whose pair
	// begins no two-byte literal, the next pair must be in next.
	next, short pairSet
	slot        *[1 << 16]uint16 // pair -> 1 + index into byPair (0: none)
	byPair      [][]int          // indices into lits of the literals beginning with a pair
	ones        []int            // one-byte literals
	empty       []int            // empty literals
	// At a position with four bytes or more left, a literal of four
	// bytes or more begins there only if the hash of its first four
	// bytes is in quads, one of three only if the hash of its three is
	// in tris, one of two only if its pair is in twos (session 27): one
	// load of the four bytes and three tests that nearly always fail,
	// where pairs alone passed a fifth of a transcript's positions for
	// gitleaks' keywords and next half of those, each a branch the CPU
	// could not predict.
	quads, tris hashSet
	twos        pairSet
	// hashed: each tests the hashes; else the pairs alone (pairs, then
	// short or next), which is faster where few positions pass them: on
	// the coding corpus's turn texts, gitleaks' 233 keywords (restWords)
	// ~165 ms a pass by pairs, ~100 hashed; our rules' literals
	// (rulePrefilter) ~55 by pairs, ~85 hashed (session 27).
	hashed bool
}

// hashSet is a set of 16-bit hashes (quadHash, triHash): 8 KiB.
type hashSet [1 << 16 / 64]uint64

func (h *hashSet) add(k uint32) { h[k>>6] |= 1 << (k & 63) }

func (h *hashSet) has(k uint32) bool { return h[k>>6]&(1<<(k&63)) != 0 }

// quadHash is the hash of the four bytes in x (little-endian: x's low
// byte is the first), triHash of its first three.
func quadHash(x uint32) uint32 { return (x * 0x9e3779b1) >> 16 }
func triHash(x uint32) uint32  { return ((x & 0xffffff) * 0x85ebca77) >> 16 }

// load4 is the four bytes of s from i, the first in the low byte.
func load4(s string, i int) uint32 {
	return binary.LittleEndian.Uint32(unsafe.Slice(unsafe.StringData(s[i:]), 4))
}

func newLitSet(lits []string, hashed bool) *litSet {
	ls := &litSet{lits: lits, slot: new([1 << 16]uint16), hashed: hashed}
	for k, l := range lits {
		switch len(l) {
		case 0:
			ls.empty = append(ls.empty, k)
		case 1:
			ls.ones = append(ls.ones, k)
		default:
			key := uint16(l[0])<<8 | uint16(l[1])
			if ls.slot[key] == 0 {
				ls.byPair = append(ls.byPair, nil)
				ls.slot[key] = uint16(len(ls.byPair))
				ls.pairs.add(l[0], l[1])
			}
			if len(l) == 2 {
				ls.short.add(l[0], l[1])
				ls.twos.add(l[0], l[1])
			} else {
				ls.next.add(l[1], l[2])
			}
			switch {
			case len(l) >= 4:
				ls.quads.add(quadHash(load4(l, 0)))
			case len(l) == 3:
				ls.tris.add(triHash(uint32(l[0]) | uint32(l[1])<<8 | uint32(l[2])<<16))
			}
			j := ls.slot[key] - 1
			ls.byPair[j] = append(ls.byPair[j], k)
		}
	}
	return ls
}

// each calls fn(k) for every literal lits[k] that occurs in s, once each,
// until fn returns false; found is scratch of len(lits), all false, and is
// left marking the literals found. Literals are reported by the position
// of their first occurrence, then in the order of lits.
func (ls *litSet) each(s string, found []bool, fn func(k int) bool) {
	for _, k := range ls.empty {
		found[k] = true
		if !fn(k) {
			return
		}
	}
	for _, k := range ls.ones {
		if strings.IndexByte(s, ls.lits[k][0]) >= 0 {
			found[k] = true
			if !fn(k) {
				return
			}
		}
	}
	i := 0
	for ; ls.hashed && i+4 <= len(s); i++ {
		x := load4(s, i)
		if !ls.quads.has(quadHash(x)) && !ls.tris.has(triHash(x)) && !ls.twos.has(s[i], s[i+1]) {
			continue
		}
		if !ls.at(s, i, found, fn) {
			return
		}
	}
	for ; i+1 < len(s); i++ {
		if !ls.pairs.has(s[i], s[i+1]) ||
			!ls.short.has(s[i], s[i+1]) && (i+2 == len(s) || !ls.next.has(s[i+1], s[i+2])) {
			continue
		}
		if !ls.at(s, i, found, fn) {
			return
		}
	}
}

// at compares the literals beginning with s[i:i+2] at i (each's step at a
// position that passed its tests), reporting false when fn did.
func (ls *litSet) at(s string, i int, found []bool, fn func(k int) bool) bool {
	j := ls.slot[uint16(s[i])<<8|uint16(s[i+1])]
	if j == 0 {
		return true // a hash's other bytes: no literal begins with this pair
	}
	for _, k := range ls.byPair[j-1] {
		l := ls.lits[k]
		if found[k] || len(l) > len(s)-i || s[i:i+len(l)] != l {
			continue
		}
		found[k] = true
		if !fn(k) {
			return false
		}
	}
	return true
}
