package reader

import (
	"testing"
	"time"
)

// TestParseTimeRelative covers git's relative forms, read with a regexp
// compiled on first use (internal/lazy).
func TestParseTimeRelative(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want func(now time.Time) time.Time // within a minute
	}{
		{"2.weeks.ago", func(n time.Time) time.Time { return n.AddDate(0, 0, -14) }},
		{"3 days ago", func(n time.Time) time.Time { return n.AddDate(0, 0, -3) }},
		{"1.hour.ago", func(n time.Time) time.Time { return n.Add(-time.Hour) }},
		{"45 minutes ago", func(n time.Time) time.Time { return n.Add(-45 * time.Minute) }},
		{"10 seconds ago", func(n time.Time) time.Time { return n.Add(-10 * time.Second) }},
	} {
		got, err := ParseTime(tc.in, false)
		if err != nil {
			t.Fatalf("ParseTime(%q): %v", tc.in, err)
		}
		want := tc.want(time.Now())
		if d := got.Sub(want); d < -time.Minute || d > time.Minute {
			t.Errorf("ParseTime(%q) = %v, want %v", tc.in, got, want)
		}
	}
	for _, bad := range []string{"2 fortnights ago", "weeks.ago", "ago"} {
		if _, err := ParseTime(bad, false); err == nil {
			t.Errorf("ParseTime(%q) took a malformed relative time", bad)
		}
	}
}
