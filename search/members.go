package search

import "sync"

// The members of a hit's dedup group (Hit.Collapsed) are found by a walk
// over every row (hits): at 1,000,000 exchanges ~0.7 ms of a warm
// search's wall on both cores, each search, though only the rows of groups
// with two members or more can be members of another row's group. An
// index kept by a long-lived reader (KeepPostings: the warm search
// process) lists those rows once, on its first search that needs them, and
// its later searches walk only them (docs/BENCHMARKS.md, session 30). The
// list is row numbers, no text, and goes with the Index.

// groupRows is the kept list: the rows of the groups with two members or
// more, in row order; ok is false when some row's group is not a row
// number (then hits walks every row).
type groupRows struct {
	once sync.Once
	rows []int32
	ok   bool
}

// multiRows returns the kept list when ix keeps one (a long-lived
// reader's index) and it could be made; ok false: walk every row.
func (ix *Index) multiRows() ([]int32, bool) {
	g := ix.grows.Load()
	if g == nil {
		return nil, false
	}
	g.once.Do(func() { g.rows, g.ok = rowsInSharedGroups(ix.groups) })
	return g.rows, g.ok
}

// rowsInSharedGroups returns the rows whose group holds another row too,
// in row order; false when a group is not a row number (0 ≤ g < n), the
// form assignGroup gives (a group is named by its earliest member).
func rowsInSharedGroups(groups []int32) ([]int32, bool) {
	n := len(groups)
	once := make([]uint64, (n+63)/64)
	twice := make([]uint64, (n+63)/64)
	shared := 0
	for _, g := range groups {
		if g < 0 || int(g) >= n {
			return nil, false
		}
		w, bit := g/64, uint64(1)<<(g%64)
		if once[w]&bit != 0 {
			if twice[w]&bit == 0 {
				twice[w] |= bit
				shared++
			}
		} else {
			once[w] |= bit
		}
	}
	if shared == 0 {
		return []int32{}, true
	}
	var rows []int32
	for row, g := range groups {
		if twice[g/64]&(uint64(1)<<(g%64)) != 0 {
			rows = append(rows, int32(row))
		}
	}
	return rows, true
}

// testWalkAllRows makes hits walk every row even when the index keeps
// the rows of shared groups (tests compare).
var testWalkAllRows = false
