package search

// prefetchRows asks the CPU to bring into its caches the element of each
// of n rows (int32s at rows, stride bytes apart) in each of pf's arrays
// (prefetch_amd64.s). It reads the rows and nothing else, and writes
// nothing: no result depends on it.
//
//go:noescape
func prefetchRows(rows *int32, n, stride int, pf *prefetchSet)
