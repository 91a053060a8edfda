// Package deps is for the tests that keep a binary's links small (the
// front, git-mem-search) and the CLI's imports narrow: what a package
// links or imports, and whether a dependency is one of a banned list.
package deps

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Of lists every package that pkg (a pattern such as ".") links; the test
// is skipped when the go command cannot say.
func Of(t *testing.T, pkg string) []string {
	t.Helper()
	return goList(t, "-deps", pkg)
}

// Imports lists the packages that pkg imports itself.
func Imports(t *testing.T, pkg string) []string {
	t.Helper()
	return goList(t, "-f", `{{join .Imports "\n"}}`, pkg)
}

// goList runs `go list` with args, the go command of this toolchain
// first; the test is skipped when it cannot run.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	out, err := exec.Command(goBin, append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// Banned reports whether dep is one of banned: a package path (itself or
// below it) or, ending in "/", a prefix; allowed are exceptions.
func Banned(dep string, banned, allowed []string) bool {
	for _, a := range allowed {
		if dep == a {
			return false
		}
	}
	for _, b := range banned {
		if strings.HasPrefix(dep, b) && (dep == b || strings.HasSuffix(b, "/") || strings.HasPrefix(dep, b+"/")) {
			return true
		}
	}
	return false
}
