package gitstore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// packAndLoose is a repo with 30 exchanges in a pack (es, commits res)
// and then two loose ones (loose, an empty blob, and another: commits res2).
func packAndLoose(t *testing.T) (r *Repo, es []Entry, loose Entry, res, res2 AppendResult) {
	t.Helper()
	r = newRepo(t)
	for i := 0; i < 30; i++ { // a pack
		es = append(es, testEntry(fmt.Sprintf("p-%d", i)))
	}
	res, err := r.Append(es, 0)
	if err != nil {
		t.Fatal(err)
	}
	loose = testEntry("l-1")
	loose.Blob = nil                                          // an empty blob
	res2, err = r.Append([]Entry{loose, testEntry("l-2")}, 0) // loose objects
	if err != nil {
		t.Fatal(err)
	}
	return r, es, loose, res, res2
}

// ReadPaths answers as ReadPath does, one by one, through git and through
// go-git alone: blobs, absent files, a folder, an empty blob, and a commit
// that is not there (an error).
func TestReadPathsMatchesReadPath(t *testing.T) {
	r, es, loose, res, res2 := packAndLoose(t)
	first, last := res.Commits[0], res2.Commits[1]
	okReqs := []PathAt{
		{first, es[0].Path},
		{first, es[1].Path}, // not yet in the first commit
		{last, es[1].Path},
		{last, loose.Path},
		{last, "ex/1"},           // a folder
		{last, "ex/9/none.json"}, // absent
		{last, "no/such/dir/x"},  // absent folder
		{res.Commits[29], es[29].Path},
		{last, es[29].Path},
	}
	for _, cat := range []bool{true, false} {
		t.Run(fmt.Sprintf("catfile=%v", cat), func(t *testing.T) {
			defer func(v bool) { useCatFile = v }(useCatFile)
			useCatFile = cat
			data, ok, err := r.ReadPaths(okReqs)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range okReqs {
				want, wok, err := r.ReadPath(q.Commit, q.Path)
				if err != nil {
					t.Fatal(err)
				}
				if ok[i] != wok || !bytes.Equal(data[i], want) {
					t.Errorf("%s:%s = %q %v, ReadPath says %q %v", q.Commit, q.Path, data[i], ok[i], want, wok)
				}
			}
			if !ok[0] || ok[1] || !ok[3] || len(data[3]) != 0 || ok[4] || ok[5] {
				t.Errorf("ok = %v", ok)
			}
			bad := append([]PathAt{{last, es[0].Path}}, PathAt{plumbing.NewHash("1234567890123456789012345678901234567890"), es[0].Path})
			if _, _, err := r.ReadPaths(bad); err == nil {
				t.Error("a missing commit read without an error")
			}
		})
	}
}

// CommitsSince gives what a go-git Walk from start that stops at last
// gives, less last's ancestors that merges bring in, for every pair of
// commits of a history with merges (and for last = none, and last not in
// start's history).
func TestCommitsSinceMatchesWalk(t *testing.T) {
	r := newRepo(t)
	git := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"--git-dir", r.Dir()}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	tree := git(nil, "mktree")
	n := 0
	commit := func(parents ...string) string {
		n++
		args := []string{"commit-tree", tree, "-m", fmt.Sprint("c", n)}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		return git([]string{"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"}, args...)
	}
	c1 := commit()
	c2 := commit(c1)
	a3, b3 := commit(c2), commit(c2)
	a4, b4 := commit(a3), commit(b3)
	m5 := commit(a4, b4) // a sync's merge
	c6 := commit(m5)
	x7 := commit(c6)
	y7 := commit(c6)
	m8 := commit(x7, y7, b4) // an octopus, one parent already merged
	c9 := commit(m8)
	other := commit() // another root, not in main's history
	all := []string{c1, c2, a3, b3, a4, b4, m5, c6, x7, y7, m8, c9, other}

	// want is memory's pendingCommits before CommitsSince, newest first.
	want := func(start, last plumbing.Hash) ([]plumbing.Hash, bool) {
		var walked []plumbing.Hash
		reached := last.IsZero()
		if err := r.Walk(start, func(h plumbing.Hash) bool {
			if h == last {
				reached = true
				return true
			}
			return false
		}, func(c *object.Commit) error {
			walked = append(walked, c.Hash)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if last.IsZero() || !reached {
			return walked, reached
		}
		old := map[plumbing.Hash]bool{}
		if err := r.Walk(last, nil, func(c *object.Commit) error { old[c.Hash] = true; return nil }); err != nil {
			t.Fatal(err)
		}
		kept := walked[:0]
		for _, h := range walked {
			if !old[h] {
				kept = append(kept, h)
			}
		}
		return kept, reached
	}
	for _, s := range all {
		for _, l := range append([]string{""}, all...) {
			start, last := plumbing.NewHash(s), plumbing.ZeroHash
			if l != "" {
				last = plumbing.NewHash(l)
			}
			wantH, wantReached := want(start, last)
			got, reached, err := r.CommitsSince(start, last)
			if err != nil {
				t.Fatal(err)
			}
			var gotH []plumbing.Hash
			for _, c := range got {
				gotH = append(gotH, c.Hash)
			}
			if reached != wantReached || wantReached && !slices.Equal(gotH, wantH) {
				t.Errorf("CommitsSince(%.7s, %.7s) = %.7s %v, want %.7s %v", s, l, gotH, reached, wantH, wantReached)
			}
		}
	}
}
