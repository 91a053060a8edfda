//go:build !linux

package gitstore

// lowerThreadPriority is a no-op where threads have no priority of their
// own to set.
func lowerThreadPriority() {}
