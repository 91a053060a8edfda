// Command git-mem-search is what the front (git-mem) runs for a cold
// `git mem search`: the search of git-mem-core linking the read path
// alone, so that it starts in about half the time; anything it cannot
// answer exactly it hands to git-mem-core (cmd/internal/searchbin says
// why and when).
package main

import (
	"os"

	"github.com/gitmem/git-mem/cmd/internal/searchbin"
)

func main() { os.Exit(searchbin.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
