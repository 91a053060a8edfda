package distill

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// fakeLLM speaks the chat-completions wire format. Each request takes the
// next scripted reply; the last one repeats.
type fakeLLM struct {
	mu       sync.Mutex
	calls    atomic.Int32
	replies  []func(w http.ResponseWriter)
	requests []string
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n := int(f.calls.Add(1)) - 1
	f.mu.Lock()
	f.requests = append(f.requests, string(body))
	reply := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()
	reply(w)
}

func content(s string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		resp := map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": s}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}
}

func card(core, ctx string, rooms, files []string) func(w http.ResponseWriter) {
	b, _ := json.Marshal(answer{ExchangeCore: core, SpecificContext: ctx, Rooms: rooms, FilesTouched: files})
	return content(string(b))
}

func status(code int, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit","code":"rate_limit","param":null}}`)
	}
}

func testExchange() *exchange.Exchange {
	return &exchange.Exchange{
		ID: "t-1", Project: "billing",
		Turns: []exchange.Turn{
			{Role: "user", Text: "The retry in src/auth/middleware.go gives up too early, raise retryTimeout to 30s please."},
			{Role: "tool", Name: "Edit", Input: map[string]any{"file_path": "src/auth/middleware.go"}, Text: "ok"},
			{Role: "assistant", Text: "I changed retryTimeout from 10s to 30s in middleware.go and the tests pass."},
		},
	}
}

func newTestOpenAI(t *testing.T, f *fakeLLM, cache string) *OpenAI {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	o, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "test", Model: "test-model",
		Timeout: 2 * time.Second, CacheDir: cache, MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	o.backoff = 5 * time.Millisecond
	return o
}

var goodCard = card("Raised retryTimeout to 30s in src/auth/middleware.go so the retry stops giving up early.",
	"retryTimeout from 10s to 30s", []string{"file:middleware", "concept:retry timeout", "project:billing"},
	[]string{"src/auth/middleware.go"})

func TestOpenAIGoodCard(t *testing.T) {
	f := &fakeLLM{replies: []func(http.ResponseWriter){goodCard}}
	o := newTestOpenAI(t, f, "")
	c, err := o.Distill(context.Background(), testExchange())
	if err != nil {
		t.Fatal(err)
	}
	if c.Distiller != "openai/1:test-model" {
		t.Errorf("distiller %q", c.Distiller)
	}
	if got := exchange.RoomStrings(c.Rooms); strings.Join(got, " ") != "concept:retry_timeout file:middleware project:billing" {
		t.Errorf("rooms %v", got)
	}
	if len(c.Files) != 1 || c.Files[0] != "src/auth/middleware.go" {
		t.Errorf("files %v", c.Files)
	}
	var req map[string]any
	json.Unmarshal([]byte(f.requests[0]), &req)
	rf, _ := req["response_format"].(map[string]any)
	if rf["type"] != "json_schema" || req["model"] != "test-model" {
		t.Errorf("request lacks the JSON-schema response format: %s", f.requests[0][:min(300, len(f.requests[0]))])
	}
}

func TestOpenAIRejects(t *testing.T) {
	cases := []struct {
		name   string
		reply  func(http.ResponseWriter)
		reason string
	}{
		{"invented file", card("Raised retryTimeout to 30s.", "retryTimeout from 10s to 30s",
			[]string{"concept:retry_timeout"}, []string{"src/auth/session.go"}), `file "src/auth/session.go" is not in the exchange`},
		{"malformed JSON", content(`{"exchange_core": "Raised the timeout", "rooms": [`), "not the JSON object"},
		{"other language", card("Le délai de retryTimeout a été augmenté à 30s dans le fichier pour que la nouvelle tentative ne soit pas abandonnée.",
			"retryTimeout de 10s à 30s", []string{"concept:retry_timeout"}, nil), "the card is in French but the exchange is in English"},
		{"invented value", card("Raised retryTimeout to 45s.", "retryTimeout = 45s",
			[]string{"concept:retry_timeout"}, nil), `"45s" does not occur`},
		{"no rooms", card("Raised retryTimeout to 30s.", "retryTimeout", nil, nil), "0 rooms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeLLM{replies: []func(http.ResponseWriter){c.reply}}
			o := newTestOpenAI(t, f, "")
			got, err := o.Distill(context.Background(), testExchange())
			if err != nil {
				t.Fatal(err)
			}
			if f.calls.Load() != 2 {
				t.Errorf("%d calls, want 2 (one retry with the reason)", f.calls.Load())
			}
			if len(f.requests) == 2 && !strings.Contains(f.requests[1], "rejected") {
				t.Errorf("retry does not tell the reason: %s", f.requests[1])
			}
			if !strings.HasPrefix(got.Distiller, "heuristic/3 (fallback: ") || !strings.Contains(got.Distiller, c.reason) {
				t.Errorf("distiller %q, want a fallback naming %q", got.Distiller, c.reason)
			}
			if got.Core == "" || len(got.Rooms) == 0 {
				t.Errorf("fallback card is empty: %+v", got)
			}
		})
	}
}

func TestOpenAIRetryFixes(t *testing.T) {
	f := &fakeLLM{replies: []func(http.ResponseWriter){content("not json"), goodCard}}
	o := newTestOpenAI(t, f, "")
	c, err := o.Distill(context.Background(), testExchange())
	if err != nil || c.Distiller != o.Name() {
		t.Fatalf("card %+v, err %v", c, err)
	}
}

func TestOpenAI429ThenSuccess(t *testing.T) {
	f := &fakeLLM{replies: []func(http.ResponseWriter){status(429, "Retry-After", "0"), status(503), goodCard}}
	o := newTestOpenAI(t, f, "")
	c, err := o.Distill(context.Background(), testExchange())
	if err != nil || c.Distiller != o.Name() {
		t.Fatalf("card %+v, err %v", c, err)
	}
	if f.calls.Load() != 3 {
		t.Errorf("%d calls, want 3", f.calls.Load())
	}
}

func TestOpenAIRetryAfterHonoured(t *testing.T) {
	f := &fakeLLM{replies: []func(http.ResponseWriter){status(429, "Retry-After", "1"), goodCard}}
	o := newTestOpenAI(t, f, "")
	start := time.Now()
	if _, err := o.Distill(context.Background(), testExchange()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("retried after %v, Retry-After asked for 1s", d)
	}
}

func TestOpenAITimeout(t *testing.T) {
	slow := func(w http.ResponseWriter) { time.Sleep(300 * time.Millisecond); goodCard(w) }
	f := &fakeLLM{replies: []func(http.ResponseWriter){slow}}
	o := newTestOpenAI(t, f, t.TempDir())
	o.cfg.Timeout = 50 * time.Millisecond
	o.cfg.MaxRetries = 1
	c, err := o.Distill(context.Background(), testExchange())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Distiller, "fallback: endpoint: timeout") {
		t.Errorf("distiller %q, want a timeout fallback", c.Distiller)
	}
	if f.calls.Load() != 2 {
		t.Errorf("%d calls, want 2", f.calls.Load())
	}
	// An unreachable endpoint is not cached: the next run asks again.
	if entries, _ := os.ReadDir(o.cfg.CacheDir); len(entries) != 0 {
		t.Errorf("fallback after a timeout was cached: %v", entries)
	}
}

func TestOpenAICacheHit(t *testing.T) {
	dir := t.TempDir()
	f := &fakeLLM{replies: []func(http.ResponseWriter){goodCard}}
	o := newTestOpenAI(t, f, dir)
	first, err := o.Distill(context.Background(), testExchange())
	if err != nil {
		t.Fatal(err)
	}
	second, err := o.Distill(context.Background(), testExchange())
	if err != nil {
		t.Fatal(err)
	}
	if f.calls.Load() != 1 {
		t.Errorf("server called %d times, want 1 (cache hit)", f.calls.Load())
	}
	if first.Core != second.Core || first.Context != second.Context || first.Distiller != second.Distiller ||
		strings.Join(exchange.RoomStrings(first.Rooms), ",") != strings.Join(exchange.RoomStrings(second.Rooms), ",") {
		t.Errorf("cached card differs:\n%+v\n%+v", first, second)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	data, _ := os.ReadFile(files[0])
	var e cacheEntry
	if err := json.Unmarshal(data, &e); err != nil || len(e.Requests) != 1 || len(e.Responses) != 1 {
		t.Errorf("cache entry does not hold the request and response for replay: %s", data)
	}
}

func TestOpenAIConcurrencyBound(t *testing.T) {
	var inFlight, peak atomic.Int32
	reply := func(w http.ResponseWriter) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		goodCard(w)
	}
	f := &fakeLLM{replies: []func(http.ResponseWriter){reply}}
	o := newTestOpenAI(t, f, "")
	o.sem = make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.Distill(context.Background(), testExchange())
		}()
	}
	wg.Wait()
	if peak.Load() > 2 {
		t.Errorf("%d requests in flight, bound is 2", peak.Load())
	}
}

func TestNewOpenAINeedsModel(t *testing.T) {
	if _, err := NewOpenAI(OpenAIConfig{}); err == nil {
		t.Error("no error without a model")
	}
}

func TestLanguage(t *testing.T) {
	cases := map[string]string{
		"The retry in the middleware gives up too early and it is not what we want for this.": "English",
		"Le délai est trop court et la nouvelle tentative est abandonnée pour les requêtes.":  "French",
		"重试超时太短了，请把它改成三十秒，然后运行测试看看是否通过。":                                                      "Chinese/Japanese",
		"fix": "",
	}
	for in, want := range cases {
		if got := language(in); got != want {
			t.Errorf("language(%q) = %q, want %q", in, got, want)
		}
	}
}
