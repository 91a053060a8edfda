package memory

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/hooks"
	"github.com/gitmem/git-mem/redact"
)

// Formats are what AddFiles reads: "auto" sniffs the file.
// (every transcript reader of package hooks).
var Formats = append([]string{"auto", hooks.FormatExchange}, hooks.Formats()...)

// StdinPath names standard input among AddFiles' paths.
const StdinPath = "-"

// addBatch bounds how many exchanges of a plain exchange file are held in
// memory before they are committed (a variable for the tests).
var addBatch = 2000

// errRead marks a file that could not be read at all (import skips it and
// goes on; add stops).
var errRead = errors.New("unreadable input")

// utf8BOM is what some editors put before the first line.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// AddFiles is the one "read → add" path: it reads each input (a path, or
// StdinPath for stdin) in format and stores what it holds. Every path is
// checked before anything is stored (like git add, a missing one stores
// nothing); a path given twice (relative and absolute, or a link) is read
// once. Bad records go into the report as Skipped, the good ones are stored.
func (m *Memory) AddFiles(ctx context.Context, paths []string, stdin io.Reader, format string, opt AddOptions) (AddReport, error) {
	total := AddReport{Commits: []AddedCommit{}, Skipped: []string{}}
	if !validFormat(format) {
		return total, invalid(fmt.Errorf("--format %q: use one of %s", format, strings.Join(Formats, ", ")))
	}
	if len(paths) == 0 {
		paths = []string{StdinPath}
	}
	paths, err := uniqueInputs(paths)
	if err != nil {
		return total, err
	}
	// The index is brought up to date once, after every input.
	if !opt.NoIndex {
		defer m.startHandoff()()
	}
	each := opt
	each.NoIndex = true
	// A transcript still being written would have its last exchange stored
	// open (the prompt alone), and its hook would find that id present and
	// never store the reply (TestAddHoldsBackALiveTranscript).
	each.liveHold = true
	restoreGC := storeGC()
	defer func() { restoreGC() }()
	for _, p := range paths {
		var rep AddReport
		if p == StdinPath {
			rep, err = m.addStdin(ctx, stdin, format, each)
		} else {
			rep, err = m.AddFile(ctx, p, format, hooks.Options{SessionEnded: true}, each)
		}
		mergeReport(&total, rep)
		if err != nil {
			return total, err
		}
	}
	restoreGC()
	restoreGC = func() {}
	if !opt.NoIndex && total.Added > 0 {
		if _, err := m.UpdateIndex(ctx); err != nil {
			total.IndexErr = err.Error()
		} else {
			total.Indexed = true
		}
	}
	return total, nil
}

func validFormat(f string) bool {
	for _, x := range Formats {
		if f == x {
			return true
		}
	}
	return false
}

// uniqueInputs checks that every path is a readable file and drops the ones
// that name a file already listed.
func uniqueInputs(paths []string) ([]string, error) {
	var out []string
	var seen []os.FileInfo
	stdin := false
	for _, p := range paths {
		if p == StdinPath {
			if !stdin {
				out = append(out, p)
			}
			stdin = true
			continue
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, inClass(fmt.Errorf("%s: no such file: check the path (git mem add FILE…, or - for standard input)", p), ErrNotFound)
		case err != nil:
			return nil, fmt.Errorf("%s: %w", p, unwrapPath(err))
		case fi.IsDir():
			return nil, invalid(fmt.Errorf("%s is a folder: name the transcript files in it, or backfill a whole history with `git mem import claude-code|codex DIR`", p))
		}
		dup := false
		for _, s := range seen {
			if os.SameFile(s, fi) {
				dup = true
				break
			}
		}
		if !dup {
			seen = append(seen, fi)
			out = append(out, p)
		}
	}
	return out, nil
}

// unwrapPath drops the "op path:" prefix of a *PathError when the caller
// names the path itself (no "open x: open x: …").
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// AddFile reads one file in format ("auto" sniffs it) and stores it. The
// worker and import call it for transcripts, AddFiles for the CLI.
func (m *Memory) AddFile(ctx context.Context, path, format string, ro hooks.Options, opt AddOptions) (AddReport, error) {
	name := filepath.Clean(path)
	if format == "auto" || format == "" {
		det, empty, err := detect(path)
		if err != nil {
			return AddReport{}, err
		}
		if empty {
			return AddReport{}, nil // nothing to add, as with --format exchange
		}
		format = det
	}
	if format != hooks.FormatExchange {
		var res hooks.Result
		var err error
		held := 0
		if opt.liveHold && ro.SessionEnded && liveFile(path) {
			res, held, err = readLive(path, format, ro)
		} else {
			res, err = hooks.ReadFile(path, format, ro)
		}
		if err != nil {
			return AddReport{}, inClass(err, errRead)
		}
		if opt.excludable {
			if why := m.Config.Excluded(format, res.Cwd); why != "" {
				return AddReport{Skipped: []string{name + ": " + why}, excluded: true}, nil
			}
		}
		rep, err := m.Add(ctx, res.Exchanges, opt)
		rep.HeldBack = held
		for _, p := range res.Problems {
			rep.Skipped = append(rep.Skipped, redactString(p.Error()))
		}
		return rep, err
	}
	f, err := os.Open(path)
	if err != nil {
		return AddReport{}, fmt.Errorf("%s: %w", name, unwrapPath(err))
	}
	defer f.Close()
	return m.addJSONL(ctx, f, name, opt)
}

// detect names the format of path; empty is true for a file with nothing
// but blank space (and a BOM) in it.
func detect(path string) (format string, empty bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", false, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if len(bytes.TrimSpace(bytes.TrimPrefix(head[:n], utf8BOM))) == 0 && n < len(head) {
		return "", true, nil
	}
	format, err = hooks.Detect(path)
	if err != nil {
		return "", false, invalid(fmt.Errorf("%s: not a format git mem knows: pass --format exchange, claude-code, codex or aider", path))
	}
	return format, false, nil
}

// addStdin stores standard input: the exchange format streams; transcript
// readers work on files, so the input is spooled to one first.
func (m *Memory) addStdin(ctx context.Context, stdin io.Reader, format string, opt AddOptions) (AddReport, error) {
	if stdin == nil {
		stdin = bytes.NewReader(nil)
	}
	if format == hooks.FormatExchange {
		return m.addJSONL(ctx, stdin, "<stdin>", opt)
	}
	f, err := os.CreateTemp("", "git-mem-add-*.jsonl")
	if err != nil {
		return AddReport{}, fmt.Errorf("spool standard input: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := io.Copy(f, stdin); err != nil {
		f.Close()
		return AddReport{}, fmt.Errorf("read standard input: %w", err)
	}
	if err := f.Close(); err != nil {
		return AddReport{}, fmt.Errorf("spool standard input: %w", err)
	}
	rep, err := m.AddFile(ctx, f.Name(), format, hooks.Options{SessionEnded: true}, opt)
	// Problems name the spool file; the user gave standard input.
	for i, s := range rep.Skipped {
		rep.Skipped[i] = replacePrefix(s, f.Name(), "<stdin>")
	}
	return rep, err
}

func replacePrefix(s, old, new string) string {
	if len(s) >= len(old) && s[:len(old)] == old {
		return new + s[len(old):]
	}
	return s
}

// addJSONL streams the plain exchange format in batches of addBatch.
func (m *Memory) addJSONL(ctx context.Context, r io.Reader, name string, opt AddOptions) (AddReport, error) {
	total := AddReport{}
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	var batch []*exchange.Exchange
	// A batch is redacted and rendered (prepareAdd), looked up and
	// distilled (lookupItems) while the batch before it is stored, whose
	// git writing leaves a core idle (docs/BENCHMARKS.md, sessions 14 and
	// 17); the batches are stored one after the other, in order. seen
	// holds the claims of every batch handed to storeItems (classify), so
	// that an item is compared with what the batch before stores, as it
	// would be were the look-up made after that batch was stored.
	type stored struct {
		rep AddReport
		err error
	}
	var storing chan stored
	wait := func() error {
		if storing == nil {
			return nil
		}
		r := <-storing
		storing = nil
		mergeReport(&total, r.rep)
		return r.err
	}
	seen := claims{}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		items := prepareAdd(batch, opt)
		batch = batch[:0]
		todo, looked, rep, lerr := m.lookupItems(ctx, items, seen)
		if err := wait(); err != nil {
			return err
		}
		if lerr != nil {
			mergeReport(&total, rep)
			return lerr
		}
		storing = make(chan stored, 1)
		go func(done chan<- stored) {
			rep, err := m.storeItems(ctx, todo, looked, rep, opt)
			done <- stored{rep, err}
		}(storing)
		return nil
	}
	err := exchange.ReadJSONL(br, name, func(rec exchange.Record) error {
		if rec.Err != nil {
			total.Skipped = append(total.Skipped, redactString(rec.Err.Error()))
			return nil
		}
		if err := secretID(rec.Exchange.ID); err != nil {
			total.Skipped = append(total.Skipped, (&exchange.RecordError{File: name, Line: rec.Line, Err: err}).Error())
			return nil
		}
		batch = append(batch, rec.Exchange)
		if len(batch) >= addBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if werr := wait(); err == nil {
		err = werr
	}
	return total, err
}

func mergeReport(dst *AddReport, src AddReport) {
	dst.Added += src.Added
	dst.Present += src.Present
	dst.Forgotten += src.Forgotten
	dst.Redacted += src.Redacted
	dst.HeldBack += src.HeldBack
	dst.Reused += src.Reused
	dst.Commits = append(dst.Commits, src.Commits...)
	dst.Skipped = append(dst.Skipped, src.Skipped...)
	dst.Indexed = dst.Indexed || src.Indexed
	if src.IndexErr != "" {
		dst.IndexErr = src.IndexErr
	}
}

// storeGCPercent and storeMemLimit are the collector's target while AddFiles
// parses, redacts, distills and stores (not while it indexes): the heap may
// grow to 5× what is live instead of 2×, up to a soft limit of 1 GiB. What
// is live there is a batch of addBatch exchanges, their blobs and the
// handoff (at most handoffMax), a few hundred MB at most, so the limit is
// never what the collector aims at for long; most of what those steps
// allocate is garbage at once (decoded JSON, redaction's copies, rendered
// text). The coding corpus' add: see docs/BENCHMARKS.md, session 21.
const (
	storeGCPercent = 400
	storeMemLimit  = 1 << 30
)

// storeGC sets storeGCPercent and storeMemLimit and returns what restores
// the collector as it was. GOGC or GOMEMLIMIT set by the user win.
func storeGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := debug.SetMemoryLimit(storeMemLimit)
	pct := debug.SetGCPercent(storeGCPercent)
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
}

// secretID refuses an id that holds what the redactor takes for a secret:
// the id is the exchange's identity, kept as given (redact.Exchange), and
// it is written into the commit's trailer, the blob and any tombstone, all
// pushed. Redacting it instead could give two exchanges one id, the second
// then found present and not stored. None of the 16,048 ids of the eval
// sets is refused.
func secretID(id string) error {
	if id == "" {
		return nil
	}
	if _, n := redact.String(id); n > 0 {
		return errors.New(`field "id" holds what looks like a secret: give the exchange another id (or none, for a content hash)`)
	}
	return nil
}

// liveFile says whether path was written to in the last LiveSession: its
// session may still be running.
func liveFile(path string) bool {
	t := hooks.ChangedAt(path)
	return !t.IsZero() && time.Since(t) < LiveSession
}

// readLive reads a transcript with its last exchange left open (as import
// does a live one, readSession); held is how many exchanges that leaves
// out.
func readLive(path, format string, ro hooks.Options) (hooks.Result, int, error) {
	all, err := hooks.ReadFile(path, format, ro)
	if err != nil {
		return all, 0, err
	}
	ro.SessionEnded = false
	res, err := hooks.ReadFile(path, format, ro)
	return res, len(all.Exchanges) - len(res.Exchanges), err
}
