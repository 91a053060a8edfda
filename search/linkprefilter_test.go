package search

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

// TestRefusedIsMayLink: a pair refused from the candidate's may bits is
// exactly one mayLink refuses, and a candidate whose features are not
// cached (bits 0) is never refused.
func TestRefusedIsMayLink(t *testing.T) {
	feat := func(change, facts bool) *linkFeat {
		f := &linkFeat{change: change}
		if facts {
			f.facts = []fact{{1, 2}}
		}
		return f
	}
	for _, ac := range []bool{false, true} {
		for _, af := range []bool{false, true} {
			for _, bc := range []bool{false, true} {
				for _, bf := range []bool{false, true} {
					fa, fb := feat(ac, af), feat(bc, bf)
					if got, want := refused(fa, mayBits(fb)), !mayLink(fa, fb); got != want {
						t.Errorf("a change %v facts %v, b change %v facts %v: refused %v, mayLink says %v", ac, af, bc, bf, got, want)
					}
					if refused(fa, 0) {
						t.Errorf("a change %v facts %v: refused a candidate not cached", ac, af)
					}
				}
			}
		}
	}
}

// TestLinkPrefilterSameLinks: the links a rebuild derives, in batches and
// across a spill, are the same with deriveLinks' prefilter (may bits, the
// remembered project rule) and without it, on cards with change words,
// settings, several projects (one empty, one in another case) and rooms
// shared across projects.
func TestLinkPrefilterSameLinks(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	docs := synthDocs(1500, seed)
	projects := []string{"billing", "Billing", "gateway", "", "infra"}
	changes := []string{" switched to redis", " no longer retries", " now uses port 9090", ""}
	for i := range docs {
		d := &docs[i]
		d.Project = projects[r.Intn(len(projects))]
		d.Core += changes[r.Intn(len(changes))]
		if r.Intn(3) == 0 {
			d.Context += fmt.Sprintf(" port: %d", 8080+r.Intn(3))
		}
		if r.Intn(4) == 0 {
			d.Context += fmt.Sprintf(" go 1.%d", 20+r.Intn(3))
		}
	}
	links := func(prefilter bool) []Link {
		old := linkPrefilter
		linkPrefilter = prefilter
		defer func() { linkPrefilter = old }()
		ix, err := Open(t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for start := 0; start < len(docs); start += 400 {
			end := min(start+400, len(docs))
			if err := ix.Add(docs[start:end]); err != nil {
				t.Fatal(err)
			}
			if start == 400 {
				if err := ix.Spill(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := ix.SetLastCommit(docs[len(docs)-1].Commit, len(docs)-1); err != nil {
			t.Fatal(err)
		}
		dir := ix.Dir()
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		return storedLinks(t, dir)
	}
	with, without := links(true), links(false)
	t.Logf("%d links", len(without))
	if len(without) < 20 {
		t.Fatalf("only %d links derived: the cards do not exercise the rule", len(without))
	}
	if !reflect.DeepEqual(with, without) {
		t.Fatalf("%d links with the prefilter, %d without; first with %+v, without %+v", len(with), len(without), with[:min(3, len(with))], without[:min(3, len(without))])
	}
}
