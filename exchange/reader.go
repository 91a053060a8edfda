package exchange

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
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
func ReadJSONL(r io.Reader, name string, fn func(Record) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	line := 0
	for {
		data, err := readLine(br)
		if len(data) > 0 || err == nil {
			line++
		}
		if len(bytes.TrimSpace(data)) > 0 {
			rec := Record{Line: line}
			if len(data) > MaxRecordBytes {
				rec.Err = &RecordError{File: name, Line: line, Err: fmt.Errorf("record is over the %d MiB limit: split the exchange", MaxRecordBytes>>20)}
			} else if ex, perr := Parse(data); perr != nil {
				rec.Err = &RecordError{File: name, Line: line, Err: perr}
			} else {
				rec.Exchange = ex
			}
			if ferr := fn(rec); ferr != nil {
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
