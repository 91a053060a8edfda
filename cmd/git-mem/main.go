// Command git-mem is the git mem CLI: with git-mem on PATH, `git mem …`
// works like any git subcommand. The commands only parse flags and print;
// the logic lives in the packages below.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
