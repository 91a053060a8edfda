package memory

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/gitstore"
)

func TestRemoveRemote(t *testing.T) {
	m := newMemory(t)
	for _, n := range []string{"origin", "laptop"} {
		if err := m.AddRemote(n, "/srv/"+n+".git"); err != nil {
			t.Fatal(err)
		}
	}
	st := m.Repo.Git().Storer
	head := plumbing.NewHash("1111111111111111111111111111111111111111")
	for _, r := range []string{"refs/remotes/origin/main", "refs/remotes/origin/old", "refs/remotes/laptop/main"} {
		if err := st.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(r), head)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.RemoveRemote("origin"); err != nil {
		t.Fatal(err)
	}
	rs, err := m.Remotes()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rs["origin"]; ok || rs["laptop"] != "/srv/laptop.git" {
		t.Errorf("remotes after remove: %v", rs)
	}
	for r, want := range map[string]bool{"refs/remotes/origin/main": false, "refs/remotes/origin/old": false, "refs/remotes/laptop/main": true} {
		_, err := st.Reference(plumbing.ReferenceName(r))
		if (err == nil) != want {
			t.Errorf("%s present = %v, want %v", r, err == nil, want)
		}
	}
	if err := m.RemoveRemote("origin"); !errors.Is(err, gitstore.ErrNoRemote) {
		t.Errorf("removing again: %v, want ErrNoRemote", err)
	}
}
