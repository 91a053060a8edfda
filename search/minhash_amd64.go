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

// hasMinHashAVX2: the same for minHashAVX2, the code for CPUs without
// AVX-512 (AMD before Zen 4, Intel client cores).
var hasMinHashAVX2 = cpu.X86.HasAVX2

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

// minHashAVX2 is minHashesGo(sig, hs[:n]) in AVX2, four functions to a
// vector. AVX2 has no 64-bit multiply, so each is three 32-bit ones
// (VPMULUDQ); still ~3x the scalar loop on an AMD EPYC without AVX-512
// (BenchmarkMinHashes), where the scalar MinHash was ~0.3 CPU-s of the
// coding add (docs/BENCHMARKS.md, session 22).
//
//go:noescape
func minHashAVX2(sig *[sigLen]uint32, hs *uint64, n int, c *minHashConsts)

// minHashes is minHashesGo, in AVX-512 or AVX2 where the CPU has it.
func minHashes(sig *[sigLen]uint32, hs []uint64) {
	switch {
	case len(hs) == 0:
	case hasMinHashAVX512:
		minHashAVX512(sig, &hs[0], len(hs), &minHashC)
		return
	case hasMinHashAVX2:
		minHashAVX2(sig, &hs[0], len(hs), &minHashC)
		return
	}
	minHashesGo(sig, hs)
}
