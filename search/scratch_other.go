//go:build !linux

package search

import "unsafe"

// newScratch returns nil off Linux: the arrays come from the heap.
func newScratch(size int) *scratch { return nil }

// populateWrite does nothing off Linux (no scratch mapping).
func populateWrite(p unsafe.Pointer, size uintptr) {}
