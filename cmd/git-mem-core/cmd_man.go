package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func init() { register(newManCmd) }

// git runs `man git-mem` for `git mem --help`: a `go install` user has no
// package to ship man pages, so the binary writes its own, generated from
// the same command tree as -h.
func newManCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "man",
		Short: "Man pages: `git mem man install` makes `git mem --help` work",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("name an action: git mem man install [DIR]")
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "install [DIR]",
		Short: "Write the man pages (git-mem.1, git-mem-log.1, …) into DIR (default ~/.local/share/man/man1)",
		Long: "Write one man page per command into DIR, by default $XDG_DATA_HOME/man/man1, else\n" +
			"~/.local/share/man/man1 (man finds it there on most systems; else add its parent to MANPATH).\n" +
			"Then `git mem --help`, which git turns into `man git-mem`, shows the manual.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			dir := ""
			if len(a) == 1 {
				dir = a[0]
			}
			dir, err := manDir(dir)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			hdr := &doc.GenManHeader{Title: "GIT-MEM", Section: "1", Source: "git mem " + versionString(), Manual: "Git Mem Manual"}
			if err := doc.GenManTree(cmd.Root(), hdr, dir); err != nil {
				return fmt.Errorf("write man pages into %s: %w", dir, err)
			}
			pages, _ := filepath.Glob(filepath.Join(dir, "git-mem*.1"))
			if e.JSON {
				return e.printJSON(map[string]any{"dir": dir, "pages": len(pages)})
			}
			fmt.Fprintf(e.out, "Installed %d man pages in %s: `git mem --help` runs `man git-mem`\n", len(pages), dir)
			fmt.Fprintf(e.out, "If man does not find them: export MANPATH=\"%s:\" (the colon keeps the system pages)\n", filepath.Dir(dir))
			return nil
		},
	})
	return cmd
}

// manDir is DIR, else $XDG_DATA_HOME/man/man1, else ~/.local/share/man/man1.
func manDir(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "man", "man1"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", usagef("no home directory: name the man page folder: git mem man install DIR")
	}
	return filepath.Join(home, ".local", "share", "man", "man1"), nil
}
