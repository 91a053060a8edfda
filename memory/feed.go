package memory

import (
	"context"
	"runtime/trace"
	"sync"
)

// storeFeed lets the index update of an add (AddFiles) run beside the add
// instead of after it: it starts once the first batch is committed, and a
// rebuild it runs follows main while the add commits the next batches
// (indexAll) until the add has stored its last. The coding corpus' add
// into a fresh memory indexed its 3,099 commits only once all were
// stored, and half of its wall ran on one core there (the segment builds
// and their persists; docs/BENCHMARKS.md, sessions 25 and 26). The index
// is written exactly as by an index update run meanwhile by another
// process: nothing of what a crash leaves changes (docs/CONTRACT.md).
type storeFeed struct {
	mu      sync.Mutex
	batches int           // batches committed so far
	done    bool          // the add stores nothing more
	wake    chan struct{} // closed (and replaced) at each change
	start   sync.Once
	result  chan feedResult // the index update's, once it has started
	waited  sync.Once
	got     feedResult
}

type feedResult struct {
	rep IndexReport
	err error
}

func newStoreFeed() *storeFeed {
	return &storeFeed{wake: make(chan struct{})}
}

// state returns how many batches are committed, whether the add is done,
// and a channel closed at the next change.
func (f *storeFeed) state() (batches int, done bool, wake <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.batches, f.done, f.wake
}

func (f *storeFeed) changed() {
	close(f.wake)
	f.wake = make(chan struct{})
}

// stored says one more batch is in main; the first starts the index
// update (m.followIndex).
func (f *storeFeed) stored(ctx context.Context, m *Memory) {
	f.mu.Lock()
	f.batches++
	f.changed()
	f.mu.Unlock()
	f.start.Do(func() {
		f.result = make(chan feedResult, 1)
		go func() {
			rep, err := m.followIndex(ctx, f)
			f.result <- feedResult{rep, err}
		}()
	})
}

// finish says the add stores nothing more (or stopped).
func (f *storeFeed) finish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		f.done = true
		f.changed()
	}
}

// waitPast waits until more than seen batches are committed (true) or the
// add is done with no more (false).
func (f *storeFeed) waitPast(ctx context.Context, seen int) bool {
	for {
		n, done, wake := f.state()
		if n > seen {
			return true
		}
		if done {
			return false
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}

// wait finishes the feed and returns the index update's result; started
// is false when no batch was committed (no update ran).
func (f *storeFeed) wait() (rep IndexReport, err error, started bool) {
	f.finish()
	f.start.Do(func() {}) // none starts after this
	if f.result == nil {
		return IndexReport{}, nil, false
	}
	f.waited.Do(func() { f.got = <-f.result })
	return f.got.rep, f.got.err, true
}

// followIndex brings the index up to main until the add is done: each
// UpdateIndex indexes at least what was committed before it began (a
// rebuild follows the add itself, indexAll); when more came meanwhile, it
// runs again.
func (m *Memory) followIndex(ctx context.Context, f *storeFeed) (IndexReport, error) {
	defer trace.StartRegion(ctx, "followIndex").End()
	var total IndexReport
	for {
		seen, _, _ := f.state()
		rep, err := m.UpdateIndex(ctx)
		total.Indexed += rep.Indexed
		total.Docs = rep.Docs
		if rep.Rebuilt {
			total.Rebuilt, total.Reason = true, rep.Reason
		} else if rep.Reason != "" && !total.Rebuilt {
			total.Reason = rep.Reason
		}
		if err != nil {
			return total, err
		}
		if !f.waitPast(ctx, seen) {
			return total, ctx.Err()
		}
	}
}
