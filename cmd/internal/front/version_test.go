package front

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	dirty := append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, tc := range []struct {
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"v1.2.3", nil, "v1.2.3"}, // go install …@v1.2.3
		{"v0.0.0-20261201120000-0123456789ab", rev, "v0.0.0-20261201120000-0123456789ab"}, // a pseudo-version names its revision already
		{"(devel)", rev, "(devel) (0123456789ab)"},                                        // go build in a checkout
		{"", dirty, "(devel) (0123456789ab+dirty)"},
	} {
		bi := &debug.BuildInfo{Main: debug.Module{Version: tc.main}, Settings: tc.settings}
		if got := VersionOf(bi); got != tc.want {
			t.Errorf("VersionOf(%q, %v) = %q, want %q", tc.main, tc.settings, got, tc.want)
		}
	}
}
