package memory

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/gitmem/git-mem/distill"
	"github.com/gitmem/git-mem/search/embed"
	"github.com/gitmem/git-mem/search/embed/openaiembed"
)

// apiKey reads the key from the configured environment variable: the key
// itself is never written to a config file.
func apiKey(cfg Config) string {
	name := cfg.OpenAI.APIKeyEnv
	if name == "" {
		name = "OPENAI_API_KEY"
	}
	return os.Getenv(name)
}

func newOpenAIDistiller(cfg Config, memDir string) (distill.Distiller, error) {
	if cfg.OpenAI.Model == "" {
		return nil, errors.New("config: distiller openai needs openai.model in config.yaml")
	}
	return distill.NewOpenAI(distill.OpenAIConfig{
		BaseURL:     cfg.OpenAI.BaseURL,
		APIKey:      apiKey(cfg),
		Model:       cfg.OpenAI.Model,
		Concurrency: cfg.OpenAI.Concurrency,
		Timeout:     cfg.OpenAI.Timeout,
		CacheDir:    filepath.Join(memDir, "cache", "distill"),
	})
}

func newOpenAIEmbedder(cfg Config) (embed.Embedder, error) {
	if cfg.OpenAI.EmbeddingModel == "" || cfg.OpenAI.EmbeddingDims <= 0 {
		return nil, errors.New("config: embedder openai needs openai.embedding_model and openai.embedding_dims in config.yaml")
	}
	return openaiembed.NewOpenAI(openaiembed.OpenAIConfig{
		BaseURL:     cfg.OpenAI.BaseURL,
		APIKey:      apiKey(cfg),
		Model:       cfg.OpenAI.EmbeddingModel,
		Dims:        cfg.OpenAI.EmbeddingDims,
		Concurrency: cfg.OpenAI.Concurrency,
		Timeout:     cfg.OpenAI.Timeout,
	})
}
