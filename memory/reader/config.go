package reader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is git mem's settings: <gitdir>/mem/config.yaml over
// ~/.config/git-mem/config.yaml, then environment, then flags.
type Config struct {
	Distiller string       `yaml:"distiller"` // heuristic (default) | openai
	Embedder  string       `yaml:"embedder"`  // builtin (default) | openai
	OpenAI    OpenAIConfig `yaml:"openai"`
	Search    SearchConfig `yaml:"search"`
	// Exclude names sessions the hooks and import skip.
	Exclude ExcludeConfig `yaml:"exclude"`
}

// OpenAIConfig is an OpenAI-compatible endpoint for the LLM distiller and
// the embedder. Empty values fall back to OPENAI_BASE_URL / OPENAI_API_KEY.
type OpenAIConfig struct {
	BaseURL         string        `yaml:"base_url"`
	Model           string        `yaml:"model"`
	EmbeddingModel  string        `yaml:"embedding_model"`
	EmbeddingDims   int           `yaml:"embedding_dims"`
	Concurrency     int           `yaml:"concurrency"`
	Timeout         time.Duration `yaml:"timeout"`
	APIKeyEnv       string        `yaml:"api_key_env"` // name of the variable holding the key (never the key itself)
	DistillCacheDir string        `yaml:"-"`
}

// SearchConfig holds search defaults.
type SearchConfig struct {
	Mode string `yaml:"mode"`
	K    int    `yaml:"k"`
	// Living ranks a superseded exchange right after the one that replaced
	// it; Recency boosts newer hits for "latest/current/now" queries
	// (issue 20; defaults measured in docs/bench/supersede.md).
	Living  *bool `yaml:"living"`
	Recency bool  `yaml:"recency"`
	// Server: false keeps `git mem search` from starting (and asking) a
	// warm search process; ServerIdle is how long one lives without a
	// search (default DefaultServerIdle). docs/CONTRACT.md, "The warm
	// search process".
	Server     *bool         `yaml:"server"`
	ServerIdle time.Duration `yaml:"server_idle"`
}

// DefaultServerIdle is how long a warm search process waits for the next
// search before it exits.
const DefaultServerIdle = 5 * time.Minute

// ServerOn reports whether the warm search process is allowed.
func (c SearchConfig) ServerOn() bool { return c.Server == nil || *c.Server }

// Idle is the warm search process's idle time.
func (c SearchConfig) Idle() time.Duration {
	if c.ServerIdle > 0 {
		return c.ServerIdle
	}
	return DefaultServerIdle
}

// Ranking is the configured issue-20 ranking.
func (c SearchConfig) Ranking() Rerank {
	return Rerank{Living: c.Living == nil || *c.Living, Recent: c.Recency}
}

// DefaultConfig is what a memory uses with no config file: fully offline.
func DefaultConfig() Config {
	return Config{
		Distiller: "heuristic",
		Embedder:  "builtin",
		OpenAI:    OpenAIConfig{Concurrency: 4, Timeout: 60 * time.Second, APIKeyEnv: "OPENAI_API_KEY"},
		Search:    SearchConfig{K: 10},
	}
}

// LoadConfig reads the user's then the memory's config file over the
// defaults, then applies the environment.
func LoadConfig(memDir string) (Config, error) {
	cfg := DefaultConfig()
	var paths []string
	if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ".config", "git-mem", "config.yaml"))
	}
	if memDir != "" {
		paths = append(paths, filepath.Join(memDir, "config.yaml"))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return cfg, fmt.Errorf("read config %s: %w", p, err)
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			return cfg, fmt.Errorf("config %s: %v: fix the YAML", p, err)
		}
	}
	if v := os.Getenv("GIT_MEM_DISTILLER"); v != "" {
		cfg.Distiller = v
	}
	if v := os.Getenv("GIT_MEM_EMBEDDER"); v != "" {
		cfg.Embedder = v
	}
	if v := os.Getenv("OPENAI_BASE_URL"); v != "" && cfg.OpenAI.BaseURL == "" {
		cfg.OpenAI.BaseURL = v
	}
	switch cfg.Distiller {
	case "heuristic", "openai":
	default:
		return cfg, fmt.Errorf("config: unknown distiller %q (use heuristic or openai)", cfg.Distiller)
	}
	switch cfg.Embedder {
	case "builtin", "openai":
	default:
		return cfg, fmt.Errorf("config: unknown embedder %q (use builtin or openai)", cfg.Embedder)
	}
	if err := cfg.Exclude.validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}
