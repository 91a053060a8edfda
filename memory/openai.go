package memory

import (
	"errors"

	"github.com/gitmem/git-mem/distill"
	"github.com/gitmem/git-mem/search/embed"
)

// Filled in once the distill and embed packages expose their OpenAI clients.
func newOpenAIDistiller(cfg Config, memDir string) (distill.Distiller, error) {
	return nil, errors.New("the openai distiller is not available in this build")
}

func newOpenAIEmbedder(cfg Config) (embed.Embedder, error) {
	return nil, errors.New("the openai embedder is not available in this build")
}
