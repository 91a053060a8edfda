package search

import (
	"math/rand"
	"testing"
)

// TestMinHashAVX512Used says which code TestMinHashesMatchGo and
// TestSignatureMatchesReference checked.
func TestMinHashAVX512Used(t *testing.T) {
	switch {
	case hasMinHashAVX512:
		t.Log("minHashes runs the AVX-512 code")
	case hasMinHashAVX2:
		t.Log("minHashes runs the AVX2 code")
	default:
		t.Skip("no AVX-512 or AVX2 here: minHashes is minHashesGo")
	}
}

// TestSignatureWithoutAVX512 runs TestSignatureMatchesReference with the
// AVX-512 code off (the AVX2 code, where the CPU has it) and with both
// off, as on CPUs without them.
func TestSignatureWithoutAVX512(t *testing.T) {
	defer func(v, w bool) { hasMinHashAVX512, hasMinHashAVX2 = v, w }(hasMinHashAVX512, hasMinHashAVX2)
	hasMinHashAVX512 = false
	t.Run("avx2", TestSignatureMatchesReference)
	hasMinHashAVX2 = false
	t.Run("go", TestSignatureMatchesReference)
}

// TestMinHashAVX2MatchesGo holds minHashAVX2 to the reference whatever
// minHashes picks on this CPU: random hashes of every count 1–70 (odd and
// even, for its two-hash steps) and longer runs, with values whose 32-bit
// halves carry into each other's products (all ones, 2^32−1, 2^32).
func TestMinHashAVX2MatchesGo(t *testing.T) {
	if !hasMinHashAVX2 {
		t.Skip("no AVX2 here")
	}
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	edge := []uint64{0, 1, ^uint64(0), 1<<32 - 1, 1 << 32, 1 << 63, 0x9e3779b97f4a7c15}
	counts := []int{255, 256, 257, 1000}
	for n := 1; n <= 70; n++ {
		counts = append(counts, n)
	}
	for _, n := range counts {
		hs := make([]uint64, n)
		for i := range hs {
			hs[i] = r.Uint64()
			switch r.Intn(8) {
			case 0:
				hs[i] = edge[r.Intn(len(edge))]
			case 1:
				hs[i] ^= minHashKey(r.Intn(sigLen)) // x = 0 before the add
			}
		}
		var start [sigLen]uint32
		for i := range start {
			start[i] = ^uint32(0)
			if n%3 == 0 {
				start[i] = r.Uint32() >> uint(r.Intn(32))
			}
		}
		want := start
		minHashesRef(&want, hs)
		got := start
		minHashAVX2(&got, &hs[0], len(hs), &minHashC)
		if got != want {
			t.Fatalf("minHashAVX2 of %d hashes differs from the reference", n)
		}
	}
}
