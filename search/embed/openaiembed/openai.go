// Package openaiembed is the embedder of an OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Ollama, vLLM, LM Studio, llama.cpp
// server), apart from package embed so that only what may use it links
// openai-go.
package openaiembed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gitmem/git-mem/internal/backoff"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// OpenAIConfig configures an OpenAI-compatible /v1/embeddings endpoint
// (OpenAI, Ollama, vLLM, LM Studio, llama.cpp server).
type OpenAIConfig struct {
	BaseURL string // e.g. http://localhost:11434/v1; "" = $OPENAI_BASE_URL, else OpenAI
	APIKey  string // "" = $OPENAI_API_KEY (local servers accept anything)
	Model   string // required
	Dims    int    // required: the width the model returns; a different answer is an error
	// RequestDims sends Dims as the "dimensions" parameter (text-embedding-3
	// models can shorten their vectors); servers that do not know it may
	// reject it, so it is off by default.
	RequestDims bool
	BatchSize   int           // texts per request; 0 = 64
	Concurrency int           // requests in flight; 0 = 4
	Timeout     time.Duration // per request; 0 = 60 s
	MaxRetries  int           // on 429, 5xx, timeouts and connection errors; 0 = 5, <0 = none
	MaxBackoff  time.Duration // cap of one wait; 0 = 30 s
	HTTPClient  *http.Client  // nil = http.DefaultClient
}

// OpenAI embeds through an OpenAI-compatible endpoint: batched, with bounded
// concurrency, a timeout per request, retries with exponential backoff that
// honour Retry-After, and a check of every vector's width.
type OpenAI struct {
	cfg    OpenAIConfig
	client openai.Client
	sleep  func(ctx context.Context, d time.Duration) error
}

// NewOpenAI validates cfg and builds the client. The client's own retries are
// off: this type retries, so tests and logs see one policy.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if cfg.Model == "" {
		return nil, errors.New("openai embedder: no model configured")
	}
	if cfg.Dims <= 0 {
		return nil, fmt.Errorf("openai embedder %s: dims must be set (the index records them)", cfg.Model)
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 5
	} else if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	opts := []option.RequestOption{option.WithMaxRetries(0), option.WithAPIKey(cfg.APIKey)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &OpenAI{cfg: cfg, client: openai.NewClient(opts...), sleep: backoff.Sleep}, nil
}

// Name is "openai/<model>".
func (o *OpenAI) Name() string { return "openai/" + o.cfg.Model }

// Dims is the configured width.
func (o *OpenAI) Dims() int { return o.cfg.Dims }

// Embed returns one unit vector per text, in order.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, o.cfg.Concurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for start := 0; start < len(texts); start += o.cfg.BatchSize {
		end := min(start+o.cfg.BatchSize, len(texts))
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(start, end int) {
			defer wg.Done()
			defer func() { <-sem }()
			vs, err := o.batch(ctx, texts[start:end])
			if err != nil {
				once.Do(func() {
					firstErr = fmt.Errorf("texts %d–%d: %w", start+1, end, err)
					cancel()
				})
				return
			}
			copy(out[start:end], vs)
		}(start, end)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// batch sends one request, retrying transient failures.
func (o *OpenAI) batch(ctx context.Context, texts []string) ([][]float32, error) {
	// Empty strings are refused by the API: send one space instead.
	in := make([]string, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			t = " "
		}
		in[i] = t
	}
	params := openai.EmbeddingNewParams{
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: in},
		Model:          openai.EmbeddingModel(o.cfg.Model),
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if o.cfg.RequestDims {
		params.Dimensions = openai.Int(int64(o.cfg.Dims))
	}
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
		res, err := o.client.Embeddings.New(cctx, params)
		cancel()
		if err == nil {
			return o.vectors(res, len(texts))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		wait, retry := o.retryAfter(err, attempt)
		if !retry || attempt >= o.cfg.MaxRetries {
			if attempt > 0 {
				return nil, fmt.Errorf("embeddings after %d attempts: %w", attempt+1, err)
			}
			return nil, fmt.Errorf("embeddings: %w", err)
		}
		if err := o.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func (o *OpenAI) vectors(res *openai.CreateEmbeddingResponse, n int) ([][]float32, error) {
	if len(res.Data) != n {
		return nil, fmt.Errorf("embeddings: asked for %d vectors, got %d", n, len(res.Data))
	}
	out := make([][]float32, n)
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings: bad or repeated index %d in the answer", d.Index)
		}
		if len(d.Embedding) != o.cfg.Dims {
			return nil, fmt.Errorf("embeddings: model %s returned %d dims, configured %d: fix the dims setting (and run `git mem reindex`)",
				o.cfg.Model, len(d.Embedding), o.cfg.Dims)
		}
		var norm float64
		for _, x := range d.Embedding {
			norm += x * x
		}
		v := make([]float32, len(d.Embedding))
		if norm > 0 {
			norm = math.Sqrt(norm)
			for i, x := range d.Embedding {
				v[i] = float32(x / norm)
			}
		}
		out[d.Index] = v
	}
	return out, nil
}

// retryAfter decides whether err is transient and how long to wait: the
// server's Retry-After (seconds or HTTP date) or Retry-After-Ms when given,
// else 0.5 s doubling, capped at MaxBackoff.
func (o *OpenAI) retryAfter(err error, attempt int) (time.Duration, bool) {
	wait := min(time.Duration(500*(1<<min(attempt, 10)))*time.Millisecond, o.cfg.MaxBackoff)
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		code := apiErr.StatusCode
		if code != http.StatusTooManyRequests && code != http.StatusRequestTimeout && code < 500 {
			return 0, false
		}
		if d, ok := backoff.ServerWait(err); ok {
			wait = min(d, o.cfg.MaxBackoff)
		}
		return wait, true
	}
	// Timeouts and connection errors are transient.
	return wait, true
}
