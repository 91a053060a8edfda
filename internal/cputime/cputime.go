//go:build unix

// Package cputime is this process's CPU time, which the benchmarks report
// beside the wall clock: on a shared, loaded machine the wall clock
// measures the neighbours (docs/BENCHMARKS.md).
package cputime

import (
	"syscall"
	"time"
)

// Self is the user+system time this process has used so far (0 if the
// kernel does not say).
func Self() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
