package main

import (
	"testing"

	"github.com/gitmem/git-mem/cmd/internal/deps"
)

// The front is what every hook call starts: it must link none of the
// engine (each of these costs milliseconds of package initialisers before
// main, docs/BENCHMARKS.md), and it reaches memory only through its queue.
func TestFrontLinksNoEngine(t *testing.T) {
	banned := []string{
		"github.com/blevesearch/", "github.com/go-git/", "github.com/openai/", "github.com/zricethezav/",
		"modernc.org/", "github.com/spf13/", "gopkg.in/yaml", "github.com/modelcontextprotocol/",
		"github.com/gitmem/git-mem/memory", "github.com/gitmem/git-mem/search", "github.com/gitmem/git-mem/gitstore",
		"github.com/gitmem/git-mem/hooks", "github.com/gitmem/git-mem/redact", "github.com/gitmem/git-mem/distill",
		// net's resolver links libc dynamically in a cgo build:
		// +1.2 ms on every start (docs/BENCHMARKS.md, session 14).
		"net", "runtime/cgo",
	}
	allowed := []string{"github.com/gitmem/git-mem/memory/queue", "github.com/gitmem/git-mem/hooks/hookinput"}
	for _, dep := range deps.Of(t, ".") {
		if deps.Banned(dep, banned, allowed) {
			t.Errorf("the front binary links %s", dep)
		}
	}
}
