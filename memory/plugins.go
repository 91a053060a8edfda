package memory

import (
	"github.com/gitmem/git-mem/distill"
	"github.com/gitmem/git-mem/search/embed"
)

// newDistiller builds the configured distiller.
func newDistiller(cfg Config, memDir string) (distill.Distiller, error) {
	switch cfg.Distiller {
	case "openai":
		return newOpenAIDistiller(cfg, memDir)
	default:
		return distill.Heuristic{}, nil
	}
}

// newEmbedder builds the configured embedder; nil means the builtin one.
func newEmbedder(cfg Config) (embed.Embedder, error) {
	switch cfg.Embedder {
	case "openai":
		return newOpenAIEmbedder(cfg)
	default:
		return nil, nil
	}
}
