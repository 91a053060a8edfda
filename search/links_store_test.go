package search

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"
)

// templated returns n cards that each change the same setting of one file:
// every later card supersedes every earlier one by the rule.
func templated(n int) []Doc {
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = Doc{Seq: i, ID: fmt.Sprintf("c%03d", i), Commit: fmt.Sprintf("%040x", i+1),
			Time: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC), Project: "atlas",
			Core:  fmt.Sprintf("Set port: %d in config/server.yaml for the API server.", 8000+i),
			Rooms: []string{"file:config_server"}, Files: []string{"config/server.yaml"}}
	}
	return docs
}

func buildLinked(t *testing.T, docs []Doc) string {
	t.Helper()
	ix, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	if err := ix.AddEvents([]Event{{Commit: "e1", Time: docs[0].Time, Kind: "pin", Target: docs[3].ID}}); err != nil {
		t.Fatal(err)
	}
	if err := ix.SetLastCommit(docs[len(docs)-1].Commit, len(docs)-1); err != nil {
		t.Fatal(err)
	}
	dir := ix.Dir()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A card derives at most linkCap links: templated cards would otherwise
// link each card to every earlier one (n(n-1)/2).
func TestLinkCapBoundsDerivedLinks(t *testing.T) {
	const n = 40
	ls := storedLinks(t, buildLinked(t, templated(n)))
	if linkCap > 16 {
		t.Fatalf("linkCap %d: the cap is what bounds a templated memory's links", linkCap)
	}
	per := map[string]int{}
	for _, l := range ls {
		per[l.New]++
	}
	if want := (n - linkCap) * linkCap; len(ls) < want || len(ls) > n*linkCap {
		t.Fatalf("%d links for %d templated cards, want about %d (at most %d per card)", len(ls), n, want, linkCap)
	}
	for id, k := range per {
		if k > linkCap {
			t.Errorf("%s supersedes %d cards, over the cap %d", id, k, linkCap)
		}
	}
	// The latest earlier cards are kept (all alike, so the newest win).
	for _, l := range ls {
		if l.New == "c039" && l.Old < fmt.Sprintf("c%03d", 39-linkCap) {
			t.Errorf("c039 supersedes %s, not one of the %d before it", l.Old, linkCap)
		}
	}
}

// LinksOf gives, for any set of ids, exactly the links of Links that name
// one of them or an exchange an event names — from the file, read-only,
// and from a writer's unsaved state.
func TestLinksOfIsLinksRestricted(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	docs := templated(30)
	dir := buildLinked(t, docs)
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	all, events, err := ro.Links()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || len(events) != 1 {
		t.Fatalf("%d links, %d events", len(all), len(events))
	}
	key := func(ls []Link) []string {
		out := []string{}
		for _, l := range ls {
			out = append(out, fmt.Sprintf("%s>%s@%.4f", l.New, l.Old, l.Sim))
		}
		sort.Strings(out)
		return out
	}
	for round := 0; round < 20; round++ {
		var ids []string
		want := map[string]bool{docs[3].ID: true} // the pin's target
		for _, d := range docs {
			if rng.Intn(4) == 0 {
				ids = append(ids, d.ID)
				want[d.ID] = true
			}
		}
		ids = append(ids, "no-such-exchange")
		var exp []Link
		for _, l := range all {
			if want[l.New] || want[l.Old] {
				exp = append(exp, l)
			}
		}
		got, ev, err := ro.LinksOf(ids)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(key(got), key(exp)) || len(ev) != 1 {
			t.Fatalf("round %d, ids %v:\n got %v\nwant %v", round, ids, key(got), key(exp))
		}
	}
	ro.Close()
	w, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.ensureLinkState(); err != nil {
		t.Fatal(err)
	}
	got, _, err := w.LinksOf([]string{"c010"})
	if err != nil {
		t.Fatal(err)
	}
	var exp []Link
	for _, l := range all {
		if l.New == "c010" || l.Old == "c010" || l.New == docs[3].ID || l.Old == docs[3].ID {
			exp = append(exp, l)
		}
	}
	if !reflect.DeepEqual(key(got), key(exp)) {
		t.Fatalf("writer: got %v, want %v", key(got), key(exp))
	}
}

// A links file that names rows the index does not have is corrupt, not a
// panic.
func TestLinksFileOutOfRange(t *testing.T) {
	docs := templated(12)
	dir := buildLinked(t, docs)
	p := filepath.Join(dir, linksBinFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{linksHeader + 8, len(b) - linkEntSize} { // a node's row, an entry's row
		bad := append([]byte(nil), b...)
		bad[at], bad[at+1], bad[at+2], bad[at+3] = 0xff, 0xff, 0, 0
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := openLinks(dir, len(docs))
		if err != nil {
			t.Fatal(err)
		}
		err = eachLink(v)
		v.close()
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("byte %d: err %v, want ErrCorrupt", at, err)
		}
	}
	if err := os.WriteFile(p, b[:len(b)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openLinks(dir, len(docs)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: err %v, want ErrCorrupt", err)
	}
}

// eachLink reads both sides of every node.
func eachLink(v *linksView) error {
	for i := 0; i < v.nodes; i++ {
		n, err := v.node(i)
		if err != nil {
			return err
		}
		nop := func(int32, float64) error { return nil }
		if err := v.entries(n.supOff, n.supN, nop); err != nil {
			return err
		}
		if err := v.entries(n.byOff, n.byN, nop); err != nil {
			return err
		}
	}
	return nil
}
