package exchange

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// got is what fn saw of one record: comparable across the two readers.
type got struct {
	Line int
	Err  string
	Ex   *Exchange
}

func collect(t *testing.T, read func(fn func(Record) error) error) ([]got, error) {
	t.Helper()
	var out []got
	err := read(func(r Record) error {
		g := got{Line: r.Line, Ex: r.Exchange}
		if r.Err != nil {
			g.Err = r.Err.Error()
		}
		if (r.Err == nil) == (r.Exchange == nil) {
			t.Fatalf("line %d: record with both or neither of Exchange and Err", r.Line)
		}
		out = append(out, g)
		return nil
	})
	return out, err
}

// jsonlLines builds n lines of every kind ReadJSONL meets: good exchanges,
// blank and space-only lines, bad JSON, invalid UTF-8, CRLF endings.
func jsonlLines(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		switch rng.Intn(10) {
		case 0:
			b.WriteString("")
		case 1:
			b.WriteString(" \t ")
		case 2:
			b.WriteString(`{"turns": [}`)
		case 3:
			b.WriteString("{\"turns\":[{\"role\":\"user\",\"text\":\"bad \xff byte\"}]}")
		case 4:
			b.WriteString(`["not an object"]`)
		default:
			fmt.Fprintf(&b, `{"id":"x-%d","session":"s%d","turns":[{"role":"user","text":%q},{"role":"assistant","text":"ok %d"}]}`,
				i, rng.Intn(5), strings.Repeat("word ", rng.Intn(3000)), i)
		}
		if rng.Intn(4) == 0 {
			b.WriteString("\r")
		}
		b.WriteString("\n")
	}
	if rng.Intn(2) == 0 { // a last line without its newline
		b.WriteString(`{"turns":[{"role":"user","text":"last"}]}`)
	}
	return b.Bytes()
}

// TestReadJSONLIsSerial holds the parallel reader to the one-core reader:
// the same records (line, error text, exchange) in the same order, on
// generated files of every size around the chunk bounds and, with
// GIT_MEM_CODING=FILE, on the coding corpus.
func TestReadJSONLIsSerial(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	rng := rand.New(rand.NewSource(19))
	var inputs [][]byte
	for _, n := range []int{0, 1, 2, chunkLines - 1, chunkLines, chunkLines + 1, 3 * chunkLines, 500} {
		inputs = append(inputs, jsonlLines(rng, n))
	}
	inputs = append(inputs, []byte("\n\n\n"), []byte(`{"turns":[{"role":"user","text":"a"}]}`))
	if p := os.Getenv("GIT_MEM_CODING"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, data)
	}
	for i, in := range inputs {
		want, werr := collect(t, func(fn func(Record) error) error {
			return readJSONLSerial(bufio.NewReader(bytes.NewReader(in)), "f", fn)
		})
		have, herr := collect(t, func(fn func(Record) error) error {
			return ReadJSONL(bytes.NewReader(in), "f", fn)
		})
		if werr != nil || herr != nil {
			t.Fatalf("input %d: errors %v, %v", i, werr, herr)
		}
		if len(have) != len(want) {
			t.Fatalf("input %d: %d records, want %d", i, len(have), len(want))
		}
		for j := range want {
			if !reflect.DeepEqual(have[j], want[j]) {
				t.Fatalf("input %d, record %d: %+v, want %+v", i, j, have[j], want[j])
			}
		}
	}
}

// failAfter reads data, then fails.
type failAfter struct {
	r io.Reader
}

var errDisk = errors.New("disk on fire")

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errDisk
	}
	return n, err
}

// TestReadJSONLStops: an error of fn is returned at once and no record
// after it is given; a read error comes after every record read before it.
func TestReadJSONLStops(t *testing.T) {
	in := jsonlLines(rand.New(rand.NewSource(7)), 400)
	for _, at := range []int{0, 1, chunkLines, 150} {
		calls := 0
		stop := errors.New("stop")
		err := ReadJSONL(bytes.NewReader(in), "f", func(Record) error {
			calls++
			if calls > at {
				return stop
			}
			return nil
		})
		if err != stop || calls != at+1 {
			t.Fatalf("stop after %d: err %v after %d calls", at, err, calls)
		}
	}
	want, _ := collect(t, func(fn func(Record) error) error {
		return readJSONLSerial(bufio.NewReader(bytes.NewReader(in)), "f", fn)
	})
	have, err := collect(t, func(fn func(Record) error) error {
		return ReadJSONL(&failAfter{bytes.NewReader(in)}, "f", fn)
	})
	if !errors.Is(err, errDisk) || !strings.HasPrefix(err.Error(), "read f: ") {
		t.Fatalf("read error: %v", err)
	}
	if !reflect.DeepEqual(have, want) {
		t.Fatalf("a read error lost records: %d, want %d", len(have), len(want))
	}
}
