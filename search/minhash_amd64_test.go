package search

import "testing"

// TestMinHashAVX512Used says which code TestMinHashesMatchGo and
// TestSignatureMatchesReference checked.
func TestMinHashAVX512Used(t *testing.T) {
	if !hasMinHashAVX512 {
		t.Skip("no AVX-512 here: minHashes is minHashesGo")
	}
	t.Log("minHashes runs the AVX-512 code")
}

// TestSignatureWithoutAVX512 runs TestSignatureMatchesReference with the
// vector code off, as on a CPU without AVX-512.
func TestSignatureWithoutAVX512(t *testing.T) {
	defer func(v bool) { hasMinHashAVX512 = v }(hasMinHashAVX512)
	hasMinHashAVX512 = false
	TestSignatureMatchesReference(t)
}
