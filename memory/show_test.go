package memory

import (
	"errors"
	"strings"
	"testing"
)

func TestFindEntry(t *testing.T) {
	all := []*Entry{
		{Commit: "9e0a1111aaaa", Exchange: "demo-1"},
		{Commit: "9e0a2222bbbb", Exchange: "demo-2"},
		{Commit: "abcd3333cccc", Exchange: "9e0"},
	}
	for _, tc := range []struct {
		ref, want, errHas string
		errIs             error
	}{
		{ref: "demo-2", want: "demo-2"},
		{ref: "9e0", want: "9e0"}, // an exchange id wins over a prefix
		{ref: "9e", errHas: "too short: give at least 4 hex digits", errIs: ErrInvalid},
		{ref: "9e0a", errHas: `ambiguous: commit prefix "9e0a" matches 2 exchanges (9e0a111`, errIs: ErrInvalid},
		{ref: "9E0A1", want: "demo-1"},
		{ref: "abcd", want: "9e0"},
		{ref: "ffff", errHas: "no such exchange", errIs: ErrNotFound},
		{ref: "nope", errHas: "no such exchange", errIs: ErrNotFound},
	} {
		e, err := findEntry(all, tc.ref)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) || !errors.Is(err, tc.errIs) {
				t.Errorf("findEntry(%q) = %v, want an error with %q (class %v)", tc.ref, err, tc.errHas, tc.errIs)
			}
			continue
		}
		if err != nil || e.Exchange != tc.want {
			t.Errorf("findEntry(%q) = %v, %v; want %s", tc.ref, e, err, tc.want)
		}
	}
}
