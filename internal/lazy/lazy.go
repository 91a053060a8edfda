// Package lazy builds package-level values on their first use. Every git mem
// process, and so every hook call, runs all package initialisers before main;
// a regexp or table built there is paid for by commands that never use it
// (docs/BENCHMARKS.md, "Process start").
package lazy

import (
	"regexp"
	"sync"
)

// Regexp returns a function that compiles expr on its first call and returns
// the same *regexp.Regexp ever after. expr must be valid: it panics like
// regexp.MustCompile, on first use rather than at start-up.
func Regexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
