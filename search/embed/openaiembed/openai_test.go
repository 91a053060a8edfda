package openaiembed

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func newTestOpenAI(t *testing.T, srv *httptest.Server, mod func(*OpenAIConfig)) (*OpenAI, *[]time.Duration) {
	cfg := OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "k", Model: "m", Dims: 8, BatchSize: 64, Timeout: 2 * time.Second, MaxRetries: 3}
	if mod != nil {
		mod(&cfg)
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	o.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	return o, &waits
}

func TestOpenAI(t *testing.T) {
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	tests := []struct {
		name      string
		dims      int
		handle    func(n int, w http.ResponseWriter) bool
		mod       func(*OpenAIConfig)
		wantErr   string
		wantCalls int32
		// minCalls, when set, lets the server see fewer requests than the
		// client sent: a request the client's deadline cancels before the
		// server's handler runs (a loaded machine) is never counted there.
		minCalls  int32
		wantWaits []time.Duration
	}{
		{name: "success in 3 batches", dims: 8, wantCalls: 3},
		{name: "429 then success", dims: 8, handle: func(n int, w http.ResponseWriter) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "2")
				http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
				return true
			}
			return false
		}, mod: func(c *OpenAIConfig) { c.Concurrency = 1 }, wantCalls: 4, wantWaits: []time.Duration{2 * time.Second}},
		{name: "500 retried then error", dims: 8, handle: func(n int, w http.ResponseWriter) bool {
			http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
			return true
		}, mod: func(c *OpenAIConfig) { c.Concurrency = 1 }, wantErr: "after 4 attempts", wantCalls: 4,
			wantWaits: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
		{name: "400 not retried", dims: 8, handle: func(n int, w http.ResponseWriter) bool {
			http.Error(w, `{"error":{"message":"bad"}}`, http.StatusBadRequest)
			return true
		}, mod: func(c *OpenAIConfig) { c.Concurrency = 1 }, wantErr: "400", wantCalls: 1},
		{name: "timeout", dims: 8, handle: func(n int, w http.ResponseWriter) bool {
			time.Sleep(300 * time.Millisecond)
			return false
		}, mod: func(c *OpenAIConfig) { c.Timeout = 50 * time.Millisecond; c.MaxRetries = 1; c.Concurrency = 1 },
			wantErr: "after 2 attempts", wantCalls: 2, minCalls: 1},
		{name: "wrong dims", dims: 5, mod: func(c *OpenAIConfig) { c.Concurrency = 1 }, wantErr: "returned 5 dims, configured 8", wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := fakeServer(t, tc.dims, tc.handle)
			o, waits := newTestOpenAI(t, srv, tc.mod)
			vs, err := o.Embed(context.Background(), texts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range vs {
					if len(v) != 8 || v[(i+1)%8] != 1 {
						t.Fatalf("vector %d = %v", i, v)
					}
				}
			}
			if got := atomic.LoadInt32(calls); tc.minCalls == 0 && got != tc.wantCalls {
				t.Errorf("calls = %d, want %d", got, tc.wantCalls)
			} else if tc.minCalls > 0 && (got < tc.minCalls || got > tc.wantCalls) {
				t.Errorf("calls = %d, want %d to %d", got, tc.minCalls, tc.wantCalls)
			}
			if tc.wantWaits != nil && !reflect.DeepEqual(*waits, tc.wantWaits) {
				t.Errorf("waits = %v, want %v", *waits, tc.wantWaits)
			}
		})
	}
}

func TestOpenAIConfig(t *testing.T) {
	if _, err := NewOpenAI(OpenAIConfig{Model: "m"}); err == nil {
		t.Error("missing dims accepted")
	}
	if _, err := NewOpenAI(OpenAIConfig{Dims: 3}); err == nil {
		t.Error("missing model accepted")
	}
}

// fakeServer speaks the /v1/embeddings wire format. handle may override a
// request's answer by writing a status and returning true.
func fakeServer(t *testing.T, dims int, handle func(n int, w http.ResponseWriter) bool) (*httptest.Server, *int32) {
	var calls int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(atomic.AddInt32(&calls, 1))
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad path or key", http.StatusBadRequest)
			return
		}
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if handle != nil && handle(n, w) {
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		resp := struct {
			Object string         `json:"object"`
			Data   []item         `json:"data"`
			Model  string         `json:"model"`
			Usage  map[string]int `json:"usage"`
		}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": 1, "total_tokens": 1}}
		// Answer in reverse order: the client must place vectors by index.
		for i := len(req.Input) - 1; i >= 0; i-- {
			v := make([]float64, dims)
			v[len(req.Input[i])%dims] = 3 // not unit: the client normalises
			resp.Data = append(resp.Data, item{"embedding", i, v})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}
