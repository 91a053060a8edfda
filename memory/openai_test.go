package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// fakeOpenAI speaks the chat-completions and embeddings wire format.
func fakeOpenAI(t *testing.T, chats, embeds *atomic.Int32) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			chats.Add(1)
			card := map[string]any{"exchange_core": "Fixed the flaky retry test by raising the timeout.",
				"specific_context": "retry_test.go", "rooms": []string{"concept:retry_timeout"}, "files_touched": []string{}}
			content, _ := json.Marshal(card)
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, content)
		case strings.HasSuffix(r.URL.Path, "/embeddings"):
			embeds.Add(1)
			var req struct {
				Input []string `json:"input"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Errorf("embeddings request: %v: %s", err, body)
			}
			var data []string
			for i, s := range req.Input {
				h := fnv.New32a()
				h.Write([]byte(strings.ToLower(s)))
				v := float64(h.Sum32()%100) / 100
				data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%g,0.5,0.25,1]}`, i, v))
			}
			fmt.Fprintf(w, `{"object":"list","model":"e","data":[%s],"usage":{"prompt_tokens":1,"total_tokens":1}}`, strings.Join(data, ","))
		default:
			http.NotFound(w, r)
		}
	}))
}

// openAIMemory is a fresh memory whose mem/config.yaml is cfg (its HOME and
// API key the test's own).
func openAIMemory(t *testing.T, cfg string) *Memory {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "test-key")
	dir := filepath.Join(t.TempDir(), "mem.git")
	if _, _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mem", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The config file switches both the distiller and the embedder to an
// OpenAI-compatible endpoint; add and search go through the real clients.
func TestOpenAIConfigDrivesDistillerAndEmbedder(t *testing.T) {
	var chats, embeds atomic.Int32
	srv := fakeOpenAI(t, &chats, &embeds)
	defer srv.Close()
	m := openAIMemory(t, fmt.Sprintf("distiller: openai\nembedder: openai\nopenai:\n  base_url: %s/v1\n  model: m\n  embedding_model: e\n  embedding_dims: 4\n  timeout: 5s\n", srv.URL))
	in := ex("o1", "s", "2026-01-01T00:00:00Z", "fix the flaky retry test", "Raised the timeout in retry_test.go; the retry test passes.")
	rep, err := m.Add(context.Background(), []*exchange.Exchange{in}, AddOptions{})
	if err != nil || rep.Added != 1 || rep.IndexErr != "" {
		t.Fatalf("add: %+v %v", rep, err)
	}
	got, _ := m.Log(Filter{}, 1)
	if len(got) != 1 || !strings.HasPrefix(got[0].Distiller, "openai/") || got[0].Core != "Fixed the flaky retry test by raising the timeout." {
		t.Fatalf("card: %+v", got)
	}
	res, _, err := m.Search(context.Background(), SearchQuery{Text: "flaky retry", Mode: "distilled-vector"})
	if err != nil || len(res) != 1 {
		t.Fatalf("search: %v %v", res, err)
	}
	if chats.Load() == 0 || embeds.Load() == 0 {
		t.Fatalf("endpoint not used: %d chats, %d embeddings", chats.Load(), embeds.Load())
	}
	// A config without the embedding model is a clear error, not a crash.
	dir := m.Repo.Dir()
	if err := os.WriteFile(filepath.Join(dir, "mem", "config.yaml"), []byte("embedder: openai\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m2.Search(context.Background(), SearchQuery{Text: "retry"}); err == nil || !strings.Contains(err.Error(), "embedding_model") {
		t.Fatalf("search with an incomplete embedder config: %v", err)
	}
}

// The LLM distiller's cache (mem/cache/distill) holds each exchange it was
// asked about, whole: a forget takes the forgotten one's entry out, check
// reports one left behind (an add racing the forget, a kill), and
// --repair removes it. The kept exchange's entry stays.
func TestForgetPurgesDistillCache(t *testing.T) {
	var chats, embeds atomic.Int32
	srv := fakeOpenAI(t, &chats, &embeds)
	defer srv.Close()
	m := openAIMemory(t, fmt.Sprintf("distiller: openai\nopenai:\n  base_url: %s/v1\n  model: m\n  timeout: 5s\n", srv.URL))
	ctx := context.Background()
	const marker = "wombat-kalimantan-4412"
	mustAdd(t, m, ex("keep", "s", "2026-01-01T00:00:00Z", "fix the flaky retry test", "Raised the timeout."),
		ex("gone", "s", "2026-01-02T00:00:00Z", "the "+marker+" value leaked", "noted "+marker))
	entries := func() (n int, holds bool) {
		des, _ := os.ReadDir(m.DistillCacheDir())
		for _, de := range des {
			b, _ := os.ReadFile(filepath.Join(m.DistillCacheDir(), de.Name()))
			n++
			holds = holds || strings.Contains(string(b), marker)
		}
		return n, holds
	}
	if n, holds := entries(); n != 2 || !holds {
		t.Fatalf("before the forget: %d entries, marker held %v (want 2, true)", n, holds)
	}
	// One entry kept aside, to put back after the forget: the one a racing
	// add would leave.
	var left string
	var leftData []byte
	des, _ := os.ReadDir(m.DistillCacheDir())
	for _, de := range des {
		b, _ := os.ReadFile(filepath.Join(m.DistillCacheDir(), de.Name()))
		if strings.Contains(string(b), marker) {
			left, leftData = filepath.Join(m.DistillCacheDir(), de.Name()), b
		}
	}
	plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{"gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forget(ctx, plan, ""); err != nil {
		t.Fatal(err)
	}
	if n, holds := entries(); n != 1 || holds {
		t.Fatalf("after the forget: %d entries, marker held %v (want 1, false)", n, holds)
	}
	if err := os.WriteFile(left, leftData, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := m.Check(ctx, false)
	if err == nil || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].What, "distiller's cache holds 1 forgotten") || !rep.Problems[0].Repairable {
		t.Fatalf("check: %+v %v", rep, err)
	}
	if rep, err = m.Check(ctx, true); err != nil || len(rep.Repaired) != 1 {
		t.Fatalf("check --repair: %+v %v", rep, err)
	}
	if n, holds := entries(); n != 1 || holds {
		t.Fatalf("after the repair: %d entries, marker held %v (want 1, false)", n, holds)
	}
	if rep, err = m.Check(ctx, false); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("check after the repair: %+v %v", rep, err)
	}
	fsckStrict(t, m.Repo.Dir())
}
