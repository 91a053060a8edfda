package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/internal/packtest"
)

// packIDs lists the object ids of every pack of dir (git show-index).
func packIDs(t *testing.T, dir string) []string {
	t.Helper()
	idxs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.idx"))
	var ids []string
	for _, p := range idxs {
		cmd := exec.Command("sh", "-c", `git show-index < "$1"`, "sh", p)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("show-index %s: %v", p, err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(l); len(f) >= 2 {
				ids = append(ids, f[1])
			}
		}
	}
	sort.Strings(ids)
	return ids
}

func packNames(dir string) []string {
	ps, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*"))
	return ps
}

// A pack with an object written twice (header count > index count, as a
// forget before e544dbc wrote them) is found, and RepairPacks rewrites it
// with each object once: git reads it again, every object is kept, every
// exchange reads back. A healthy repo is left as it is.
func TestBadPackFoundAndMended(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ int // how many of the newest packs to break
	}{
		{"healthy", 0},
		{"one bad pack", 1},
		{"two bad packs", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			var bases []string
			for b := 0; b < 3; b++ {
				var es []Entry
				for i := 0; i < 25; i++ {
					es = append(es, testEntry(fmt.Sprintf("b%d-%d", b, i)))
				}
				if _, err := r.Append(es, time.Minute); err != nil {
					t.Fatal(err)
				}
				nb, err := packtest.Newest(r.Dir())
				if err != nil {
					t.Fatal(err)
				}
				bases = append(bases, nb)
			}
			before := packIDs(t, r.Dir())
			for _, b := range bases[len(bases)-tc.break_:] {
				if _, err := packtest.Duplicate(b); err != nil {
					t.Fatal(err)
				}
			}
			bad := r.BadPacks()
			if len(bad) != tc.break_ {
				t.Fatalf("BadPacks found %d, want %d: %+v", len(bad), tc.break_, bad)
			}
			for _, b := range bad {
				if b.Header != b.Index+1 {
					t.Fatalf("bad pack %+v: want header = index + 1", b)
				}
			}
			if tc.break_ > 0 {
				out, err := exec.Command("git", "--git-dir", r.Dir(), "fsck", "--strict").CombinedOutput()
				if err == nil || !strings.Contains(string(out), "claims to have") {
					t.Fatalf("git reads the broken pack: %v\n%s", err, out)
				}
			}
			names := packNames(r.Dir())
			mended, err := r.RepairPacks()
			if err != nil {
				t.Fatal(err)
			}
			if len(mended) != tc.break_ {
				t.Fatalf("mended %d, want %d", len(mended), tc.break_)
			}
			if tc.break_ == 0 && fmt.Sprint(packNames(r.Dir())) != fmt.Sprint(names) {
				t.Fatalf("a healthy repo's packs changed:\n%v\n%v", names, packNames(r.Dir()))
			}
			if b := r.BadPacks(); len(b) != 0 {
				t.Fatalf("still bad: %+v", b)
			}
			fsck(t, r.Dir())
			if after := packIDs(t, r.Dir()); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("objects changed: %d before, %d after", len(before), len(after))
			}
			r2, err := Open(r.Dir()) // a fresh pack list
			if err != nil {
				t.Fatal(err)
			}
			ids := countCommits(t, r2)
			head, _ := r2.Head()
			for b := 0; b < 3; b++ {
				for i := 0; i < 25; i++ {
					e := testEntry(fmt.Sprintf("b%d-%d", b, i))
					if ids[fmt.Sprintf("b%d-%d", b, i)] != 1 {
						t.Fatalf("exchange b%d-%d: %d commits", b, i, ids[fmt.Sprintf("b%d-%d", b, i)])
					}
					data, ok, err := r2.ReadPath(head, e.Path)
					if err != nil || !ok || string(data) != string(e.Blob) {
						t.Fatalf("%s: %q %v %v", e.Path, data, ok, err)
					}
				}
			}
		})
	}
}

// Writers appending while the bad pack is replaced lose nothing: the new
// pack holds every object before the old one goes.
func TestRepairPacksBesideWriters(t *testing.T) {
	r := newRepo(t)
	for b := 0; b < 4; b++ {
		var es []Entry
		for i := 0; i < 25; i++ {
			es = append(es, testEntry(fmt.Sprintf("old%d-%d", b, i)))
		}
		if _, err := r.Append(es, time.Minute); err != nil {
			t.Fatal(err)
		}
		nb, _ := packtest.Newest(r.Dir())
		if _, err := packtest.Duplicate(nb); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 2)
	for p := 0; p < 2; p++ {
		go func(p int) {
			out, err := writer(t, r.Dir(), fmt.Sprintf("w%d", p), 30, 1).CombinedOutput()
			if err != nil {
				err = fmt.Errorf("writer %d: %v: %s", p, err, out)
			}
			done <- err
		}(p)
	}
	time.Sleep(20 * time.Millisecond)
	mended, err := r.RepairPacks()
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < 2; p++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if len(mended) != 4 {
		t.Fatalf("mended %d packs, want 4", len(mended))
	}
	fsck(t, r.Dir())
	r2, err := Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	ids := countCommits(t, r2)
	if len(ids) != 100+60 {
		t.Fatalf("%d exchanges, want 160", len(ids))
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("%s stored %d times", id, n)
		}
	}
}

// A bad pack whose extra entry holds an object its index does not list
// (not a duplicate) is left as it is: the repair would lose that object.
func TestRepairPacksKeepsAPackWithAnUnlistedObject(t *testing.T) {
	r := newRepo(t)
	var bases []string
	for b := 0; b < 2; b++ {
		var es []Entry
		for i := 0; i < 25; i++ {
			es = append(es, testEntry(fmt.Sprintf("u%d-%d", b, i)))
		}
		if _, err := r.Append(es, time.Minute); err != nil {
			t.Fatal(err)
		}
		nb, err := packtest.Newest(r.Dir())
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, nb)
	}
	nb, err := packtest.AppendEntry(bases[1], bases[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(r.BadPacks()) != 1 {
		t.Fatalf("BadPacks: %+v", r.BadPacks())
	}
	names := packNames(r.Dir())
	_, err = r.RepairPacks()
	if err == nil || !strings.Contains(err.Error(), "does not list") {
		t.Fatalf("RepairPacks: %v, want a refusal", err)
	}
	if fmt.Sprint(packNames(r.Dir())) != fmt.Sprint(names) {
		t.Fatalf("packs changed:\n%v\n%v", names, packNames(r.Dir()))
	}
	if _, err := os.Stat(nb + ".pack"); err != nil {
		t.Fatal(err)
	}
}
