//go:build !linux

package search

// newScratch returns nil off Linux: the arrays come from the heap.
func newScratch(size int) *scratch { return nil }

// newPlainScratch returns nil off Linux: the heap.
func newPlainScratch(size int) *scratch { return nil }
