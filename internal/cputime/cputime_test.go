//go:build unix

package cputime

import "testing"

// Self grows while the process computes.
func TestSelfGrows(t *testing.T) {
	a := Self()
	x := 0
	for b := Self(); b-a < 20e6; b = Self() { // 20 ms of CPU
		for i := range 1 << 16 {
			x += i
		}
	}
	if x == 0 || Self() <= a {
		t.Fatalf("CPU time did not grow: %v → %v", a, Self())
	}
}
