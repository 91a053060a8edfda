package cli

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressLine(t *testing.T) {
	var out syncBuf
	tick := make(chan time.Time)
	p := newProgress(&out, "rebuilding the search index", tick)
	tick <- time.Now()
	// The draw runs after the tick is received: wait for it before the
	// count comes (reporting at once raced with the first draw).
	for i := 0; i < 500 && !strings.Contains(out.String(), "index…"); i++ {
		time.Sleep(2 * time.Millisecond)
	}
	p.Report(500, 15000)
	tick <- time.Now()
	p.End()
	got := out.String()
	if !regexp.MustCompile(`git mem: rebuilding the search index… \d+s`).MatchString(got) {
		t.Errorf("first tick: %q", got)
	}
	if !strings.Contains(got, "500/15000") {
		t.Errorf("the count is not shown: %q", got)
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("the line is not cleared at the end: %q", got)
	}
	// Off a terminal nothing is started.
	if StartProgress(&out, false, "x") != nil {
		t.Error("progress on a non-terminal")
	}
	var quiet syncBuf
	newProgress(&quiet, "x", make(chan time.Time)).End()
	if quiet.String() != "" {
		t.Errorf("a command faster than a tick printed %q", quiet.String())
	}
}
