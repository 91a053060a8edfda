package reader

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/search"
)

func TestResolveLinks(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 3, 1, 0, 0, s, 0, time.UTC) }
	ev := func(kind, target, new string, s int, commit string) search.Event {
		return search.Event{Kind: kind, Target: target, New: new, Time: at(s), Commit: commit}
	}
	for _, tc := range []struct {
		name    string
		derived []search.Link
		events  []search.Event
		by      map[string][]string // old → new
		pins    []string
	}{
		{name: "derived alone", derived: []search.Link{{New: "b", Old: "a"}}, by: map[string][]string{"a": {"b"}}},
		{name: "a stated clear removes a derived link",
			derived: []search.Link{{New: "b", Old: "a"}},
			events:  []search.Event{ev(KindUnsupersede, "a", "b", 1, "c1")}, by: map[string][]string{}},
		{name: "set after clear: the later author date wins",
			events: []search.Event{ev(KindSupersede, "a", "b", 2, "c1"), ev(KindUnsupersede, "a", "b", 1, "c2")},
			by:     map[string][]string{"a": {"b"}}},
		{name: "clear after set, in any order of arrival",
			events: []search.Event{ev(KindUnsupersede, "a", "b", 2, "c1"), ev(KindSupersede, "a", "b", 1, "c2")},
			by:     map[string][]string{}},
		{name: "same second: the larger commit id wins",
			events: []search.Event{ev(KindSupersede, "a", "b", 1, "ff"), ev(KindUnsupersede, "a", "b", 1, "0a")},
			by:     map[string][]string{"a": {"b"}}},
		{name: "same second, other way", events: []search.Event{ev(KindSupersede, "a", "b", 1, "0a"), ev(KindUnsupersede, "a", "b", 1, "ff")},
			by: map[string][]string{}},
		{name: "pins: set, cleared, set again",
			events: []search.Event{ev(KindPin, "x", "", 1, "c1"), ev(KindUnpin, "x", "", 2, "c2"), ev(KindPin, "y", "", 3, "c3"), ev(KindPin, "x", "", 4, "c4")},
			by:     map[string][]string{}, pins: []string{"y", "x"}},
		{name: "an unpin older than the pin does nothing",
			events: []search.Event{ev(KindUnpin, "x", "", 1, "c2"), ev(KindPin, "x", "", 2, "c1")},
			by:     map[string][]string{}, pins: []string{"x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := resolveLinks(tc.derived, tc.events)
			if !reflect.DeepEqual(l.SupersededBy, tc.by) {
				t.Errorf("superseded by %v, want %v", l.SupersededBy, tc.by)
			}
			var pins []string
			for _, p := range l.Pins {
				pins = append(pins, p.ID)
			}
			if !reflect.DeepEqual(pins, tc.pins) {
				t.Errorf("pins %v, want %v", pins, tc.pins)
			}
			// The view is a function of the set of events, not their order.
			rev := append([]search.Event(nil), tc.events...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			if r := resolveLinks(tc.derived, rev); !reflect.DeepEqual(r.SupersededBy, l.SupersededBy) || len(r.Pins) != len(l.Pins) {
				t.Errorf("reversed events give %v / %d pins", r.SupersededBy, len(r.Pins))
			}
		})
	}
}

func TestLivingFirst(t *testing.T) {
	l := resolveLinks([]search.Link{{New: "b", Old: "a"}, {New: "c", Old: "b"}, {New: "z", Old: "y"}}, nil)
	id := func(s string) string { return s }
	for _, tc := range []struct{ in, want string }{
		{"abc", "cba"},   // a chain: the newest first
		{"xay", "xay"},   // nothing that replaced them is in the list
		{"axb", "xba"},   // a waits for b, which comes later
		{"bqa", "bqa"},   // already after its replacement
		{"yzab", "zyba"}, // two links
	} {
		got := strings.Join(LivingFirst(strings.Split(tc.in, ""), id, l), "")
		if got != tc.want {
			t.Errorf("LivingFirst(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
