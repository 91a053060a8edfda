package search

import "sync"

// The serial tail of a session-bm25 search: what one goroutine did after
// the scoring workers while the other core idled. At 1,000,000 exchanges,
// for the 4-word query's 998,387 rows, merging the second worker's sums
// took ~10 ms of wall, building the candidates ~6, the top selection ~3.5
// and the walk for the collapsed members ~3 (docs/BENCHMARKS.md, session
// 24). Each splits its list in two halves, the second on a goroutine of
// its own, and puts the halves' output back in order: the same rows, the
// same sums (each one addition, as before) and the same order, whatever
// the scheduling.

// tailSplitMin is the shortest list split in two. Below it the halves
// save less than a millisecond (100,000 exchanges: the merge is ~1 ms)
// and, on a loaded machine, the second goroutine's thread may wait for a
// core longer than that (one 100k cold pair under load 6–7 with 1<<15:
// +7 ms p50 wall; docs/BENCHMARKS.md, session 24).
const tailSplitMin = 1 << 17

// inHalves runs f over [0, m) and [m, n), m = n/2, the second half on its
// own goroutine, and waits for both; when n is short, f(0, 0, n) alone.
// half says which one f is running ([0, m) is half 0).
func inHalves(n int, f func(half, lo, hi int)) {
	if n < tailSplitMin {
		f(0, 0, n)
		return
	}
	m := n / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f(1, m, n)
	}()
	f(0, 0, m)
	wg.Wait()
}

// mergeSums adds the sums of another worker (xs over its rows xt, each
// row once) into scores and appends the rows it newly touches to touched,
// in xt's order. xt is left holding scratch (its new rows, compacted in
// place): the caller no longer reads it.
func mergeSums(scores []float64, seen []bool, touched []int32, xs []float64, xt []int32) []int32 {
	if len(xt) < tailSplitMin {
		for _, row := range xt {
			if !seen[row] {
				seen[row] = true
				touched = append(touched, row)
			}
			scores[row] += xs[row]
		}
		return touched
	}
	// Each half writes its new rows over the part of xt it has read
	// (never ahead of it); the rows of xt are distinct, so the halves
	// write distinct elements of scores and seen.
	var kept [2]int
	inHalves(len(xt), func(half, lo, hi int) {
		k := lo
		for _, row := range xt[lo:hi] {
			if !seen[row] {
				seen[row] = true
				xt[k] = row
				k++
			}
			scores[row] += xs[row]
		}
		kept[half] = k - lo
	})
	m := len(xt) / 2
	touched = append(touched, xt[:kept[0]]...)
	return append(touched, xt[m:m+kept[1]]...)
}

// candidates appends to cs (empty, with room for len(touched)) a
// candidate for each row of touched that allowed lets through (nil: all),
// in touched's order.
func candidates(cs []cand, touched []int32, scores []float64, allowed func(int32) bool) []cand {
	cs = cs[:len(touched)]
	var kept [2]int
	inHalves(len(touched), func(half, lo, hi int) {
		k := lo
		for _, row := range touched[lo:hi] {
			if allowed == nil || allowed(row) {
				cs[k] = cand{row: row, score: scores[row]}
				k++
			}
		}
		kept[half] = k - lo
	})
	if len(touched) < tailSplitMin {
		return cs[:kept[0]]
	}
	m := len(touched) / 2
	if kept[0] < m { // else the halves already meet (no filter)
		copy(cs[kept[0]:], cs[m:m+kept[1]])
	}
	return cs[:kept[0]+kept[1]]
}

// selectTopSplit is selectTop(all, n) with the two halves of all selected
// at once (3–4 ms of wall at 1,000,000 exchanges, one goroutine). Each
// half's n+1 best are merged; when the n+1 best of the merge are strictly
// ordered (no two of the same score and Seq), they are the n+1 best of
// all — anything a half left out is no better than the half's own
// (n+1)-th, which is not among the merge's first n — and the n best are
// selectTop's answer, in its order. A tie there (selectTop's pick among
// equals depends on the order it meets them) goes the serial way.
func (ix *Index) selectTopSplit(all []cand, n int) []cand {
	if len(all) < tailSplitMin || n+1 > len(all)/2 {
		return ix.selectTop(all, n)
	}
	var tops [2][]cand
	inHalves(len(all), func(half, lo, hi int) {
		tops[half] = ix.selectTop(all[lo:hi], n+1)
	})
	if out, ok := ix.mergeTops(tops[0], tops[1], n); ok {
		return out
	}
	return ix.selectTop(all, n)
}

// mergeTops merges two halves' n+1 best (each sorted) and returns their n
// best, and false when two of the merge's first n+1 tie (the serial
// selection's pick among equals depends on the order it meets them; see
// selectTopSplit).
func (ix *Index) mergeTops(a, b []cand, n int) ([]cand, bool) {
	out := make([]cand, 0, n+1)
	for len(out) < n+1 && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || len(a) > 0 && ix.better(a[0], b[0]) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	for i := 1; i < len(out); i++ {
		if !ix.better(out[i-1], out[i]) {
			return nil, false
		}
	}
	return out[:min(n, len(out))], true
}

// topGroupsOfRows is topGroups(candidates(touched, scores, nil), limit)
// without the candidates' array when its first selection answers (ok): the
// rows are read as they stand in touched, the order candidates would list
// them in, so the selection meets the same candidates in the same order.
// At 1,000,000 exchanges the array was 16 MB written and read again, ~0.6
// ms of a warm search's serial tail (docs/BENCHMARKS.md, session 30). ok
// is false, nothing decided, when topGroups would sort every candidate or
// widen its selection (duplicates took slots): the caller then builds the
// candidates and runs topGroups, whose first selection is this one.
func (ix *Index) topGroupsOfRows(touched []int32, scores []float64, limit int) ([]cand, bool) {
	want := limit * 4
	if want >= len(touched) {
		return nil, false
	}
	got := ix.pickGroups(ix.selectTopSplitRows(touched, scores, want), limit)
	return got, len(got) == limit
}

// selectTopSplitRows is selectTopSplit over the candidates of rows (each
// row with its score), read in place.
func (ix *Index) selectTopSplitRows(rows []int32, scores []float64, n int) []cand {
	if len(rows) < tailSplitMin || n+1 > len(rows)/2 {
		return ix.selectTopRows(rows, scores, n)
	}
	var tops [2][]cand
	inHalves(len(rows), func(half, lo, hi int) {
		tops[half] = ix.selectTopRows(rows[lo:hi], scores, n+1)
	})
	if out, ok := ix.mergeTops(tops[0], tops[1], n); ok {
		return out
	}
	return ix.selectTopRows(rows, scores, n)
}

// selectTopRows is selectTop over the candidates of rows, read in place:
// the same heap, fed the same candidates in the same order.
func (ix *Index) selectTopRows(rows []int32, scores []float64, n int) []cand {
	t := topHeap{ix: ix, h: make([]cand, 0, n)}
	for _, row := range rows {
		c := cand{row: row, score: scores[row]}
		if len(t.h) < n {
			t.push(c)
		} else if ix.better(c, t.h[0]) {
			t.replaceWorst(c)
		}
	}
	return t.sorted()
}

// testNoRowsTop makes the session layer build its candidates for every
// selection (tests compare).
var testNoRowsTop = false
