package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The CLI parses flags, calls memory and prints: it must not reach past
// memory into the store, the readers or the index.
func TestCLIImportsOnlyMemory(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	out, err := exec.Command(goBin, "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		for _, banned := range []string{"gitstore", "hooks", "search"} {
			if imp == "github.com/gitmem/git-mem/"+banned || strings.HasPrefix(imp, "github.com/gitmem/git-mem/"+banned+"/") {
				t.Errorf("cmd/git-mem imports %s: go through package memory", imp)
			}
		}
	}
}
