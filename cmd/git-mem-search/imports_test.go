package main

import (
	"slices"
	"testing"

	"github.com/gitmem/git-mem/cmd/internal/deps"
)

// git-mem-search is what a cold `git mem search` starts: it must link
// none of the writers' libraries nor the CLI's others, whose package
// initialisers cost milliseconds before main (docs/BENCHMARKS.md,
// session 24): memory itself (distill's openai-go, redact's gitleaks,
// hooks' SQLite), the OpenAI embedder, cobra/doc, the MCP SDK, the UI,
// eval.
func TestSearchLinksReadPathOnly(t *testing.T) {
	banned := []string{
		"github.com/openai/", "github.com/zricethezav/", "modernc.org/", "github.com/spf13/cobra/doc",
		"github.com/cpuguy83/", "github.com/modelcontextprotocol/",
		"github.com/gitmem/git-mem/memory", "github.com/gitmem/git-mem/distill", "github.com/gitmem/git-mem/redact",
		"github.com/gitmem/git-mem/hooks", "github.com/gitmem/git-mem/mcpserver", "github.com/gitmem/git-mem/ui",
		"github.com/gitmem/git-mem/recall", "github.com/gitmem/git-mem/eval", "github.com/gitmem/git-mem/search/embed/openaiembed",
	}
	allowed := []string{"github.com/gitmem/git-mem/memory/reader", "github.com/gitmem/git-mem/memory/queue",
		"github.com/gitmem/git-mem/hooks/hookinput"}
	linked := deps.Of(t, ".")
	for _, dep := range linked {
		if deps.Banned(dep, banned, allowed) {
			t.Errorf("git-mem-search links %s", dep)
		}
	}
	// It does link the read path (an empty list would pass the above).
	for _, want := range []string{"github.com/gitmem/git-mem/memory/reader", "github.com/blevesearch/bleve/v2"} {
		if !slices.Contains(linked, want) {
			t.Errorf("git-mem-search does not link %s", want)
		}
	}
}
