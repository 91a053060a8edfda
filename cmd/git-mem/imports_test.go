package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The front is what every hook call starts: it must link none of the
// engine (each of these costs milliseconds of package initialisers before
// main, docs/BENCHMARKS.md), and it reaches memory only through its queue.
func TestFrontLinksNoEngine(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"github.com/blevesearch/", "github.com/go-git/", "github.com/openai/", "github.com/zricethezav/",
			"modernc.org/", "github.com/spf13/", "gopkg.in/yaml", "github.com/modelcontextprotocol/",
			"github.com/gitmem/git-mem/memory", "github.com/gitmem/git-mem/search", "github.com/gitmem/git-mem/gitstore",
			"github.com/gitmem/git-mem/hooks", "github.com/gitmem/git-mem/redact", "github.com/gitmem/git-mem/distill",
			// net's resolver links libc dynamically in a cgo build:
			// +1.2 ms on every start (docs/BENCHMARKS.md, session 14).
			"net", "runtime/cgo",
		} {
			allowed := dep == "github.com/gitmem/git-mem/memory/queue" || dep == "github.com/gitmem/git-mem/hooks/hookinput"
			if strings.HasPrefix(dep, banned) && (dep == banned || strings.HasSuffix(banned, "/") || strings.HasPrefix(dep, banned+"/")) && !allowed {
				t.Errorf("the front binary links %s", dep)
			}
		}
	}
}
