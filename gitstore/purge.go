package gitstore

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// PurgeReport says what Purge deleted.
type PurgeReport struct {
	PacksRemoved int `json:"packs_removed"`
	LooseRemoved int `json:"loose_removed"`
	Kept         int `json:"kept_new"` // objects written meanwhile, kept
	// HoldMS are the two moments the objects level was held exclusively
	// (what a writer can wait for), in milliseconds.
	HoldMS [2]float64 `json:"exclusive_ms"`
}

// Purge deletes every object that no ref reaches, loose or packed, and
// every reflog, so that `git cat-file` finds nothing of what a forget
// removed from main. It never blocks writers for long and cannot delete an
// object a concurrent writer needs:
//
//  1. under the objects level held exclusively (no writer has unreferenced
//     objects in flight: every writer holds it shared from its first object
//     to the move of main), it notes the packs and loose objects present and
//     the ref tips, and drops the reflogs;
//  2. with no lock, `git pack-objects --all` copies everything those refs
//     reach into one new pack; writers go on, writing new files;
//  3. under the exclusive level again it deletes the noted files, except the
//     new pack and any noted object that a ref tip written since step 1
//     reaches (`git rev-list --objects NEW --not OLD`: a writer may have
//     referenced an object that existed before without writing it again).
//
// Objects written after step 1 are never in the noted set, so they stay.
func (r *Repo) Purge(timeout time.Duration) (rep PurgeReport, err error) {
	if gitCLI() == "" {
		return rep, fmt.Errorf("purge: the git command is needed to repack the memory")
	}
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	// One repack at a time: a background roll-up would copy objects into a
	// pack this purge does not know about.
	pl, err := LockFile(filepath.Join(r.MemDir(), "pack.lock"), 10*time.Minute)
	if err != nil {
		return rep, err
	}
	defer pl.Unlock()

	l, err := r.objectsExclusive(timeout)
	if err != nil {
		return rep, err
	}
	held := time.Now()
	packs, _ := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "pack-*.pack"))
	// A killed git repack's temporary pack is a pack to git (packFS): its
	// objects are copied like the others' and it goes too. No git mem
	// repack runs now (pack.lock).
	tmps, _ := filepath.Glob(filepath.Join(r.dir, "objects", "pack", ".tmp-*-pack-*.pack"))
	packs = append(packs, tmps...)
	loose := looseObjects(r.dir)
	oldTips, err := r.refTips()
	if err != nil {
		l.Unlock()
		return rep, err
	}
	_ = os.RemoveAll(filepath.Join(r.dir, "logs"))
	l.Unlock()
	rep.HoldMS[0] = float64(time.Since(held).Microseconds()) / 1000
	if testHookPurge != nil {
		testHookPurge(r, 1)
	}

	newPack, err := r.packReachable(oldTips)
	if err != nil {
		return rep, err
	}
	if testHookPurge != nil {
		testHookPurge(r, 2)
	}

	l, err = r.objectsExclusive(timeout)
	if err != nil {
		return rep, err
	}
	held = time.Now()
	defer func() { l.Unlock(); rep.HoldMS[1] = float64(time.Since(held).Microseconds()) / 1000 }()
	newTips, err := r.refTips()
	if err != nil {
		return rep, err
	}
	keep, err := r.reachedSince(newTips, oldTips)
	if err != nil {
		return rep, err
	}
	for _, p := range packs {
		base := strings.TrimSuffix(p, ".pack")
		if filepath.Base(base) == "pack-"+newPack {
			continue
		}
		if h, _, ok := tmpPackHash(filepath.Base(p)); ok && h == newPack {
			continue
		}
		// .idx after the .pack: go-git and git list packs by their .pack.
		for _, ext := range []string{".pack", ".idx", ".rev", ".bitmap", ".keep", ".mtimes", ".promisor"} {
			_ = os.Remove(base + ext)
		}
		rep.PacksRemoved++
	}
	_ = os.Remove(filepath.Join(r.dir, "objects", "pack", "multi-pack-index"))
	for _, o := range loose {
		if keep[o] {
			rep.Kept++
			continue
		}
		if os.Remove(filepath.Join(r.dir, "objects", o[:2], o[2:])) == nil {
			rep.LooseRemoved++
		}
	}
	syncDir(filepath.Join(r.dir, "objects", "pack"))
	r.st.refresh()
	return rep, nil
}

// testHookPurge runs after a purge's step 1 (step 1: the files are noted)
// and after its step 2 (step 2: the new pack is written), with no lock
// held but the caller's and pack.lock (race tests).
var testHookPurge func(r *Repo, step int)

// looseObjects lists the loose object ids.
func looseObjects(dir string) []string {
	var out []string
	fans, _ := filepath.Glob(filepath.Join(dir, "objects", "[0-9a-f][0-9a-f]"))
	for _, f := range fans {
		ents, _ := os.ReadDir(f)
		for _, e := range ents {
			if len(e.Name()) == 38 && !strings.HasPrefix(e.Name(), "tmp") {
				out = append(out, filepath.Base(f)+e.Name())
			}
		}
	}
	return out
}

// refTips lists the object ids every ref points at.
func (r *Repo) refTips() ([]string, error) {
	out, err := exec.Command("git", "--git-dir", r.dir, "for-each-ref", "--format=%(objectname)").Output()
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	return strings.Fields(string(out)), nil
}

// packReachable writes one pack of everything tips reach and returns its
// hash. It deletes nothing.
func (r *Repo) packReachable(tips []string) (string, error) {
	if len(tips) == 0 {
		return "", nil
	}
	cmd := exec.Command("git", "--git-dir", r.dir, "pack-objects", "--revs", "--delta-base-offset", "-q",
		filepath.Join(r.dir, "objects", "pack", "pack"))
	cmd.Stdin = strings.NewReader(strings.Join(tips, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git pack-objects: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// reachedSince lists the objects that newTips reach and oldTips do not.
func (r *Repo) reachedSince(newTips, oldTips []string) (map[string]bool, error) {
	old := map[string]bool{}
	for _, t := range oldTips {
		old[t] = true
	}
	var args []string
	for _, t := range newTips {
		if !old[t] {
			args = append(args, t)
		}
	}
	keep := map[string]bool{}
	if len(args) == 0 {
		return keep, nil
	}
	for _, t := range oldTips {
		args = append(args, "^"+t)
	}
	cmd := exec.Command("git", "--git-dir", r.dir, "rev-list", "--objects", "--stdin")
	cmd.Stdin = strings.NewReader(strings.Join(args, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git rev-list: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 {
			keep[f[0]] = true
		}
	}
	return keep, sc.Err()
}
