package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// progressDelay is how long a command runs before it says it is working:
// a warm search never shows anything.
const progressDelay = time.Second

// Progress shows, on a terminal only, that a long rebuild is under way:
// one line on stderr, rewritten each second and cleared at the end, with
// the count once memory reports one (Memory.Progress).
type Progress struct {
	w           io.Writer
	what        string
	start       time.Time
	mu          sync.Mutex
	done, total int
	shown       bool
	stop        chan struct{}
	wg          sync.WaitGroup
}

// StartProgress starts the ticker when errOut is a terminal and no JSON is
// asked for; End clears the line.
func StartProgress(errOut io.Writer, asJSON bool, what string) *Progress {
	if asJSON || !IsTerminal(errOut) {
		return nil
	}
	return newProgress(errOut, what, time.NewTicker(progressDelay).C)
}

// IsTerminal reports whether w is a terminal (not merely a character
// device: /dev/null is one, and a hook's stdin often is it).
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(w io.Writer, what string, tick <-chan time.Time) *Progress {
	p := &Progress{w: w, what: what, start: time.Now(), stop: make(chan struct{})}
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

// Report is a Memory.Progress callback.
func (p *Progress) Report(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.done, p.total = done, total
	p.mu.Unlock()
}

func (p *Progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("git mem: %s… %ds", p.what, int(time.Since(p.start).Seconds()))
	if p.total > 0 {
		line = fmt.Sprintf("git mem: %s… %d/%d (%ds)", p.what, p.done, p.total, int(time.Since(p.start).Seconds()))
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.shown = true
}

// End stops the ticker and clears its line.
func (p *Progress) End() {
	if p == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
