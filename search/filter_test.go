package search

import "testing"

func TestSameProject(t *testing.T) {
	for _, tc := range []struct {
		have, want string
		same       bool
	}{
		{"docgen", "docgen", true},
		{"DocGen", "docgen", true},
		{"chef-chopsky", "chef_chopsky", true},
		{"Chef-Chopsky", "project:chef_chopsky", true},
		{"ChefChopsky", "chef_chopsky", true},
		{"chef_chopsky", "PROJECT:Chef.Chopsky", true},
		{"billing", "billing-api", false},
		{"billing", "bill", false},
		{"", "billing", false},
		{"project", "project:", true},
		{"café", "cafe", false},
	} {
		if got := SameProject(tc.have, tc.want); got != tc.same {
			t.Errorf("SameProject(%q, %q) = %v, want %v", tc.have, tc.want, got, tc.same)
		}
	}
	if n := testing.AllocsPerRun(100, func() { SameProject("Chef-Chopsky", "project:chef_chopsky") }); n != 0 {
		t.Errorf("SameProject allocates %.0f times; it runs per indexed exchange", n)
	}
}
