package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// looseLimit is how many loose objects (estimated like `git gc --auto`
// does, from one fan-out folder) trigger a background repack.
const looseLimit = 2000

// packLimit is how many packs trigger a background repack.
const packLimit = 12

// repackArgs is the background maintenance: a geometric roll-up. It packs
// the loose objects and combines the smaller packs into one, copying every
// object of the packs it rolls up, reachable or not, before it deletes them
// (`--stdin-packs`). So it is safe by construction beside a writer whose
// new pack main does not reference yet: `repack -a -d`, used before, kept
// only what the refs reached when it started and deleted such a pack (lost
// commits, issue 13). It is also incremental: the big pack of an old memory
// is left alone instead of being rewritten on every trigger.
var repackArgs = []string{"repack", "-d", "-q", "--geometric=2"}

func (r *Repo) countPacks() int {
	packs, _ := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "pack-*.pack"))
	return len(packs)
}

// maybeRepack packs loose objects and rolls up packs with the git CLI in a
// detached process when there are many: go-git never packs, and git's own
// `gc --auto` would otherwise start in the user's next git command. One
// runs at a time (flock on mem/pack.lock, held by the child).
func (r *Repo) maybeRepack() {
	if gitCLI() == "" || os.Getenv("GIT_MEM_AUTO_REPACK") == "0" {
		return
	}
	if r.countPacks() < packLimit && r.estimateLoose() < looseLimit {
		return
	}
	l, ok, err := TryLockFile(filepath.Join(r.MemDir(), "pack.lock"))
	if err != nil || !ok {
		return
	}
	l.Unlock()
	args := append([]string{"-c", `exec 9>"$1/mem/pack.lock" && flock -n 9 && shift && exec git --git-dir "$@"`,
		"repack", r.dir, r.dir}, repackArgs...)
	cmd := exec.Command("sh", args...)
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

// HoldPacks waits for a running repack or purge and keeps the next from
// starting until unlock: `git mem check` reads every object and runs git
// fsck, which reported a pack a background repack had just replaced
// ("packfile … index not opened", a heavy test under load).
func (r *Repo) HoldPacks(timeout time.Duration) (unlock func(), err error) {
	l, err := LockFile(filepath.Join(r.MemDir(), "pack.lock"), timeout)
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// Repack runs the maintenance repack now, in this process, waiting for a
// background one to finish first.
func (r *Repo) Repack() error {
	l, err := LockFile(filepath.Join(r.MemDir(), "pack.lock"), 10*time.Minute)
	if err != nil {
		return err
	}
	defer l.Unlock()
	cmd := exec.Command("git", append([]string{"--git-dir", r.dir}, repackArgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git repack: %v: %s", err, strings.TrimSpace(string(out)))
	}
	r.st.refresh()
	return nil
}

// leftoverAge is how old a temporary pack file must be before it counts as
// left by a killed writer (one being written is seconds old).
const leftoverAge = 15 * time.Minute

// Leftovers lists temporary files of killed writers and repacks under
// objects/pack (git mem's tmp_gitmem_* and git's own tmp_pack_*/tmp_idx_*).
func (r *Repo) Leftovers() []string {
	var out []string
	// One listing: every command opens the memory and calls this. Not git's
	// .tmp-<pid>-pack-* files: git reads one with its .idx as a pack (and
	// may have pruned the loose copies of its objects).
	dir := filepath.Join(r.dir, "objects", "pack")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "tmp_gitmem_") && !strings.HasPrefix(n, "tmp_pack_") && !strings.HasPrefix(n, "tmp_idx_") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > leftoverAge {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// RemoveLeftovers deletes what Leftovers lists. It runs only when it can
// take the objects level exclusively at once, i.e. while no git mem writer
// is writing a pack; git's own files are old enough not to be in use.
func (r *Repo) RemoveLeftovers() (removed int) {
	left := r.Leftovers()
	if len(left) == 0 {
		return 0
	}
	l, err := r.objectsExclusive(0)
	if err != nil {
		return 0
	}
	defer l.Unlock()
	for _, p := range left {
		if os.Remove(p) == nil {
			removed++
		}
	}
	return removed
}
