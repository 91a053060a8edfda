// Command git-mem-core is the whole git mem CLI. git runs the small front
// binary, git-mem (cmd/git-mem), which answers `version` and the Claude
// Code hook itself and hands every other command to this one; run directly,
// it does everything. The commands only parse flags and print; the logic
// lives in the packages below.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
