package gitstore

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"
)

// A ref written through a memory's storage (a fetch's tracking ref, sync's
// restore) replaces the file: a reader that opened the old file reads the
// whole old value, so no kill can leave the ref empty. go-git's own write
// truncates the file in place, and such a reader read the new value (or,
// killed in between, nothing: CI's kill loop found refs/remotes/origin/main
// empty, "invalid sha1 pointer 0000…").
func TestRefsAreReplacedNotRewritten(t *testing.T) {
	r := newRepo(t)
	var tips []plumbing.Hash
	for _, id := range []string{"a1", "b2", "c3"} {
		if _, err := r.Append([]Entry{testEntry(id)}, time.Minute); err != nil {
			t.Fatal(err)
		}
		h, err := r.Head()
		if err != nil {
			t.Fatal(err)
		}
		tips = append(tips, h)
	}
	track := plumbing.ReferenceName("refs/remotes/origin/main")
	path := filepath.Join(r.dir, "refs", "remotes", "origin", "main")
	set := func(h plumbing.Hash, old *plumbing.Reference) error {
		return r.st.CheckAndSetReference(plumbing.NewHashReference(track, h), old)
	}
	if err := set(tips[0], nil); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := r.st.SetReference(plumbing.NewHashReference(track, tips[1])); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(held)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != tips[0].String() {
		t.Errorf("the file a reader held reads %q, want the old value %s whole", got, tips[0])
	}
	for _, c := range []struct {
		name    string
		to      plumbing.Hash
		old     *plumbing.Reference
		wantErr error
		want    plumbing.Hash
	}{
		{"old matches", tips[2], plumbing.NewHashReference(track, tips[1]), nil, tips[2]},
		{"old is stale", tips[0], plumbing.NewHashReference(track, tips[1]), storage.ErrReferenceHasChanged, tips[2]},
		{"no old given", tips[1], nil, nil, tips[1]},
	} {
		if err := set(c.to, c.old); !errors.Is(err, c.wantErr) {
			t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
		}
		ref, err := r.st.Reference(track)
		if err != nil || ref.Hash() != c.want {
			t.Errorf("%s: ref %v (%v), want %s", c.name, ref, err, c.want)
		}
	}
	// A symbolic ref is go-git's to write, as before.
	if err := r.st.SetReference(plumbing.NewSymbolicReference("refs/remotes/origin/HEAD", track)); err != nil {
		t.Fatal(err)
	}
	if ref, err := r.st.Reference("refs/remotes/origin/HEAD"); err != nil || ref.Target() != track {
		t.Errorf("symbolic ref: %v, %v", ref, err)
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "main" && e.Name() != "HEAD" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	fsck(t, r.dir)
}
