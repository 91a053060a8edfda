package gitstore

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// ReadPaths answers as ReadPath does, one by one, through git and through
// go-git alone: blobs, absent files, a folder, an empty blob, and a commit
// that is not there (an error).
func TestReadPathsMatchesReadPath(t *testing.T) {
	r := newRepo(t)
	var es []Entry
	for i := 0; i < 30; i++ { // a pack
		es = append(es, testEntry(fmt.Sprintf("p-%d", i)))
	}
	res, err := r.Append(es, 0)
	if err != nil {
		t.Fatal(err)
	}
	loose := testEntry("l-1")
	loose.Blob = nil                                           // an empty blob
	res2, err := r.Append([]Entry{loose, testEntry("l-2")}, 0) // loose objects
	if err != nil {
		t.Fatal(err)
	}
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
