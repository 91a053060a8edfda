package gitstore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ReadPathsPacked answers as ReadPath does whenever it says it could
// (complete), from a pack and loose objects and from a repack with deltas,
// and says it could not for what it does not read (a folder, a file on the
// way, the zero commit, a commit that is not there): its caller then reads
// through ReadPaths.
func TestReadPathsPacked(t *testing.T) {
	r, es, loose, res, res2 := packAndLoose(t)
	first, last := res.Commits[0], res2.Commits[1]
	cases := []struct {
		req      PathAt
		complete bool
	}{
		{PathAt{first, es[0].Path}, true},
		{PathAt{first, es[1].Path}, true}, // not yet in the first commit
		{PathAt{last, es[1].Path}, true},
		{PathAt{last, loose.Path}, true}, // loose, empty
		{PathAt{res2.Commits[0], loose.Path}, true},
		{PathAt{res.Commits[29], es[29].Path}, true},
		{PathAt{last, "ex/9/none.json"}, true}, // absent
		{PathAt{last, "no/such/dir/x"}, true},  // absent folder
		{PathAt{last, "ex/1"}, false},          // a folder
		{PathAt{last, es[1].Path + "/x"}, false},
		{PathAt{last, "ex//" + es[1].Path}, false},
		{PathAt{last, ""}, false},
		{PathAt{plumbing.ZeroHash, es[1].Path}, false},
		{PathAt{plumbing.NewHash("1234567890123456789012345678901234567890"), es[0].Path}, false},
	}
	check := func(t *testing.T) {
		var all []PathAt
		for _, c := range cases {
			data, ok, complete := r.ReadPathsPacked([]PathAt{c.req})
			if complete != c.complete {
				t.Errorf("%s:%s: complete %v, want %v", c.req.Commit, c.req.Path, complete, c.complete)
				continue
			}
			if !complete {
				continue
			}
			all = append(all, c.req)
			want, wok, err := r.ReadPath(c.req.Commit, c.req.Path)
			if err != nil {
				t.Fatal(err)
			}
			if ok[0] != wok || !bytes.Equal(data[0], want) {
				t.Errorf("%s:%s = %q %v, ReadPath says %q %v", c.req.Commit, c.req.Path, data[0], ok[0], want, wok)
			}
		}
		data, ok, complete := r.ReadPathsPacked(all)
		want, wok, err := r.ReadPaths(all)
		if err != nil || !complete {
			t.Fatalf("all: complete %v, ReadPaths: %v", complete, err)
		}
		for i := range all {
			if ok[i] != wok[i] || !bytes.Equal(data[i], want[i]) {
				t.Errorf("all, %d: %q %v, ReadPaths says %q %v", i, data[i], ok[i], want[i], wok[i])
			}
		}
		// The requests are read by two goroutines (even and odd
		// positions): a bad one in either makes the batch incomplete.
		bad := cases[len(cases)-1].req
		for _, batch := range [][]PathAt{append(slices.Clone(all), bad), append([]PathAt{bad}, all...), {all[0], bad}} {
			if _, _, complete := r.ReadPathsPacked(batch); complete {
				t.Errorf("a batch of %d with a missing commit is complete", len(batch))
			}
		}
	}
	t.Run("pack and loose", check)
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=250").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if loose, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "??", "*")); len(loose) > 0 {
		if out, err := exec.Command("git", "--git-dir", r.Dir(), "prune-packed").CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	t.Run("repacked", check) // objectOnce: the repo does not keep its packs
	// Alone on a fresh set, a batch read by a repo that does not keep its
	// packs keeps no delta base (objectOnce); one that keeps them (the
	// warm search process) resolves its chains through object, which does.
	batch := []PathAt{{last, es[1].Path}, {res.Commits[29], es[29].Path}, {first, es[0].Path}, {last, es[7].Path}}
	for _, keep := range []bool{false, true} {
		if keep {
			r.KeepPacks()
		}
		r.ReleasePacks()
		ps := r.st.currentPackSet() // the set the batch reads, held here
		if _, _, complete := r.ReadPathsPacked(batch); !complete {
			t.Fatalf("keep %v: the batch is not complete", keep)
		}
		ps.mu.Lock()
		kept := len(ps.bases)
		ps.mu.Unlock()
		if (kept > 0) != keep {
			t.Fatalf("keep %v: the pack set keeps %d delta bases", keep, kept)
		}
	}
	t.Run("repacked, packs kept", check)
	if out, _ := exec.Command("git", "--git-dir", r.Dir(), "verify-pack", "-v", listPacks(r.Dir())[0]).Output(); !bytes.Contains(out, []byte(" tree ")) ||
		!strings.Contains(string(out), "chain length") {
		t.Fatalf("the repack made no deltas:\n%s", out)
	}
}

// A repo that keeps its packs (the warm search process) never reads from a
// pack a purge deleted: an object the purge removed is not found (the
// caller's ReadPaths then fails as git does), whether the next read comes
// before the holder's ReleaseStalePacks or after; and once the old set is
// let go of, the collection unmaps it, so the purged pack is not kept on
// disk.
func TestReadPathsPackedAfterPurge(t *testing.T) {
	for _, readFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("readFirst=%v", readFirst), func(t *testing.T) { readAfterPurge(t, readFirst) })
	}
}

func readAfterPurge(t *testing.T, readFirst bool) {
	r := newRepo(t)
	r.KeepPacks()
	var es []Entry
	for i := 0; i < 2*packThreshold; i++ {
		es = append(es, testEntry(fmt.Sprintf("p-%d", i)))
	}
	if _, err := r.Append(es, 0); err != nil {
		t.Fatal(err)
	}
	keep, _ := r.Head()
	gone := Entry{Path: "ex/z/secret.json", Blob: []byte(`{"secret":"hunter2-purge-me"}`), Message: "secret\n\nExchange: secret\n"}
	res, err := r.Append([]Entry{gone}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Everything in one pack, the secret too.
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "repack", "-a", "-d", "-q").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "prune-packed").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	old := listPacks(r.Dir())
	if len(old) != 1 {
		t.Fatalf("packs %q", old)
	}
	oldPack := strings.TrimSuffix(old[0], ".idx") + ".pack"
	mapped := func() bool {
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip("no /proc/self/maps")
		}
		return strings.Contains(string(maps), oldPack)
	}
	req := []PathAt{{res.Commits[0], gone.Path}, {keep, es[3].Path}}
	data, ok, complete := r.ReadPathsPacked(req)
	if !complete || !ok[0] || !bytes.Equal(data[0], gone.Blob) {
		t.Fatalf("before: %q %v %v", data, ok, complete)
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	if !mapped() {
		t.Fatal("the kept packs were unmapped by a collection")
	}
	if r.ReleaseStalePacks() {
		t.Fatal("packs let go of while current")
	}

	// Main moves back, as forget does, and the purge (another process's)
	// deletes the pack.
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "update-ref", "refs/heads/main", keep.String()).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	other, err := Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Purge(time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(oldPack); !os.IsNotExist(err) {
		t.Fatalf("the purge left the old pack: %v", err)
	}
	if readFirst {
		if _, _, complete := r.ReadPathsPacked(req[:1]); complete {
			t.Fatal("the purged exchange was read")
		}
	} else if !r.ReleaseStalePacks() {
		t.Fatal("the purged packs were not let go of")
	}
	for i := 0; i < 5 && mapped(); i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if mapped() {
		t.Fatal("the purged pack is still mapped")
	}
	if _, _, complete := r.ReadPathsPacked(req[:1]); complete {
		t.Fatal("the purged exchange was read")
	}
	if _, _, err := r.ReadPaths(req[:1]); err == nil {
		t.Fatal("ReadPaths found the purged commit")
	}
	data, ok, complete = r.ReadPathsPacked(req[1:])
	if !complete || !ok[0] || !bytes.Equal(data[0], es[3].Blob) {
		t.Fatalf("after: %q %v %v", data, ok, complete)
	}
}

// Packs kept (KeepPacks) survive collections until ReleasePacks, then the
// next collection unmaps them and the next read maps them again.
func TestKeptPacksReleased(t *testing.T) {
	r := newRepo(t)
	r.KeepPacks()
	var es []Entry
	for i := 0; i < 2*packThreshold; i++ {
		es = append(es, testEntry(fmt.Sprintf("k-%d", i)))
	}
	res, err := r.Append(es, 0)
	if err != nil {
		t.Fatal(err)
	}
	packs := listPacks(r.Dir())
	if len(packs) != 1 {
		t.Fatalf("packs %q", packs)
	}
	pack := strings.TrimSuffix(packs[0], ".idx") + ".pack"
	mapped := func() bool {
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip("no /proc/self/maps")
		}
		return strings.Contains(string(maps), pack)
	}
	read := func() {
		t.Helper()
		data, ok, complete := r.ReadPathsPacked([]PathAt{{res.Commits[5], es[5].Path}})
		if !complete || !ok[0] || !bytes.Equal(data[0], es[5].Blob) {
			t.Fatalf("read: %q %v %v", data, ok, complete)
		}
	}
	gc := func() {
		for i := 0; i < 5; i++ {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	read()
	gc()
	if !mapped() {
		t.Fatal("kept packs unmapped by a collection")
	}
	r.ReleasePacks()
	gc()
	if mapped() {
		t.Fatal("released packs still mapped")
	}
	read()
	if !mapped() {
		t.Fatal("the next read did not map the pack")
	}
}
