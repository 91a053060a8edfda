package search

import (
	"context"
	"sync"
)

// The two workers of sessionBM25Layer share a query's terms in fixed
// groups (termGroups), and the groups' sums are the scores: moving a term
// to the other group would change which floats are summed together. The
// groups' costs are estimates, and at 1,000,000 exchanges the 4-word query
// gave one worker ~53 ms of terms and the other ~81 ms
// (docs/BENCHMARKS.md, session 20). So a worker done with its own group
// helps: it takes the last term of another group that its owner has not
// started and computes the term's additions into a record, in the order
// they would have been made; the owner, on reaching that term, waits for
// the record and makes the additions itself. Every row's score gets the
// same values in the same order: scheduling decides who computes a value,
// never the order it is added in.

// rowAdd is one addition to a row's score.
type rowAdd struct {
	row int32
	v   float64
}

// termRecord is a term's additions to the scores, in order, computed by a
// helper for the term's owner.
type termRecord struct {
	adds []rowAdd
	held int   // the term's postings in the rows' own fields
	err  error // set before done is closed
	done chan struct{}
}

// termQueue is a group's terms not yet started: its owner takes them from
// the front (claim), helpers from the back (steal). What was stolen is a
// suffix of the group.
type termQueue struct {
	mu         sync.Mutex
	front, end int
	recs       []*termRecord // by position in the group, set by steal
}

// claim takes the group's next term for its owner: false when a helper
// has it (and every term after it).
func (q *termQueue) claim() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.front < q.end {
		q.front++
		return true
	}
	return false
}

// steal takes the group's last term not started, for a helper.
func (q *termQueue) steal() (int, *termRecord, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.front >= q.end {
		return 0, nil, false
	}
	q.end--
	rec := recordPool.Get().(*termRecord)
	rec.adds, rec.held, rec.err, rec.done = rec.adds[:0], 0, nil, make(chan struct{})
	q.recs[q.end] = rec
	return q.end, rec, true
}

// recordPool keeps the records' arrays for the next query (a warm search
// process).
var recordPool = sync.Pool{New: func() any { return new(termRecord) }}

// help computes the other groups' terms that their owners have not started,
// each into its record, until none is left; false when one failed (the
// owner reports the error).
func (s *sessionScorer) help(ctx context.Context, w int, queues []termQueue, groups [][]int, terms []weightedTerm) bool {
	for o := range queues {
		if o == w {
			continue
		}
		for {
			i, rec, ok := queues[o].steal()
			if !ok {
				break
			}
			k := groups[o][i]
			// The exact-match counts (own) go to this worker's matched:
			// adjust adds the workers' counts, integers, and each term
			// has its own stamp k.
			s.k, s.tw = int32(k+1), terms[k].w
			s.rec = rec
			rec.err = s.term(ctx, terms[k].t)
			rec.held = s.held
			s.rec = nil
			close(rec.done)
			if rec.err != nil {
				return false
			}
			if testHelped != nil {
				testHelped()
			}
		}
	}
	return true
}

// apply makes a record's additions to the scores, in its order, marking
// rows touched as the scorer would have, and gives the record back.
func (s *sessionScorer) apply(rec *termRecord) {
	s.alloc()
	scores, seen, touched := s.scores, s.seen, s.touched
	for _, a := range rec.adds {
		if !seen[a.row] {
			seen[a.row] = true
			touched = append(touched, a.row)
		}
		scores[a.row] += a.v
	}
	s.touched = touched
	if cap(rec.adds) <= 1<<22 { // keep at most 64 MB a record
		rec.adds = rec.adds[:0]
		recordPool.Put(rec)
	}
}

// put adds v to row's score (or to the record being made).
func (s *sessionScorer) put(row int32, v float64) {
	if s.rec != nil {
		s.rec.adds = append(s.rec.adds, rowAdd{row, v})
		return
	}
	if !s.seen[row] {
		s.seen[row] = true
		s.touched = append(s.touched, row)
	}
	s.scores[row] += v
}

// Test hooks: disableBalance scores each group on its worker alone (the
// former path); testStealFirst makes each worker help before its own
// group (most terms then move); testHelped counts the records made;
// testSummed sees the summed scores before the adjustments.
var (
	disableBalance bool
	testStealFirst bool
	testHelped     func()
	testSummed     func(ws []*sessionScorer, scores []float64, touched []int32)
)
