package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// scripts/demo.sh leaves no temporary memory behind (it builds the binary:
// heavy).
func TestDemoCleansUp(t *testing.T) {
	if os.Getenv("GIT_MEM_HEAVY") != "1" {
		t.Skip("builds git-mem and runs the demo: set GIT_MEM_HEAVY=1")
	}
	tmp := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "demo.sh"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		t.Errorf("demo.sh left %s in TMPDIR", e.Name())
	}
}
