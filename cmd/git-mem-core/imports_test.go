package main

import (
	"testing"

	"github.com/gitmem/git-mem/cmd/internal/deps"
)

// The CLI parses flags, calls memory and prints: it must not reach past
// memory into the store, the readers or the index.
func TestCLIImportsOnlyMemory(t *testing.T) {
	banned := []string{"github.com/gitmem/git-mem/gitstore", "github.com/gitmem/git-mem/hooks", "github.com/gitmem/git-mem/search"}
	for _, imp := range deps.Imports(t, ".") {
		if deps.Banned(imp, banned, nil) {
			t.Errorf("cmd/git-mem imports %s: go through package memory", imp)
		}
	}
}
