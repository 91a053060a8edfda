package distill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gitmem/git-mem/internal/backoff"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/gitmem/git-mem/exchange"
)

// PromptVersion changes whenever the prompt or the answer schema changes, so
// cached answers of an older prompt are not reused.
const PromptVersion = 1

// OpenAIConfig configures the LLM distiller. Zero fields take defaults.
type OpenAIConfig struct {
	BaseURL     string        // default $OPENAI_BASE_URL, else the OpenAI API
	APIKey      string        // default $OPENAI_API_KEY; local servers may need none
	Model       string        // required, e.g. "gpt-4o-mini" or a local model name
	Concurrency int           // requests in flight at once; default 4
	Timeout     time.Duration // per request; default 60s
	CacheDir    string        // one JSON file per exchange; "" disables the cache
	MaxRetries  int           // retries on 429, 5xx, timeouts and network errors; 0 means 3, <0 none
}

// OpenAI distills with a chat-completions model behind any OpenAI-compatible
// endpoint. Every answer is validated against the exchange; one that fails
// is retried once with the reason, then replaced by the heuristic card, so a
// model can never put an invented file or value into the memory. It is safe
// for concurrent use.
type OpenAI struct {
	cfg    OpenAIConfig
	client openai.Client
	sem    chan struct{}
	// backoff is the first retry delay, doubled per attempt (tests shorten it).
	backoff time.Duration
}

// NewOpenAI checks the configuration and builds the client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai distiller: no model configured (set distill.model in config.yaml, e.g. gpt-4o-mini)")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	} else if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	key := cfg.APIKey
	if key == "" {
		key = "none" // Ollama, llama.cpp and vLLM accept any key
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(0)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &OpenAI{
		cfg:     cfg,
		client:  openai.NewClient(opts...),
		sem:     make(chan struct{}, cfg.Concurrency),
		backoff: 500 * time.Millisecond,
	}, nil
}

// Name implements Distiller: "openai/<prompt version>:<model>".
func (o *OpenAI) Name() string { return "openai/" + strconv.Itoa(PromptVersion) + ":" + o.cfg.Model }

// answer is the JSON the model must return.
type answer struct {
	ExchangeCore    string   `json:"exchange_core"`
	SpecificContext string   `json:"specific_context"`
	Rooms           []string `json:"rooms"`
	FilesTouched    []string `json:"files_touched"`
}

var answerSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"exchange_core":    map[string]any{"type": "string", "description": "1-2 sentences: what the user asked and what was done"},
		"specific_context": map[string]any{"type": "string", "description": "the one most distinguishing detail, copied exactly"},
		"rooms": map[string]any{"type": "array", "items": map[string]any{"type": "string"},
			"description": "1 to 3 rooms written type:key, type one of file, concept, project"},
		"files_touched": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
	"required":             []string{"exchange_core", "specific_context", "rooms", "files_touched"},
	"additionalProperties": false,
}

const systemPrompt = `You write memory cards for a developer's long-term log of conversations with coding agents and other people.
You get one exchange: a user's message and the whole reply, tool calls and their output included.
Answer with a JSON object holding exactly these fields:
- exchange_core: one or two sentences, at most 300 characters, saying what the user asked for and what was done, like a commit subject.
- specific_context: the single detail that best tells this exchange apart, at most 200 characters, copied exactly from the exchange: an error message, a failing test, a command, a flag, a setting, a value, a version or an identifier.
- rooms: one to three topic labels written type:key, where type is file, concept or project and key is lower case with words joined by underscores (file:auth_middleware, concept:retry_timeout, project:billing).
- files_touched: the paths of files the exchange reads, edits or names, copied exactly; an empty list when there are none.
Keep the participants' own words. Copy identifiers, error strings, file names, numbers and quoted values exactly as they appear, and never state a value, name or file that is not in the exchange. Write in the language the exchange is written in.`

// maxPromptChars bounds the exchange text sent to the model: the head
// (the request and first steps) and the tail (the outcome) matter most.
const maxPromptChars = 24000

func userPrompt(ex *exchange.Exchange, files []string) string {
	r := ex.Render()
	if len(r) > maxPromptChars {
		head, tail := r[:maxPromptChars*2/3], r[len(r)-maxPromptChars/3:]
		r = strings.ToValidUTF8(head, "") + "\n[... middle of the exchange left out ...]\n" + strings.ToValidUTF8(tail, "")
	}
	var b strings.Builder
	if ex.Project != "" {
		b.WriteString("Project: " + ex.Project + "\n")
	}
	if len(files) > 0 {
		b.WriteString("Files found in the exchange: " + strings.Join(files, ", ") + "\n")
	}
	b.WriteString("\n<exchange>\n" + r + "\n</exchange>")
	return b.String()
}

// cacheEntry is what the cache keeps per exchange: enough to replay the run
// (every request and raw response) and the final card.
type cacheEntry struct {
	PromptVersion int               `json:"prompt_version"`
	Model         string            `json:"model"`
	Exchange      string            `json:"exchange"`
	Requests      []json.RawMessage `json:"requests"`
	Responses     []json.RawMessage `json:"responses"`
	Core          string            `json:"core"`
	Context       string            `json:"context"`
	Rooms         []string          `json:"rooms"`
	Files         []string          `json:"files"`
	Distiller     string            `json:"distiller"`
}

// cacheKey is a hash of the exchange's canonical JSON, the model and the
// prompt version: a new model or prompt asks again, a re-run does not.
func (o *OpenAI) cacheKey(ex *exchange.Exchange) string {
	h := sha256.New()
	fmt.Fprintf(h, "git-mem distill v%d\n%s\n", PromptVersion, o.cfg.Model)
	h.Write(ex.Canonical())
	return hex.EncodeToString(h.Sum(nil))
}

// Distill implements Distiller. Endpoint failures that outlast the retries
// and answers that fail validation twice give the heuristic card, marked in
// its Distiller field; only a cancelled context returns an error.
func (o *OpenAI) Distill(ctx context.Context, ex *exchange.Exchange) (exchange.Card, error) {
	if ex == nil {
		return heuristicCard(nil), nil
	}
	if err := ctx.Err(); err != nil {
		return exchange.Card{}, err
	}
	key := o.cacheKey(ex)
	if c, ok := o.readCache(key); ok {
		return c, nil
	}
	select {
	case o.sem <- struct{}{}:
		defer func() { <-o.sem }()
	case <-ctx.Done():
		return exchange.Card{}, ctx.Err()
	}

	files := FilesTouched(ex)
	entry := cacheEntry{PromptVersion: PromptVersion, Model: o.cfg.Model, Exchange: ex.Key()}
	msgs := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(systemPrompt),
		openai.UserMessage(userPrompt(ex, files)),
	}
	var card exchange.Card
	reason := ""
	for attempt := 0; attempt < 2; attempt++ {
		content, err := o.complete(ctx, msgs, &entry)
		if err != nil {
			if ctx.Err() != nil {
				return exchange.Card{}, ctx.Err()
			}
			// The endpoint stayed unreachable: fall back, but do not cache, so
			// the next run asks again.
			return fallback(ex, "endpoint: "+oneLineErr(err)), nil
		}
		card, reason = validateAnswer(ex, files, content)
		if reason == "" {
			card.Distiller = o.Name()
			break
		}
		msgs = append(msgs, openai.AssistantMessage(content),
			openai.UserMessage("That answer was rejected: "+reason+". Answer again with the JSON object, fixing this."))
	}
	if reason != "" {
		card = fallback(ex, reason)
	}
	entry.Core, entry.Context, entry.Files, entry.Distiller = card.Core, card.Context, card.Files, card.Distiller
	entry.Rooms = exchange.RoomStrings(card.Rooms)
	if err := o.writeCache(key, entry); err != nil {
		// A cache is an optimisation: a failed write costs a call next time.
		fmt.Fprintf(os.Stderr, "git mem: distill cache: %v\n", err)
	}
	return card, nil
}

// fallback is the heuristic card, its Distiller naming why the model's
// answer was not used.
func fallback(ex *exchange.Exchange, reason string) exchange.Card {
	c := heuristicCard(ex)
	c.Distiller = HeuristicName + " (fallback: " + clip(reason, 120) + ")"
	return c
}

func oneLineErr(err error) string { return cleanSpaces(err.Error()) }

// complete sends one chat completion, retrying transient failures with
// exponential backoff and honouring Retry-After. It records the request and
// the raw response in entry.
func (o *OpenAI) complete(ctx context.Context, msgs []openai.ChatCompletionMessageParamUnion, entry *cacheEntry) (string, error) {
	params := openai.ChatCompletionNewParams{
		Model:       shared.ChatModel(o.cfg.Model),
		Messages:    msgs,
		Temperature: openai.Float(0),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   "memory_card",
					Strict: openai.Bool(true),
					Schema: answerSchema,
				},
			},
		},
	}
	if raw, err := json.Marshal(params); err == nil {
		entry.Requests = append(entry.Requests, raw)
	}
	var lastErr error
	for attempt := 0; attempt <= o.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			if err := backoff.Sleep(ctx, o.retryDelay(attempt, lastErr)); err != nil {
				return "", err
			}
		}
		callCtx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
		res, err := o.client.Chat.Completions.New(callCtx, params)
		cancel()
		if err == nil {
			entry.Responses = append(entry.Responses, json.RawMessage(res.RawJSON()))
			if len(res.Choices) == 0 {
				return "", errors.New("the answer has no choices")
			}
			return res.Choices[0].Message.Content, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		lastErr = err
		if !backoff.Transient(err) {
			break
		}
	}
	if errors.Is(lastErr, context.DeadlineExceeded) {
		return "", fmt.Errorf("timeout after %v (%d attempts)", o.cfg.Timeout, o.cfg.MaxRetries+1)
	}
	return "", lastErr
}

// retryDelay honours the server's Retry-After, else backs off
// exponentially with jitter, capped at 60s.
func (o *OpenAI) retryDelay(attempt int, err error) time.Duration {
	const maxDelay = 60 * time.Second
	if d, ok := backoff.ServerWait(err); ok {
		return min(d, maxDelay)
	}
	d := o.backoff << (attempt - 1)
	d += time.Duration(rand.Int64N(int64(d)/4 + 1))
	return min(d, maxDelay)
}
