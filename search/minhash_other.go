//go:build !amd64

package search

// minHashes is minHashesGo where there is no vector code for it.
func minHashes(sig *[sigLen]uint32, hs []uint64) { minHashesGo(sig, hs) }
