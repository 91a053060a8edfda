package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// looseLimit is how many loose objects (estimated like `git gc --auto`
// does, from one fan-out folder) trigger a background repack.
const looseLimit = 2000

// packLimit is how many packs trigger a consolidating repack.
const packLimit = 12

func (r *Repo) countPacks() int {
	packs, _ := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "pack-*.pack"))
	return len(packs)
}

// maybeRepack packs loose objects with the git CLI in a detached process
// when there are many: go-git never packs, and git's own `gc --auto` would
// otherwise start in the user's next git command. go-git's repack was 3x
// slower and 3x larger here, so the git CLI does it.
func (r *Repo) maybeRepack() {
	if gitCLI() == "" || os.Getenv("GIT_MEM_AUTO_REPACK") == "0" {
		return
	}
	// Many loose objects: pack them (cheap). Many packs (each batch writes
	// one, undeltified): consolidate them with fresh deltas, which also
	// shrinks the trees a commit per exchange leaves behind (38 → 20 MiB at
	// 15k exchanges, 2.4 s, docs/BENCHMARKS.md).
	args := ""
	switch {
	case r.countPacks() >= packLimit:
		args = "-a -d -f --window=10"
	case r.estimateLoose() >= looseLimit:
		args = "-d"
	default:
		return
	}
	l, ok, err := TryLockFile(filepath.Join(r.MemDir(), "pack.lock"))
	if err != nil || !ok {
		return
	}
	l.Unlock()
	// The child takes pack.lock itself via flock(1)-like wrapper: a shell
	// keeps it simple and independent of this process's lifetime.
	cmd := exec.Command("sh", "-c", `exec 9>"$1/mem/pack.lock" && flock -n 9 && git --git-dir "$1" repack $2 -q && git --git-dir "$1" prune-packed -q`, "repack", r.dir, args)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err == nil {
		go func() { _ = cmd.Wait() }() // the process outlives us when we exit first
	}
}

// estimateLoose counts loose objects the way `git gc --auto` does, from a
// sample of the 256 fan-out folders (here 8 of them).
func (r *Repo) estimateLoose() int {
	n := 0
	for _, d := range []string{"17", "3a", "5c", "80", "9e", "b4", "d1", "f0"} {
		ents, _ := os.ReadDir(filepath.Join(r.dir, "objects", d))
		n += len(ents)
	}
	return n * 256 / 8
}

// Repack packs loose objects now (used by tests and `git mem gc`-like paths).
func (r *Repo) Repack() error {
	cmd := exec.Command("git", "--git-dir", r.dir, "repack", "-d", "-q")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git repack: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
