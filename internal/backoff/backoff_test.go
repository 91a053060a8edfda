package backoff

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second, true},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, true},
		{http.Header{"Retry-After": {time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}}, 0, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{}, 0, false},
	} {
		got, ok := RetryAfter(tc.h)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RetryAfter(%v) = %v, %v; want %v, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSleepStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); err == nil || time.Since(start) > time.Second {
		t.Fatalf("Sleep ignored a done context: %v", err)
	}
}
