package gitstore

import "syscall"

// lowerThreadPriority sets the calling thread's nice value to 19 (Linux
// gives each thread its own; the caller has locked its goroutine to it). A
// failure leaves the priority as it was.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}
