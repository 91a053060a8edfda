//go:build !linux

package search

// storeLock: without /proc, the caller closes the index instead.
func storeLock(string, bool) error { return ErrStoreLock }
