package gitstore

import (
	"bytes"
	"crypto/sha1"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func hashOf(s string) plumbing.Hash { return plumbing.Hash(sha1.Sum([]byte(s))) }

func hashesOf(names ...string) []plumbing.Hash {
	out := make([]plumbing.Hash, len(names))
	for i, n := range names {
		out[i] = hashOf(n)
	}
	return out
}

func setOf(sorted []plumbing.Hash, more ...plumbing.Hash) commitSet {
	s := commitSet{sorted: slices.SortedFunc(slices.Values(sorted), compareHash), more: map[plumbing.Hash]bool{}}
	for _, h := range more {
		s.more[h] = true
	}
	return s
}

// want is the set as a map, what every commitSet must answer like.
func checkSet(t *testing.T, name string, s commitSet, want map[plumbing.Hash]bool, absent []plumbing.Hash) {
	t.Helper()
	for h := range want {
		if !s.has(h) {
			t.Errorf("%s: lacks %s", name, h)
		}
	}
	for _, h := range absent {
		if !want[h] && s.has(h) {
			t.Errorf("%s: holds %s", name, h)
		}
	}
	all := s.all()
	if !slices.IsSortedFunc(all, compareHash) || len(all) != len(want) {
		t.Errorf("%s: all() gives %d ids (sorted %v), want %d", name, len(all), slices.IsSortedFunc(all, compareHash), len(want))
	}
	for _, h := range all {
		if !want[h] {
			t.Errorf("%s: all() holds %s", name, h)
		}
	}
}

func TestCommitSetAnswersLikeAMap(t *testing.T) {
	base := hashesOf("a", "b", "c", "d", "e")
	other := hashesOf("x", "y", "z")
	absent := hashesOf("a", "b", "c", "d", "e", "x", "y", "z", "p", "q", "never")
	mapOf := func(hs ...[]plumbing.Hash) map[plumbing.Hash]bool {
		m := map[plumbing.Hash]bool{}
		for _, l := range hs {
			for _, h := range l {
				m[h] = true
			}
		}
		return m
	}
	shared := setOf(base)
	fromCache1 := commitSet{sorted: shared.sorted, more: map[plumbing.Hash]bool{hashOf("p"): true}}
	fromCache2 := commitSet{sorted: shared.sorted, more: map[plumbing.Hash]bool{hashOf("q"): true}}
	walked := setOf(nil, other...) // a whole walk: a map alone
	cases := []struct {
		name string
		set  commitSet
		want map[plumbing.Hash]bool
	}{
		{"empty", commitSet{}, mapOf()},
		{"list only", setOf(base), mapOf(base)},
		{"map only", walked, mapOf(other)},
		{"list and map", setOf(base, other...), mapOf(base, other)},
		{"an id in both", setOf(base, base[1], other[0]), mapOf(base, other[:1])},
		{"union of one cache's sets", unionSets(fromCache1, fromCache2, hashOf("m")), mapOf(base, hashesOf("p", "q", "m"))},
		{"union with a whole walk", unionSets(fromCache1, walked, hashOf("m")), mapOf(base, other, hashesOf("p", "m"))},
		{"union, walk first", unionSets(walked, fromCache2, hashOf("m")), mapOf(base, other, hashesOf("q", "m"))},
		{"union of two walks", unionSets(walked, setOf(nil, base...), hashOf("m")), mapOf(base, other, hashesOf("m"))},
	}
	for _, c := range cases {
		checkSet(t, c.name, c.set, c.want, absent)
	}
	// A union of one cache's sets shares its list (no copy of a million ids).
	u := unionSets(fromCache1, fromCache2, hashOf("m"))
	if &u.sorted[0] != &shared.sorted[0] {
		t.Error("the union of sets of one cache copied its list")
	}
}

func TestAncestryCacheReadInAnyOrderWrittenSorted(t *testing.T) {
	r := newRepo(t)
	tip := hashOf("tip")
	ids := append(hashesOf("1", "2", "3", "4", "5", "6"), tip)
	// An earlier git mem wrote the ids in a map's order.
	unsorted := slices.Clone(ids)
	slices.SortFunc(unsorted, func(a, b plumbing.Hash) int { return -compareHash(a, b) })
	body := append([]byte(nil), tip[:]...)
	for _, h := range unsorted {
		body = append(body, h[:]...)
	}
	sum := sha1.Sum(body)
	p := r.ancestryCachePath()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(body, sum[:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[plumbing.Hash]bool{}
	for _, h := range ids {
		want[h] = true
	}
	gotTip, set, ok := r.loadAncestry()
	if !ok || gotTip != tip || set == nil {
		t.Fatalf("load of an unsorted cache: tip %s ok %v", gotTip, ok)
	}
	checkSet(t, "unsorted file", *set, want, hashesOf("7", "8"))

	// Saved with commits walked since: sorted, and read back the same.
	next := hashOf("next")
	grown := commitSet{sorted: set.sorted, more: map[plumbing.Hash]bool{next: true}}
	r.saveAncestry(next, grown)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const hl = len(plumbing.ZeroHash)
	var listed []plumbing.Hash
	for i := hl; i < len(raw)-hl; i += hl {
		listed = append(listed, plumbing.Hash(raw[i:i+hl]))
	}
	if !slices.IsSortedFunc(listed, compareHash) || len(listed) != len(ids)+1 {
		t.Fatalf("saved: %d ids, sorted %v", len(listed), slices.IsSortedFunc(listed, compareHash))
	}
	if s := sha1.Sum(raw[:len(raw)-hl]); !bytes.Equal(s[:], raw[len(raw)-hl:]) {
		t.Fatal("saved: bad checksum")
	}
	gotTip, set, ok = r.loadAncestry()
	want[next] = true
	if !ok || gotTip != next {
		t.Fatalf("reload: tip %s ok %v", gotTip, ok)
	}
	checkSet(t, "reloaded", *set, want, hashesOf("7"))
	if !maps.Equal(want, maps.Collect(func(yield func(plumbing.Hash, bool) bool) {
		for _, h := range set.all() {
			if !yield(h, true) {
				return
			}
		}
	})) {
		t.Fatal("reloaded: another set")
	}
}
