package search

import (
	"runtime"
	"sync"

	"github.com/gitmem/git-mem/search/embed"
)

// analyzers keeps prepare's Analyzers, and so their memos of terms, from
// one call to the next: a writer prepares its documents in batches (of
// 2,000 in an add or a rebuild), and an Analyzer made for each batch
// stemmed the batch's vocabulary again, most of it the batch before's
// (docs/BENCHMARKS.md, session 21). An Analyzer's terms are a pure
// function of its words, so which one a worker takes changes nothing.
// At most GOMAXPROCS are kept, each memo bounded (embed's memoMax).
var analyzers struct {
	sync.Mutex
	free []*embed.Analyzer
}

// takeAnalyzer is a kept Analyzer, or a new one.
func takeAnalyzer() *embed.Analyzer {
	analyzers.Lock()
	defer analyzers.Unlock()
	if n := len(analyzers.free); n > 0 {
		a := analyzers.free[n-1]
		analyzers.free[n-1] = nil
		analyzers.free = analyzers.free[:n-1]
		return a
	}
	return embed.NewAnalyzer()
}

// putAnalyzer keeps a for the next takeAnalyzer (a must no longer be used).
func putAnalyzer(a *embed.Analyzer) {
	analyzers.Lock()
	defer analyzers.Unlock()
	if len(analyzers.free) < runtime.GOMAXPROCS(0) {
		analyzers.free = append(analyzers.free, a)
	}
}
