package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"

	"github.com/gitmem/git-mem/internal/atomicfile"
)

// go-git writes a loose ref in place: it opens the file with O_TRUNC (or
// truncates it after reading the old value) and then writes the new one.
// A kill between the two leaves an empty ref file, which git reads as a
// broken ref ("invalid sha1 pointer 0000…" from fsck): the kill loop of
// CI saw it on refs/remotes/origin/main after a sync killed in its fetch.
// So every hash ref written through a memory's storage (the fetch's
// tracking refs, sync's restore) goes through a temporary file renamed
// over the ref, as git itself and casMain do: a reader, or the next
// command after a kill, sees the old ref or the new one, never a part.

// SetReference writes ref atomically (symbolic refs: go-git's own write).
func (s *objectStore) SetReference(ref *plumbing.Reference) error {
	return s.CheckAndSetReference(ref, nil)
}

// CheckAndSetReference writes ref atomically when the ref is still old (nil:
// whatever it is). The check and the rename are not one step: the refs
// written here (tracking refs) have one writer at a time, the sync holding
// mem/sync.lock.
func (s *objectStore) CheckAndSetReference(ref, old *plumbing.Reference) error {
	if ref == nil || ref.Type() != plumbing.HashReference {
		return s.Storage.CheckAndSetReference(ref, old)
	}
	if old != nil {
		cur, err := s.Storage.Reference(old.Name())
		if err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
			return err
		}
		if err == nil && cur.Hash() != old.Hash() {
			return storage.ErrReferenceHasChanged
		}
	}
	return writeLooseRef(s.dir, ref.Name(), ref.Hash())
}

// writeLooseRef points the loose ref name of the git dir at h through a
// synced temporary file renamed over it (its name starts with a dot, which
// git never reads as a ref).
func writeLooseRef(dir string, name plumbing.ReferenceName, h plumbing.Hash) error {
	p := filepath.Join(dir, filepath.FromSlash(string(name)))
	return atomicfile.Write(p, func(f *os.File) error {
		if _, err := f.WriteString(h.String() + "\n"); err != nil {
			return err
		}
		return f.Sync()
	})
}

// DamagedTrackingRefs lists the loose refs under refs/remotes/ and
// refs/mem/remotes/ that hold no object id: written in place by a version
// before session 31 and killed halfway (empty), or damaged otherwise. git
// fsck fails on them and a sync cannot read what the remote held.
func (r *Repo) DamagedTrackingRefs() []string {
	var bad []string
	for _, top := range []string{"refs/remotes", "refs/mem/remotes"} {
		root := filepath.Join(r.dir, filepath.FromSlash(top))
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			s := strings.TrimSpace(string(b))
			if plumbing.IsHash(s) || strings.HasPrefix(s, "ref: ") {
				return nil
			}
			if rel, err := filepath.Rel(r.dir, p); err == nil {
				bad = append(bad, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	return bad
}

// DropDamagedTrackingRefs removes the refs DamagedTrackingRefs lists. They
// only record what a remote held at the last sync: without one, the next
// sync of that remote reads the remote as a first sync does (a union
// merge, which drops nothing), and writes the ref again. The caller holds
// mem/sync.lock or is check --repair; main and the tombstones are never
// touched.
func (r *Repo) DropDamagedTrackingRefs() ([]string, error) {
	bad := r.DamagedTrackingRefs()
	for _, name := range bad {
		if err := os.Remove(filepath.Join(r.dir, filepath.FromSlash(name))); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("remove damaged ref %s: %w", name, err)
		}
	}
	return bad, nil
}
