package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progressDelay is how long a command runs before it says it is working:
// a warm search never shows anything.
const progressDelay = time.Second

// progress shows, on a terminal only, that a long rebuild is under way:
// one line on stderr, rewritten each second and cleared at the end, with
// the count once memory reports one (Memory.Progress).
type progress struct {
	w           io.Writer
	what        string
	start       time.Time
	mu          sync.Mutex
	done, total int
	shown       bool
	stop        chan struct{}
	wg          sync.WaitGroup
}

// startProgress starts the ticker when stderr is a terminal and no JSON is
// asked for; end clears the line.
func (e *env) startProgress(what string) *progress {
	if e.json || !isTerminal(e.errOut) {
		return nil
	}
	return newProgress(e.errOut, what, time.NewTicker(progressDelay).C)
}

func newProgress(w io.Writer, what string, tick <-chan time.Time) *progress {
	p := &progress{w: w, what: what, start: time.Now(), stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case <-p.stop:
				return
			case <-tick:
				p.draw()
			}
		}
	}()
	return p
}

// report is a Memory.Progress callback.
func (p *progress) report(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.done, p.total = done, total
	p.mu.Unlock()
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("git mem: %s… %ds", p.what, int(time.Since(p.start).Seconds()))
	if p.total > 0 {
		line = fmt.Sprintf("git mem: %s… %d/%d (%ds)", p.what, p.done, p.total, int(time.Since(p.start).Seconds()))
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.shown = true
}

// end stops the ticker and clears its line.
func (p *progress) end() {
	if p == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
