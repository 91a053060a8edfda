// Package tokens counts BPE tokens the way a model sees text, so compression
// ratios and context budgets are measured in real tokens, not words.
package tokens

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Encoding is the BPE vocabulary every count uses (compiled in: no network,
// no model file).
const Encoding = "cl100k_base"

var (
	once  sync.Once
	codec tokenizer.Codec
)

// load builds the codec on first use only: the vocabulary costs tens of
// milliseconds and megabytes, which commands that never count should not pay.
func load() tokenizer.Codec {
	once.Do(func() {
		c, err := tokenizer.Get(tokenizer.Cl100kBase)
		if err == nil {
			codec = c
		}
	})
	return codec
}

// Count returns the number of cl100k_base tokens in s. Invalid UTF-8 is
// counted as if each bad byte were U+FFFD. It is safe for concurrent use.
func Count(s string) int {
	if s == "" {
		return 0
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	c := load()
	if c == nil {
		// Unreachable with the compiled-in vocabulary; a rough estimate beats
		// a panic in a measuring helper.
		return (len(s) + 3) / 4
	}
	n, err := c.Count(s)
	if err != nil {
		return (len(s) + 3) / 4
	}
	return n
}
