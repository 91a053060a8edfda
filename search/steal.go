package search

import (
	"context"
	"sync"
)

// The two workers of sessionBM25Layer share a query's terms in fixed
// groups (termGroups), and each group's sums are part of the scores:
// moving a term to the other group would change which floats are summed
// together. The groups are balanced by estimates, and at 1,000,000
// exchanges the 4-word query gives one worker ~55 ms of terms and the
// other ~87 ms (docs/BENCHMARKS.md, session 25). So a worker done with its
// own group helps: it takes the last term of the other group that the
// owner has not started and computes the term's additions to the scores
// into a record, in the order they would have been made; the owner, on
// reaching that term, waits for the record and makes the additions itself.
// Every row's score gets the same values in the same order: scheduling
// decides who computes a value, never where or in which order it is added.

// rowAdd is one addition to a row's score.
type rowAdd struct {
	row int32
	v   float64
}

// termRecord is a term's additions to the scores, in order, computed by a
// helper for the term's owner, with what else the owner learns from the
// term.
type termRecord struct {
	adds []rowAdd
	held int   // the term's postings in the rows' own fields (missing)
	err  error // set before done is closed
	done chan struct{}
}

// termQueue is a group's terms not yet started: its owner takes them from
// the front (claim), a helper from the back (steal), so what was stolen is
// a suffix of the group.
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

// steal takes the group's last term not started, for a helper: its
// position in the group and the record to fill, whose additions go to
// adds (appended to from length 0).
func (q *termQueue) steal(adds []rowAdd) (int, *termRecord, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.front >= q.end {
		return 0, nil, false
	}
	q.end--
	rec := &termRecord{adds: adds[:0], done: make(chan struct{})}
	q.recs[q.end] = rec
	return q.end, rec, true
}

// recordRoom is the room for records each helper takes from the query's
// scratch at n rows: two additions a row (16 bytes each): at 1,000,000
// exchanges the 4-word query's "ttl" makes 455,134 additions, "session"
// 707,243. Grown by append from the heap, the record of "ttl" cost its
// helper 45 ms of thread CPU instead of ~10 (the growth's copies and page
// faults; docs/BENCHMARKS.md, session 25); in the scratch it is written
// once, on huge pages, untouched when nothing is stolen. A record that
// outgrows the room continues on the heap. Four additions a row, not two
// (session 29): a helper that takes several terms fills the room with all
// their records, and "fix build script ModuleNotFoundError" at 1,000,000
// had 1,472,876 additions in it when "modulenotfounderror" needed 736,438
// more; on the heap that cost a cold process 10,000–25,000 page faults and
// ~100 ms of CPU (docs/BENCHMARKS.md, session 29). The room is address
// space: only what a record writes is ever touched.
var recordRoom = func(n int) int { return 4 * n }

// help computes the other groups' terms that their owners have not
// started, each into its record, until none is left; false when one failed
// (its owner reports the error).
func (s *sessionScorer) help(ctx context.Context, w int, queues []termQueue, groups [][]int, terms []weightedTerm) bool {
	for o := range queues {
		if o == w {
			continue
		}
		for {
			i, rec, ok := queues[o].steal(s.recRoom)
			if !ok {
				break
			}
			k := groups[o][i]
			// The exact tier's counts (own) go to this worker's matched:
			// adjust adds the workers' counts, integers, and each term has
			// a stamp of its own (k+1).
			s.k, s.tw = int32(k+1), terms[k].w
			s.rec = rec
			rec.err = s.term(ctx, terms[k].t)
			rec.held = s.held
			s.rec = nil
			if len(rec.adds) > 0 && cap(s.recRoom) > 0 && &rec.adds[0] == &s.recRoom[:1][0] {
				// Still in the room: the next record starts after it.
				s.recRoom = s.recRoom[len(rec.adds):len(rec.adds)]
			}
			if testStolen != nil {
				testStolen(o, k)
			}
			close(rec.done)
			if rec.err != nil {
				return false
			}
		}
	}
	return true
}

// apply makes a record's additions to the scores in its order, marking the
// rows touched as the scorer would have.
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
}

// put adds v to row's score, or to the record being made (help).
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

// Test hooks: disableSteal scores each group on its worker alone (the
// former path); testStealFirst makes each worker help before scoring its
// own group (then most terms move); testStolen sees each term a helper
// computed (the owner's worker and the term's index); testSummed sees the
// summed scores and the rows touched before the adjustments.
var (
	disableSteal   bool
	testStealFirst bool
	testStolen     func(owner, k int)
	testSummed     func(ws []*sessionScorer, scores []float64, touched []int32)
)
