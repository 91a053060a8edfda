// Package shared finds the team's shared folder (real transcripts and
// benchmarks that stay outside this repository) for tests and benchmarks:
// $GIT_MEM_SHARED, else a "shared" folder beside the checkout. Tests skip
// when it is absent.
package shared

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared folder, or "" when there is none.
func Dir() string {
	if d := os.Getenv("GIT_MEM_SHARED"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	// Walk up to the module root (go.mod), then look beside it.
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			cand := filepath.Join(filepath.Dir(dir), "shared")
			if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
				return cand
			}
			return ""
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// Path joins elem to the shared folder, skipping tb when the folder or the
// path is absent.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	d := Dir()
	if d == "" {
		tb.Skip("the shared folder is absent (set GIT_MEM_SHARED or put shared/ beside the checkout)")
	}
	p := filepath.Join(append([]string{d}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("%s is absent", p)
	}
	return p
}
