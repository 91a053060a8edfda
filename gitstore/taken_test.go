package gitstore

import (
	"reflect"
	"testing"
)

// TestAppendTaken: an entry whose path holds its own blob is Present; one
// whose path holds another blob (stored before, or earlier in the batch) is
// not stored and is listed in Taken, for the caller to classify; so is one
// whose Needs path does not hold NeedsBlob (in main or from an earlier
// entry of the batch).
func TestAppendTaken(t *testing.T) {
	other := func(id string) Entry {
		e := testEntry(id)
		e.Blob = []byte(`{"id":"` + id + `","other":true}`)
		return e
	}
	needs := func(id string, on Entry) Entry {
		e := testEntry(id)
		e.Needs, e.NeedsBlob = on.Path, BlobID(on.Blob)
		return e
	}
	for _, tc := range []struct {
		name           string
		before, batch  []Entry
		added, present int
		taken          []int
	}{
		{"same blob stored", []Entry{testEntry("a-1")}, []Entry{testEntry("b-1"), testEntry("a-1")}, 1, 1, nil},
		{"other blob stored", []Entry{testEntry("a-1")}, []Entry{testEntry("b-1"), other("a-1"), testEntry("c-1")}, 2, 0, []int{1}},
		{"other blob earlier in the batch", nil, []Entry{testEntry("a-1"), other("a-1"), testEntry("a-1")}, 1, 1, []int{1}},
		{"needs: the blob stored", []Entry{testEntry("a-1")}, []Entry{needs("c-2", testEntry("a-1"))}, 1, 0, nil},
		{"needs: the blob earlier in the batch", nil, []Entry{testEntry("a-1"), needs("c-2", testEntry("a-1"))}, 2, 0, nil},
		{"needs: nothing there", nil, []Entry{testEntry("b-1"), needs("c-2", testEntry("a-1"))}, 1, 0, []int{1}},
		{"needs: another blob stored", []Entry{other("a-1")}, []Entry{needs("c-2", testEntry("a-1")), testEntry("b-1")}, 1, 0, []int{0}},
		{"needs: another blob earlier in the batch", nil, []Entry{other("a-1"), needs("c-2", testEntry("a-1"))}, 1, 0, []int{1}},
		{"needs: the entry's own blob stored", []Entry{testEntry("c-2")}, []Entry{needs("c-2", testEntry("a-1"))}, 0, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			if len(tc.before) > 0 {
				if _, err := r.Append(tc.before, 0); err != nil {
					t.Fatal(err)
				}
			}
			res, err := r.Append(tc.batch, 0)
			if err != nil {
				t.Fatal(err)
			}
			if res.Added != tc.added || res.Present != tc.present || !reflect.DeepEqual(res.Taken, tc.taken) {
				t.Fatalf("%+v, want added %d present %d taken %v", res, tc.added, tc.present, tc.taken)
			}
			for _, i := range tc.taken {
				if !res.Commits[i].IsZero() {
					t.Fatalf("taken entry %d committed", i)
				}
			}
			fsck(t, r.Dir())
		})
	}
}
