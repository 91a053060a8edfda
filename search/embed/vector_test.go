package embed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/internal/shared"
)

// vectorBefore is Builtin.vector as it was before session 27 (a string
// per feature, a []rune per word, a map of weights), the oracle of
// TestVectorIsBefore.
func vectorBefore(a *Analyzer, text string) []float32 {
	kindWeight := map[uint64]float64{kindTerm: 1.0, kindBigram: 0.6, kindGram: 0.25}
	fnv := func(kind uint64, s string) uint64 {
		h := uint64(14695981039346656037)
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		return h&^(3<<62) | kind<<62
	}
	tf := map[uint64]float64{}
	add := func(kind uint64, s string) {
		tf[fnv(kind, s)] += 1
	}
	var prev string
	Words(text, func(w string, part bool) {
		t := a.Term(w)
		if t == "" {
			return
		}
		add(kindTerm, t)
		if !part {
			if prev != "" {
				add(kindBigram, prev+" "+t)
			}
			prev = t
			lw := []rune("^" + strings.ToLower(w) + "$")
			if len(lw) <= MaxWordBytes {
				for n := 3; n <= 5; n++ {
					for j := 0; j+n <= len(lw); j++ {
						add(kindGram, string(lw[j:j+n]))
					}
				}
			}
		}
	})
	keys := make([]uint64, 0, len(tf))
	for k := range tf {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	acc := make([]float64, BuiltinDims)
	for _, k := range keys {
		w := (1 + math.Log(tf[k])) * kindWeight[k>>62]
		idx := (k >> 1) % BuiltinDims
		if k&1 == 1 {
			w = -w
		}
		acc[idx] += w
	}
	var norm float64
	for _, v := range acc {
		norm += v * v
	}
	out := make([]float32, BuiltinDims)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, v := range acc {
		out[i] = float32(v / norm)
	}
	return out
}

// TestVectorIsBefore: the builtin embedder's vectors are bit for bit the
// former code's, for one Analyzer used text after text (its reused
// buffers) and a new one, on made texts (ASCII and Unicode words whose
// lower case changes length, digits, identifiers, words of 60-70 runes
// around MaxWordBytes, invalid bytes, empty; seed logged, EMBED_SEED
// replays it) and on the coding corpus's turn texts (when there).
func TestVectorIsBefore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("EMBED_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("EMBED_SEED: %v", err)
		}
	}
	t.Logf("seed %d (EMBED_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 19))
	pieces := []string{"retry", "Retries", "authMiddleware", "HTTPServer", "v2", "the", "a", "İstanbul", "ΣΟΦΙΑ", "Ǆemal",
		"KELVIN\u212a", "straße", "日本語", "x_y", "pkg/errors", "a.b-c:d", " ", "\n", ", ", "\xff", "_", "ß", "Ⅻ", "ǅ"}
	var texts []string
	for len(texts) < 5000 {
		var b strings.Builder
		for k := r.IntN(30); k > 0; k-- {
			if r.IntN(20) == 0 {
				b.WriteString(strings.Repeat([]string{"a", "B", "é", "Σ", "9"}[r.IntN(5)], 55+r.IntN(15)))
			} else {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if r.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
	}
	texts = append(texts, "")
	var corpus []string
	if files, _ := filepath.Glob(filepath.Join(shared.Dir(), "eval/coding/*/exchanges.jsonl")); len(files) > 0 {
		corpus = codingTexts(t)
	}
	texts = append(texts, corpus...)
	t.Logf("%d texts, %d of the coding corpus", len(texts), len(corpus))
	kept, ref := NewAnalyzer(), NewAnalyzer()
	b := NewBuiltin()
	for i, text := range texts {
		want := vectorBefore(ref, text)
		if got := b.vector(kept, text); !slices.Equal(got, want) {
			t.Fatalf("text %d %q: the kept Analyzer's vector differs", i, text)
		}
		if i%50 == 0 {
			if got := b.Vector(text); !slices.Equal(got, want) {
				t.Fatalf("text %d %q: a new Analyzer's vector differs", i, text)
			}
		}
	}
}
