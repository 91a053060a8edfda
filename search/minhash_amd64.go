package search

import "golang.org/x/sys/cpu"

// MinHash in AVX-512. The 64 functions of a shingle are 64 splitmix64
// mixes (two 64-bit multiplies each): ~0.4 CPU-s of `git mem add` of the
// coding corpus in scalar code (3.2 million shingles), bound by the
// multiplier. AVX-512DQ multiplies eight 64-bit lanes at once (VPMULLQ),
// so the 64 functions are eight vectors. No library does this mix (Go has
// no vector types without GOEXPERIMENT=simd), hence our own assembly; it
// gives exactly minHashesGo's values (TestMinHashesMatchGo).

// hasMinHashAVX512: the CPU and the OS support the instructions used.
var hasMinHashAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL

// minHashConsts is what minHashAVX512 reads besides its arguments: the
// functions' keys, then splitmix64's increment and multipliers.
type minHashConsts struct {
	keys          [sigLen]uint64
	gamma, m1, m2 uint64
}

var minHashC = func() (c minHashConsts) {
	for i := range c.keys {
		c.keys[i] = minHashKey(i)
	}
	c.gamma, c.m1, c.m2 = 0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9, 0x94d049bb133111eb
	return c
}()

// minHashAVX512 is minHashesGo(sig, hs[:n]); n > 0.
//
//go:noescape
func minHashAVX512(sig *[sigLen]uint32, hs *uint64, n int, c *minHashConsts)

// minHashes is minHashesGo, in AVX-512 where the CPU has it.
func minHashes(sig *[sigLen]uint32, hs []uint64) {
	if hasMinHashAVX512 && len(hs) > 0 {
		minHashAVX512(sig, &hs[0], len(hs), &minHashC)
		return
	}
	minHashesGo(sig, hs)
}
