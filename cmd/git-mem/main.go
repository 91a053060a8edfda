// Command git-mem is what git runs for `git mem …`: a small front that
// answers `version` and the Claude Code hook itself and hands every other
// command to git-mem-core, the full binary installed beside it
// (cmd/internal/front says why).
package main

import (
	"os"

	"github.com/gitmem/git-mem/cmd/internal/front"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func main() { os.Exit(front.Main(version, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
