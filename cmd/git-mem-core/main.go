// Command git-mem-core is the whole git mem CLI. git runs the small front
// binary, git-mem (cmd/git-mem), which answers `version` and the Claude
// Code hook itself and hands every other command to this one; run directly,
// it does everything. The commands only parse flags and print; the logic
// lives in the packages below.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

func main() {
	os.Exit(profiled(func() int { return Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr) }))
}

// heapPeaks writes the heap profile to $GIT_MEM_HEAPPROFILE whenever the
// heap in use is the largest seen so far (checked every 2 s): what a
// reindex's peak memory holds, which a profile at exit does not show.
func heapPeaks() {
	p := os.Getenv("GIT_MEM_HEAPPROFILE")
	if p == "" {
		return
	}
	go func() {
		var peak uint64
		for range time.Tick(2 * time.Second) {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc <= peak {
				continue
			}
			peak = ms.HeapAlloc
			if out, err := os.Create(p); err == nil {
				_ = pprof.Lookup("heap").WriteTo(out, 0)
				out.Close()
			}
		}
	}()
}

// profiled runs f under a CPU profile written to $GIT_MEM_CPUPROFILE when
// it is set: how the figures in docs/BENCHMARKS.md were taken apart.
func profiled(f func() int) int {
	heapPeaks()
	defer traced()()
	p := os.Getenv("GIT_MEM_CPUPROFILE")
	if p == "" {
		return f()
	}
	out, err := os.Create(p)
	if err != nil {
		os.Stderr.WriteString("git mem: GIT_MEM_CPUPROFILE: " + err.Error() + "\n")
		return f()
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		os.Stderr.WriteString("git mem: GIT_MEM_CPUPROFILE: " + err.Error() + "\n")
		return f()
	}
	defer pprof.StopCPUProfile()
	return f()
}

// traced writes an execution trace (runtime/trace) to $GIT_MEM_TRACE when
// it is set, until the returned func is called: where the cores of an add
// idle (`go tool trace FILE`).
func traced() (stop func()) {
	p := os.Getenv("GIT_MEM_TRACE")
	if p == "" {
		return func() {}
	}
	out, err := os.Create(p)
	if err != nil {
		os.Stderr.WriteString("git mem: GIT_MEM_TRACE: " + err.Error() + "\n")
		return func() {}
	}
	if err := trace.Start(out); err != nil {
		os.Stderr.WriteString("git mem: GIT_MEM_TRACE: " + err.Error() + "\n")
		out.Close()
		return func() {}
	}
	return func() {
		trace.Stop()
		out.Close()
	}
}
