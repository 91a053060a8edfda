package memory

import (
	"context"
	"errors"
	"sync"
)

// indexAhead brings the index up to main while an add goes on: each batch
// the add stores wakes it (kick), and a pass runs on its own goroutine
// while the add redacts, distills and stores the next batch. The add is
// work for both cores and the index ~1.3 of them (Bleve builds a batch's
// segment on one goroutine); one index pass after the last batch left a
// core idle for most of it (docs/BENCHMARKS.md, sessions 17 and 18).
//
// A pass is what UpdateIndex does, with the same locks: a catch-up in
// place takes main as it finds it, a batch of commits per hold of the
// exclusive index lock, as a search's catch-up or another add's may at any
// moment. When the memory has no usable index (a fresh memory's first
// add, a damaged one), the first pass begins a rebuild (the build lock,
// taken only if free: a process that holds it indexes this too) and every
// pass feeds it the commits stored since, in the batches a rebuild after
// the add would take; finish commits it and switches to it under the
// exclusive index lock, catching up with main as any rebuild does. A kill
// at any point leaves what a kill of a catch-up or a rebuild leaves: a
// generation that CURRENT does not name yet, or one whose uncommitted
// batch the seal finds. Kicks that come while a pass runs are folded into
// one pass after it.
type indexAhead struct {
	ctx  context.Context
	m    *Memory
	mu   sync.Mutex
	wake bool // a batch was stored since the running pass read main
	busy bool // a pass is running
	done chan struct{}
	// b is the rebuild the passes feed, if any (only the pass goroutine,
	// then finish, touch it).
	b *building
	// ran: a pass started after the last kick has finished; err is that
	// pass's error.
	ran bool
	err error
}

// startIndexAhead makes the adds that follow wake an index pass after each
// stored batch, until finish is called. finish waits for the passes,
// switches to a rebuild they fed, and returns the last pass's error and
// whether the index was brought up to main after the last stored batch
// (false: nothing was stored, or the caller must update the index
// itself). When an index-ahead is running already (an outer AddFiles),
// finish reports false and the outer one's finish indexes.
func (m *Memory) startIndexAhead(ctx context.Context) (finish func() (ran bool, err error)) {
	a := &indexAhead{ctx: ctx, m: m}
	if !m.ahead.CompareAndSwap(nil, a) {
		return func() (bool, error) { return false, nil }
	}
	return func() (bool, error) {
		m.ahead.CompareAndSwap(a, nil)
		a.mu.Lock()
		for a.busy {
			done := a.done
			a.mu.Unlock()
			<-done
			a.mu.Lock()
		}
		ran, err := a.ran, a.err
		a.mu.Unlock()
		if a.b != nil {
			_, err = a.b.finish(a.ctx)
			a.b, ran = nil, true
		}
		return ran, err
	}
}

// aheadPassed, when set (tests), hears of each pass: whether it fed a
// rebuild, and its error.
var aheadPassed func(rebuilding bool, err error)

// kick says that main moved: a pass runs now, or after the one running.
func (a *indexAhead) kick() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.wake, a.ran = true, false
	if a.busy {
		return
	}
	a.busy = true
	a.done = make(chan struct{})
	go a.run(a.done)
}

func (a *indexAhead) run(done chan struct{}) {
	defer close(done)
	for {
		a.mu.Lock()
		if !a.wake {
			a.busy = false
			a.mu.Unlock()
			return
		}
		a.wake = false
		a.mu.Unlock()
		err := a.pass()
		if aheadPassed != nil {
			aheadPassed(a.b != nil, err)
		}
		a.mu.Lock()
		a.err = err
		a.ran = !a.wake
		a.mu.Unlock()
	}
}

// pass brings the index (or the rebuild under way) up to main.
func (a *indexAhead) pass() error {
	m, ctx := a.m, a.ctx
	if a.b == nil {
		_, err := m.catchUpInPlace(ctx)
		var rb errRebuild
		if !errors.As(err, &rb) {
			return err
		}
		b, _, err := m.beginRebuild(ctx, rb.reason, "", false)
		if b == nil {
			return err // caught up meanwhile, or another process rebuilds
		}
		a.b = b
	}
	head, err := m.Repo.Head()
	if err == nil {
		err = a.b.indexTo(ctx, head)
	}
	if err != nil {
		a.b.abort()
		a.b = nil
	}
	return err
}
