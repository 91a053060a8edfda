//go:build !amd64

package search

// prefetchRows does nothing where there is no prefetch code for it.
func prefetchRows(rows *int32, n, stride int, pf *prefetchSet) {}
