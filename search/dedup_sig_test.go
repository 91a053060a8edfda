package search

import (
	"hash/fnv"
	"math/rand"
	"strings"
	"testing"
)

// signatureRef is signature as first written (a join and a hash/fnv hash per
// shingle): the faster one must give the same hashes, or every stored
// signature would change meaning.
func signatureRef(text string) (uint64, [sigLen]uint32) {
	h64 := func(s string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s))
		return h.Sum64()
	}
	norm := normalize(text)
	exact := h64(norm)
	words := strings.Split(norm, " ")
	var sig [sigLen]uint32
	for i := range sig {
		sig[i] = ^uint32(0)
	}
	add := func(h uint64) {
		for i := range sig {
			if v := uint32(mix(h ^ (uint64(i+1) * 0x9e3779b97f4a7c15))); v < sig[i] {
				sig[i] = v
			}
		}
	}
	if len(words) < shingleSz {
		add(exact)
		return exact, sig
	}
	for i := 0; i+shingleSz <= len(words); i++ {
		add(h64(strings.Join(words[i:i+shingleSz], " ")))
	}
	return exact, sig
}

func TestSignatureMatchesReference(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	pieces := []string{"auth", "Middleware", "  ", "\n", "\t", "TypeError:", "é", "日本", "x", "", " ", "sessionTTL", "ÄÖ"}
	texts := []string{"", " ", "one", "one two three four", "one two three four five", "a b c d e f", "  lead  and\ttrail  "}
	for range 300 {
		var b strings.Builder
		for k := r.Intn(40); k > 0; k-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
			if r.Intn(2) == 0 {
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		ge, gs := signature(s)
		we, ws := signatureRef(s)
		if ge != we || gs != ws {
			t.Fatalf("signature(%q) differs from the reference", s)
		}
	}
}

func BenchmarkSignature(b *testing.B) {
	text := strings.Repeat("Please fix the auth middleware: TypeError: Cannot read properties of undefined (reading 'sessionTTL') ", 40)
	for _, f := range []struct {
		name string
		sig  func(string) (uint64, [sigLen]uint32)
	}{{"now", signature}, {"reference", signatureRef}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				f.sig(text)
			}
		})
	}
}

// TestHash64x4 holds hash64x4 to hash64 of each of its strings, for every
// mix of lengths 0–9 (which string is shortest, ties, empty ones) and
// random bytes.
func TestHash64x4(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	str := func(n int) string {
		b := make([]byte, n)
		r.Read(b)
		return string(b)
	}
	for la := 0; la < 10; la++ {
		for lb := 0; lb < 10; lb++ {
			for lc := 0; lc < 10; lc += 3 {
				for ld := 0; ld < 10; ld += 4 {
					a, b, c, d := str(la), str(lb), str(lc), str(ld)
					ha, hb, hc, hd := hash64x4(a, b, c, d)
					if ha != hash64(a) || hb != hash64(b) || hc != hash64(c) || hd != hash64(d) {
						t.Fatalf("hash64x4(%q, %q, %q, %q) differs from hash64 of each", a, b, c, d)
					}
				}
			}
		}
	}
}

// minHashesRef is the MinHash update as signature first wrote it: each
// hash in turn, each function in turn.
func minHashesRef(sig *[sigLen]uint32, hs []uint64) {
	for _, h := range hs {
		for i := range sig {
			if v := uint32(mix(h ^ (uint64(i+1) * 0x9e3779b97f4a7c15))); v < sig[i] {
				sig[i] = v
			}
		}
	}
}

// TestMinHashesMatchGo holds minHashes (vector code where the CPU has it)
// and minHashesGo to the reference, on random hashes of every count 1–70
// and some longer runs, from the all-ones signature and from random ones.
func TestMinHashesMatchGo(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	counts := []int{300, 1000}
	for n := 1; n <= 70; n++ {
		counts = append(counts, n)
	}
	for _, n := range counts {
		hs := make([]uint64, n)
		for i := range hs {
			hs[i] = r.Uint64()
			if r.Intn(8) == 0 {
				hs[i] = uint64(r.Intn(4)) // small and repeated values
			}
		}
		var start [sigLen]uint32
		for i := range start {
			start[i] = ^uint32(0)
			if n%2 == 0 {
				start[i] = r.Uint32() >> uint(r.Intn(32))
			}
		}
		want := start
		minHashesRef(&want, hs)
		for _, f := range []struct {
			name string
			fn   func(*[sigLen]uint32, []uint64)
		}{{"minHashes", minHashes}, {"minHashesGo", minHashesGo}} {
			got := start
			f.fn(&got, hs)
			if got != want {
				t.Fatalf("%s of %d hashes differs from the reference", f.name, n)
			}
		}
	}
}

func BenchmarkMinHashes(b *testing.B) {
	hs := make([]uint64, 256)
	r := rand.New(rand.NewSource(1))
	for i := range hs {
		hs[i] = r.Uint64()
	}
	for _, f := range []struct {
		name string
		fn   func(*[sigLen]uint32, []uint64)
	}{{"now", minHashes}, {"go", minHashesGo}, {"reference", minHashesRef}} {
		b.Run(f.name, func(b *testing.B) {
			var sig [sigLen]uint32
			for b.Loop() {
				f.fn(&sig, hs)
			}
		})
	}
}
