package search

import "testing"

// TestMinHashAVX512Used says which code TestMinHashesMatchGo checked.
func TestMinHashAVX512Used(t *testing.T) {
	if !hasMinHashAVX512 {
		t.Skip("no AVX-512 here: minHashes is minHashesGo")
	}
	t.Log("minHashes runs the AVX-512 code")
}
