package exchange

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// RecordError is a bad input record: where it is and what is wrong.
type RecordError struct {
	File string
	Line int
	Err  error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Record is one line of a JSON Lines file: an exchange or the reason it
// could not be read.
type Record struct {
	Line     int
	Exchange *Exchange
	Err      *RecordError
}

// ReadJSONL reads the plain exchange format. Bad lines come back as records
// with Err set, so the good records beside them can still be stored; only an
// I/O failure stops the read.
//
// fn is called on the caller's goroutine, one record at a time, in the
// order of the lines. The lines are read in order on another goroutine and
// parsed on all cores a little ahead of fn: parsing on one core was 0.23 s
// of the 6 s add of the 3,099 coding exchanges (docs/BENCHMARKS.md,
// session 14), with the other core idle. When fn fails, what was read ahead
// is dropped; a read that is blocked then (a terminal) ends in the
// background.
func ReadJSONL(r io.Reader, name string, fn func(Record) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 {
		return readJSONLSerial(br, name, fn)
	}
	stop := make(chan struct{})
	order := make(chan *lineChunk, 4*workers)
	work := make(chan *lineChunk, 4*workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case c, ok := <-work:
					if !ok {
						return
					}
					c.parse(name)
					close(c.done)
				case <-stop:
					return
				}
			}
		}()
	}
	go func() {
		defer close(order)
		defer close(work)
		line := 0
		c := newLineChunk()
		send := func() bool {
			select {
			case order <- c:
			case <-stop:
				return false
			}
			select {
			case work <- c:
			case <-stop:
				close(c.done) // never parsed: the reader of order has stopped
				return false
			}
			c = newLineChunk()
			return true
		}
		for {
			data, err := readLine(br)
			if len(data) > 0 || err == nil {
				line++
			}
			if len(bytes.TrimSpace(data)) > 0 {
				c.lines = append(c.lines, data)
				c.recs = append(c.recs, Record{Line: line})
				c.bytes += len(data)
			}
			if err != nil && err != io.EOF {
				c.err = fmt.Errorf("read %s: %w", name, err)
			}
			if err != nil || len(c.lines) == chunkLines || c.bytes >= chunkBytes {
				if !send() || err != nil {
					return
				}
			}
		}
	}()
	defer wg.Wait()
	defer close(stop)
	for c := range order {
		<-c.done
		for _, rec := range c.recs {
			if err := fn(rec); err != nil {
				return err
			}
		}
		if c.err != nil {
			return c.err
		}
	}
	return nil
}

// A lineChunk is a run of lines parsed together; done is closed when recs
// are ready.
type lineChunk struct {
	lines [][]byte
	recs  []Record
	bytes int
	err   error
	done  chan struct{}
}

// chunkLines and chunkBytes bound a chunk: small enough to spread a file
// of a few records over the cores, big enough to cost little to hand over.
const (
	chunkLines = 16
	chunkBytes = 256 << 10
)

func newLineChunk() *lineChunk { return &lineChunk{done: make(chan struct{})} }

func (c *lineChunk) parse(name string) {
	for i, data := range c.lines {
		c.recs[i] = parseLine(data, name, c.recs[i].Line)
		c.lines[i] = nil
	}
}

// parseLine turns one non-blank line into a record.
func parseLine(data []byte, name string, line int) Record {
	rec := Record{Line: line}
	if len(data) > MaxRecordBytes {
		rec.Err = &RecordError{File: name, Line: line, Err: fmt.Errorf("record is over the %d MiB limit: split the exchange", MaxRecordBytes>>20)}
	} else if ex, perr := Parse(data); perr != nil {
		rec.Err = &RecordError{File: name, Line: line, Err: perr}
	} else {
		rec.Exchange = ex
	}
	return rec
}

// readJSONLSerial is ReadJSONL on one core.
func readJSONLSerial(br *bufio.Reader, name string, fn func(Record) error) error {
	line := 0
	for {
		data, err := readLine(br)
		if len(data) > 0 || err == nil {
			line++
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if ferr := fn(parseLine(data, name, line)); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
}

// readLine reads one line of any length, keeping at most MaxRecordBytes+1
// bytes of it so a huge line is reported, not loaded whole.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(out) <= MaxRecordBytes {
			out = append(out, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(out, "\r\n"), err
	}
}
