package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// An object in no mapped pack and not loose is answered "not found"
// without go-git decoding the pack indexes (objectStore.absent); every
// other case is found, as go-git finds it: a loose object, a pack written
// after the store mapped its set, an object only in an alternate store.
func TestMissingObjectIsNotFoundWithoutGoGitIndexes(t *testing.T) {
	r, _, _, res, res2 := packAndLoose(t)
	packed, loose := res.Commits[0], res2.Commits[1]
	missing := plumbing.NewHash(strings.Repeat("ab", 20))
	// Another repo whose objects this one does not have.
	other := newRepo(t)
	appendIDs(t, other, "o-1", "o-2")
	otherHead, err := other.Head()
	if err != nil {
		t.Fatal(err)
	}
	gitOut(t, "--git-dir", other.Dir(), "repack", "-q", "-a", "-d")
	for _, c := range []struct {
		name    string
		id      plumbing.Hash
		prepare func(t *testing.T, s *objectStore)
		found   bool
		goGit   string // "yes": go-git listed its packs to answer, "no": it did not, "": either
	}{
		{"packed", packed, nil, true, "no"},
		{"loose", loose, nil, true, "yes"},
		{"missing", missing, nil, false, "no"},
		{"in a pack added after the set was mapped", otherHead, func(t *testing.T, s *objectStore) {
			s.packSet(nil) // mapped before the pack comes
			gitOut(t, "--git-dir", r.Dir(), "fetch", "-q", other.Dir(), "main:refs/heads/other")
		}, true, ""},
		{"only in an alternate store", otherHead, func(t *testing.T, s *objectStore) {
			alt := filepath.Join(r.Dir(), "objects", "info", "alternates")
			if err := os.MkdirAll(filepath.Dir(alt), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(alt, []byte(filepath.Join(other.Dir(), "objects")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(alt) })
		}, true, "yes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fresh, err := Open(r.Dir()) // a store that has listed nothing yet
			if err != nil {
				t.Fatal(err)
			}
			s := fresh.st
			if c.prepare != nil {
				c.prepare(t, s)
			}
			_, err = s.EncodedObject(plumbing.AnyObject, c.id)
			herr := s.HasEncodedObject(c.id)
			if c.found && (err != nil || herr != nil) {
				t.Fatalf("not found: %v / %v", err, herr)
			}
			if !c.found && (!errors.Is(err, plumbing.ErrObjectNotFound) || !errors.Is(herr, plumbing.ErrObjectNotFound)) {
				t.Fatalf("want not found, got %v / %v", err, herr)
			}
			if got := s.listed.Load(); c.goGit != "" && got != (c.goGit == "yes") {
				t.Fatalf("go-git listed its packs: %v, want %s", got, c.goGit)
			}
		})
	}
}
