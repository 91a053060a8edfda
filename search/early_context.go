package search

import "path/filepath"

// earlyContext is the session context a read-only open started reading
// (Options.EarlyContext).
//
// A cold search process at 1,000,000 exchanges spent ~19 ms of CPU in
// ensureContext (mapping context.bin and sessctx.bin, their CRC-32C over
// 64 MB, every row's and link's range) and ~18 ms before it in loadTables
// (docs.bin's columns), one after the other on one core while the other
// waited for the scoring workers (docs/BENCHMARKS.md, session 18). Both
// only read files of the generation the open holds the shared lock on, so
// the context is read on a goroutine of its own from the open on, with
// exactly the checks ensureContext makes (mapContext, cachedSessionCtx):
// the first ensureContext takes its result, or, when it failed or does not
// fit the table loadTables read, goes the usual way and meets the same
// error.
type earlyContext struct {
	done chan struct{}
	sc   *sessionCtx // nil when reading it failed
}

// startContext starts reading the session context of the manifest's rows.
func (ix *Index) startContext() {
	e := &earlyContext{done: make(chan struct{})}
	ix.early = e
	n, path := ix.man.Docs, filepath.Join(ix.dir, contextFile)
	go func() {
		defer close(e.done)
		if n < 0 {
			return
		}
		rows, f, err := mapContext(path, n)
		if err == nil {
			e.sc = ix.cachedSessionCtx(rows, f)
		}
	}()
}

// takeEarly waits for the session context the open started reading, if
// any, and keeps it as ix.sctx when it has the table's rows. The caller
// holds ctxMu.
func (ix *Index) takeEarly() {
	e := ix.early
	if e == nil {
		return
	}
	<-e.done
	ix.early = nil
	if ix.sctx == nil && e.sc != nil && len(e.sc.rows) == len(ix.seqs) {
		ix.sctx = e.sc
	}
}

// waitContext waits for the session context the open started reading (a
// failed open, Close): nothing reads or writes the generation's files after.
func (ix *Index) waitContext() {
	ix.ctxMu.Lock()
	if e := ix.early; e != nil {
		<-e.done
	}
	ix.ctxMu.Unlock()
}

// ReadsContext says whether a search of mode reads the session context:
// session-bm25 and verbatim-bm25 rank by it, and a fusion's layers
// usually include one of them. The distilled layers never read it, so a
// one-shot search of those gains nothing from EarlyContext and would wait
// for it at Close. "" is DefaultMode (a search without --mode or
// search.mode): before session 19 it read as a mode that does not read the
// context, so the default search never read it early.
func ReadsContext(mode string) bool {
	if mode == "" {
		mode = DefaultMode
	}
	return mode == ModeSessionBM25 || mode == ModeVerbatimBM25 || mode == ModeFused
}
