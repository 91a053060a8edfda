package gitstore

import (
	"runtime"
	"syscall"
	"testing"
)

// TestLowerThreadPriority: the warm-up's thread runs at nice 19 and the
// other threads keep theirs.
func TestLowerThreadPriority(t *testing.T) {
	before, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		lowerThreadPriority()
		p, _ := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
		got <- p
	}()
	// The raw getpriority is 20 − nice: 1 is nice 19.
	if p := <-got; p != 1 {
		t.Fatalf("the thread's priority is %d (20 − nice), want 1", p)
	}
	if after, _ := syscall.Getpriority(syscall.PRIO_PROCESS, 0); after != before {
		t.Fatalf("the process's priority moved from %d to %d", before, after)
	}
}
