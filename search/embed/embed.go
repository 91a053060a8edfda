// Package embed turns text into vectors for the distilled-vector layer of
// git mem search: a builtin embedder that needs no model file and no network
// (the default); package openaiembed holds the one for an OpenAI-compatible
// /v1/embeddings endpoint, apart, so that what searches with the builtin
// one does not link openai-go (+~2 ms of package initialisers at every
// start; docs/BENCHMARKS.md, session 24).
package embed

import (
	"context"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Embedder maps texts to vectors of Dims() float32s. Name identifies the
// model and its version ("builtin/1", "openai/text-embedding-3-small"): the
// index records it and refuses to mix vectors of two embedders.
type Embedder interface {
	Name() string
	Dims() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// BuiltinDims is the width of the builtin embedder's vectors.
const BuiltinDims = 384

// Builtin is a hashed bag-of-features embedder ("feature hashing"): no model
// file, no network, a pure function of the text, identical to the bit on
// every machine. It captures lexical overlap that BM25 misses: Snowball
// stems (retry/retries/retrying agree), word bigrams (a little word order),
// character 3–5-grams of every word (typos, inflections, partial
// identifiers: "middlewar" still overlaps "middleware") and identifier parts
// (authMiddleware shares features with "auth middleware"). It does not know
// synonyms: "car" and "automobile" share nothing. Features are hashed into
// BuiltinDims buckets with a sign bit, weighted 1+ln(tf) (sublinear TF) and
// the vector is L2-normalised so a dot product is the cosine.
type Builtin struct{}

// NewBuiltin returns the default embedder.
func NewBuiltin() Builtin { return Builtin{} }

// Name includes a version: change any feature or weight and bump it, so old
// indexes are reported as mismatched instead of silently mixing vectors.
func (Builtin) Name() string { return "builtin/1" }

// Dims is BuiltinDims.
func (Builtin) Dims() int { return BuiltinDims }

// Embed never fails and ignores ctx: it is CPU-bound, so it spreads the
// texts over GOMAXPROCS goroutines (each vector is still a pure function of
// its text).
func (b Builtin) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	workers := min(runtime.GOMAXPROCS(0), (len(texts)+15)/16)
	if workers <= 1 {
		a := NewAnalyzer()
		for i, t := range texts {
			out[i] = b.vector(a, t)
		}
		return out, nil
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			a := NewAnalyzer()
			for i := w; i < len(texts); i += workers {
				out[i] = b.vector(a, texts[i])
			}
		}(w)
	}
	wg.Wait()
	return out, nil
}

// Feature kinds and their weights: whole terms dominate, char n-grams only
// nudge (there are many of them per word).
const (
	kindTerm   = 1
	kindBigram = 2
	kindGram   = 3
)

var kindWeights = [4]float64{kindTerm: 1.0, kindBigram: 0.6, kindGram: 0.25}

// Vector embeds one text.
func (b Builtin) Vector(text string) []float32 { return b.vector(NewAnalyzer(), text) }

func (Builtin) vector(a *Analyzer, text string) []float32 {
	// The features' hashes and counts, without a string per feature: a
	// bigram is hashed as prev, ' ', t in turn, a gram as the bytes of
	// its runes in the lower-cased word (session 27: the strings and the
	// []rune were a third of the builtin's ~0.19 CPU-s in the coding
	// add). The same keys as fnv64 of the strings (TestVectorIsBefore).
	if a.tf == nil {
		a.tf = map[uint64]float64{}
	}
	tf := a.tf
	clear(tf)
	var prev string
	Words(text, func(w string, part bool) {
		t := a.Term(w)
		if t == "" {
			return
		}
		tf[fnvKey(kindTerm, fnvAdd(fnvOffset, t))]++
		if !part {
			if prev != "" {
				tf[fnvKey(kindBigram, fnvAdd(fnvByte(fnvAdd(fnvOffset, prev), ' '), t))]++
			}
			prev = t
			a.grams(w)
		}
	})
	// Sum in a fixed order so float rounding is identical on every run.
	keys := make([]uint64, 0, len(tf))
	for k := range tf {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	acc := make([]float64, BuiltinDims)
	for _, k := range keys {
		w := (1 + math.Log(tf[k])) * kindWeights[k>>62]
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

// grams counts in a.tf the character 3-5-grams of "^" + lower-case w +
// "$" (in runes) when that is at most MaxWordBytes runes: each gram's
// bytes are those of string(runes[j:j+n]) of the former code, w being
// valid UTF-8 (Words emits letters, digits and '_').
func (a *Analyzer) grams(w string) {
	lw := append(a.gram[:0], '^')
	if isASCII(w) {
		for i := 0; i < len(w); i++ {
			c := w[i]
			if isUpperASCII(c) {
				c += 'a' - 'A'
			}
			lw = append(lw, c)
		}
	} else {
		lw = append(lw, strings.ToLower(w)...)
	}
	lw = append(lw, '$')
	a.gram = lw
	// at[j] is where rune j begins; at[len] = len(lw).
	at := a.gramAt[:0]
	for i := range string(lw) {
		at = append(at, i)
	}
	runes := len(at)
	at = append(at, len(lw))
	a.gramAt = at
	if runes > MaxWordBytes {
		return
	}
	for n := 3; n <= 5; n++ {
		for j := 0; j+n <= runes; j++ {
			h := fnvOffset
			for _, c := range lw[at[j]:at[j+n]] {
				h = fnvByte(h, c)
			}
			a.tf[fnvKey(kindGram, h)]++
		}
	}
}

// fnvOffset is FNV-1a's starting hash.
const fnvOffset = uint64(14695981039346656037)

// fnvByte and fnvAdd go on with FNV-1a over a byte and a string.
func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * 1099511628211 }

func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = fnvByte(h, s[i])
	}
	return h
}

// fnvKey puts the feature kind in the top two bits of h (so the weight
// can be recovered from the key).
func fnvKey(kind, h uint64) uint64 { return h&^(3<<62) | kind<<62 }
