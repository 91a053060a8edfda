// Package backoff holds what the two OpenAI-compatible clients (the LLM
// distiller and the embedder) share about retrying: which errors are
// transient, what the server asked us to wait, and a sleep that a context
// can cut short.
package backoff

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/openai/openai-go/v3"
)

// Transient reports whether a failed call is worth retrying: rate limits,
// request timeouts, conflicts, server errors, and anything that is not an
// HTTP answer at all (timeouts, connection errors).
func Transient(err error) bool {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		s := apiErr.StatusCode
		return s == http.StatusTooManyRequests || s == http.StatusRequestTimeout || s == http.StatusConflict || s >= 500
	}
	return true
}

// ServerWait is the wait the server asked for in an error's answer:
// Retry-After-Ms, or Retry-After in seconds or as an HTTP date.
func ServerWait(err error) (time.Duration, bool) {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.Response == nil {
		return 0, false
	}
	return RetryAfter(apiErr.Response.Header)
}

// RetryAfter reads Retry-After-Ms, else Retry-After (seconds or HTTP date).
func RetryAfter(h http.Header) (time.Duration, bool) {
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v >= 0 {
			return time.Duration(v * float64(time.Millisecond)), true
		}
	}
	ra := h.Get("Retry-After")
	if ra == "" {
		return 0, false
	}
	if v, err := strconv.ParseFloat(ra, 64); err == nil && v >= 0 {
		return time.Duration(v * float64(time.Second)), true
	}
	if t, err := http.ParseTime(ra); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// Sleep waits d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
