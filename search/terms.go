package search

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// termsAnalyzerName names, in every index's mapping, the analyzer of the
// text fields: Bleve's whitespace tokenizer alone.
const termsAnalyzerName = "gitmem_terms"

// termsAnalyzer splits a field's pre-analysed terms exactly as the mapping's
// gitmem_terms analyzer does (Bleve's whitespace tokenizer, no filters):
// the same tokens, offsets, positions and types, and the same stop at the
// first invalid UTF-8 byte or U+FFFD. It is faster on what it is given
// (ASCII terms joined by single spaces): bytes below 0x80 are tested
// without decoding, and the tokens come from one allocation per field, not
// one each. Bleve's tokenizer was 0.54 of 11 CPU-s of `git mem add` of the
// coding corpus (docs/BENCHMARKS.md, "Session 13, ingest").
type termsAnalyzer struct{}

func (termsAnalyzer) Analyze(input []byte) analysis.TokenStream {
	n := 1
	for _, c := range input {
		if c == ' ' {
			n++
		}
	}
	rv := make(analysis.TokenStream, 0, n)
	slab := make([]analysis.Token, n)
	emit := func(start, end int) {
		var t *analysis.Token
		if len(rv) < len(slab) {
			t = &slab[len(rv)]
		} else {
			t = new(analysis.Token)
		}
		*t = analysis.Token{Term: input[start:end], Start: start, End: end, Position: len(rv) + 1, Type: analysis.AlphaNumeric}
		rv = append(rv, t)
	}
	// input is only read while Analyze runs: a string over its bytes.
	whitespaceTokens(unsafe.String(unsafe.SliceData(input), len(input)), emit)
	return rv
}

// indexTerms adds the document id with fields to batch b as b.Index does
// (the mapping builds the document, _all field included), with every text
// field the mapping gives the gitmem_terms analyzer analysed by
// termsAnalyzer instead. A mapping whose text fields use another analyzer
// (an index built by other code) is left as it is. Add uses
// indexPrepared when the index's mapping is newMapping's (termsDocs).
func (ix *Index) indexTerms(b batch, id string, fields map[string]any) (*document.Document, error) {
	if e, ok := ix.idx.(interface{ FireIndexEvent() }); ok {
		e.FireIndexEvent()
	}
	m := ix.idx.Mapping()
	doc := document.NewDocument(id)
	if err := m.MapDocument(doc, fields); err != nil {
		return nil, fmt.Errorf("map document %s: %w", id, err)
	}
	terms := m.AnalyzerNamed(termsAnalyzerName)
	for i, f := range doc.Fields {
		if tf, ok := f.(*document.TextField); ok && terms != nil && tf.Analyzer() == terms {
			doc.Fields[i] = document.NewTextFieldCustom(tf.Name(), tf.ArrayPositions(), tf.Value(), tf.Options(), termsAnalyzer{})
		}
	}
	return doc, b.IndexAdvanced(doc)
}

// batch is the part of *bleve.Batch indexTerms uses.
type batch interface {
	IndexAdvanced(*document.Document) error
}

// termsDoc is how newMapping's mapping builds a document of our five text
// fields, learnt once per index from the mapping itself (termsDocOf): the
// fields' names and indexing options, and the _all field's.
type termsDoc struct {
	names   [5]string
	opts    [5]index.FieldIndexingOptions
	allOpts index.FieldIndexingOptions
}

// termsDocOf returns how m builds a document of the five text fields, or
// nil when m is not newMapping's (then indexTerms builds each document).
// MapDocument of the five fields is what the built documents must equal:
// each a text field analysed by gitmem_terms, no term vectors (the
// frequencies carry no locations), none in _all, and one composite _all.
func termsDocOf(m mapping.IndexMapping) *termsDoc {
	want, err1 := json.Marshal(newMapping())
	got, err2 := json.Marshal(m)
	if err1 != nil || err2 != nil || string(got) != string(want) {
		return nil
	}
	td := &termsDoc{names: [5]string{fieldVerbatim, fieldOutput, fieldDistilled, fieldHead, fieldAsked}}
	fields := map[string]any{}
	for _, n := range td.names {
		fields[n] = "x"
	}
	doc := document.NewDocument("0")
	if m.MapDocument(doc, fields) != nil || len(doc.Fields) != len(td.names) || len(doc.CompositeFields) != 1 ||
		doc.CompositeFields[0].Name() != "_all" {
		return nil
	}
	terms := m.AnalyzerNamed(termsAnalyzerName)
	for _, f := range doc.Fields {
		tf, ok := f.(*document.TextField)
		if !ok || terms == nil || tf.Analyzer() != terms || tf.Options().IncludeTermVectors() || len(tf.ArrayPositions()) != 0 {
			return nil
		}
		i := slices.Index(td.names[:], tf.Name())
		if i < 0 {
			return nil
		}
		td.opts[i] = tf.Options()
	}
	td.allOpts = doc.CompositeFields[0].Options()
	return td
}

// indexPrepared adds the document id whose five text fields are texts (in
// termsDoc's order: verbatim, output, distilled, head, asked; each terms
// joined by spaces, as prepare makes them) to batch b: the document
// MapDocument and indexTerms build, without the mapping's walk or the
// copy of each text, its fields termsFields.
func (ix *Index) indexPrepared(b batch, td *termsDoc, id string, texts *[5]string) (*document.Document, error) {
	if e, ok := ix.idx.(interface{ FireIndexEvent() }); ok {
		e.FireIndexEvent()
	}
	doc := document.NewDocument(id)
	fs := new([5]termsField)
	for i := range fs {
		fs[i] = termsField{name: td.names[i], opts: td.opts[i], value: texts[i]}
		doc.AddField(&fs[i])
	}
	doc.AddField(document.NewCompositeFieldWithIndexingOptions("_all", true, []string{}, td.names[:], td.allOpts))
	doc.SetIndexed()
	return doc, b.IndexAdvanced(doc)
}

// termsField is a text field of terms joined by spaces, analysed as
// gitmem_terms (Bleve's whitespace tokenizer) and analysis.TokenFrequency
// would: the same tokens, so the same length and term frequencies, but
// counted in one pass over the text, with no token list, a term's key a
// substring of the text and its TokenFreq from one allocation per field.
// Bleve's analysis of the coding corpus (termsAnalyzer 0.39 s,
// TokenFrequency 0.28 s of 7.4 CPU-s) was a tenth of `git mem add`
// (docs/BENCHMARKS.md, "Session 20, ingest: Bleve's share"). Our own code:
// Bleve offers no way to hand it counted terms but a document.Field.
type termsField struct {
	name   string
	opts   index.FieldIndexingOptions
	value  string
	length int
	freqs  index.TokenFrequencies
	// termBytes: the bytes of freqs' distinct terms, counted by countTerms
	// (-1: not counted, Size asks freqs).
	termBytes int
}

var noArrayPositions = []uint64{}

func (f *termsField) Name() string                        { return f.name }
func (f *termsField) ArrayPositions() []uint64            { return noArrayPositions }
func (f *termsField) Options() index.FieldIndexingOptions { return f.opts }
func (f *termsField) Value() []byte                       { return []byte(f.value) }
func (f *termsField) Text() string                        { return f.value }
func (f *termsField) NumPlainTextBytes() uint64           { return uint64(len(f.value)) }
func (f *termsField) EncodedFieldType() byte              { return 't' }
func (f *termsField) AnalyzedLength() int                 { return f.length }

func (f *termsField) AnalyzedTokenFrequencies() index.TokenFrequencies { return f.freqs }

// Size is what Bleve's accounting asks of each analysed document (scorch
// adds it to its memory statistics, nothing else). freqs.Size walks the
// map, ~0.09 CPU-s of the coding add (docs/BENCHMARKS.md, session 25):
// for counted terms (no locations) it is a sum of the count and the terms'
// bytes, which countTerms knows.
func (f *termsField) Size() int {
	n := int(unsafe.Sizeof(*f)) + len(f.name) + len(f.value)
	switch {
	case f.freqs == nil:
	case f.termBytes >= 0:
		c := freqSizes()
		n += c.empty + len(f.freqs)*c.entry + 2*f.termBytes
	default:
		n += f.freqs.Size()
	}
	return n
}

// freqSizes are TokenFrequencies.Size's constants, learnt from it: an
// empty map's, and each entry's without its key's and Term's bytes (each
// counted once as a key and once as a Term) when it has no locations.
var freqSizes = sync.OnceValue(func() (c struct{ empty, entry int }) {
	c.empty = index.TokenFrequencies{}.Size()
	c.entry = index.TokenFrequencies{"": &index.TokenFreq{}}.Size() - c.empty
	return c
})

func (f *termsField) Analyze() {
	if f.opts.IncludeTermVectors() {
		// Not built by termsDocOf: locations are analysis.TokenFrequency's.
		tokens := termsAnalyzer{}.Analyze([]byte(f.value))
		f.length, f.freqs = len(tokens), analysis.TokenFrequency(tokens, noArrayPositions, f.opts)
		f.termBytes = -1
		return
	}
	f.freqs, f.length, f.termBytes = countTermBytes(f.value, f.opts.SkipFreqNorm())
}

// countTerms is analysis.TokenFrequency(termsAnalyzer{}.Analyze(s)) without
// term vectors, and the number of tokens: the tokenizer's loop of
// termsAnalyzer.Analyze, whitespaceTokens (same tokens, same stop at invalid UTF-8 or
// U+FFFD), each token counted as it is found. A TokenFreq's Term is the
// term's bytes in s, read only.
func countTerms(s string, skipFreq bool) (index.TokenFrequencies, int) {
	rv, n, _ := countTermBytes(s, skipFreq)
	return rv, n
}

// countTermBytes is countTerms that also returns the bytes of the distinct
// terms (termsField.Size).
func countTermBytes(s string, skipFreq bool) (index.TokenFrequencies, int, int) {
	// n is the tokens when s is terms joined by single spaces; a field of
	// the coding corpus has a quarter as many distinct terms (4.7 million
	// tokens, 1.2 million distinct in their fields): the map and the first
	// slab of TokenFreqs are sized for that (analysis.TokenFrequency sizes
	// its map for every token), later slabs as large as the one before.
	n := 1 + strings.Count(s, " ")
	rv := make(index.TokenFrequencies, n/4)
	slab := make([]index.TokenFreq, max(16, n/4))
	used, count, termBytes := 0, 0, 0
	emit := func(start, end int) {
		count++
		term := s[start:end]
		if tf, ok := rv[term]; ok {
			if !skipFreq {
				tf.SetFrequency(tf.Frequency() + 1)
			}
			return
		}
		var tf *index.TokenFreq
		if used < len(slab) {
			tf = &slab[used]
			used++
		} else {
			slab, used = make([]index.TokenFreq, max(16, len(slab))), 1
			tf = &slab[0]
		}
		tf.Term = unsafe.Slice(unsafe.StringData(term), len(term))
		if !skipFreq {
			tf.SetFrequency(1)
		}
		rv[term] = tf
		termBytes += len(term)
	}
	whitespaceTokens(s, emit)
	return rv, count, termBytes
}

// whitespaceTokens calls emit with the byte range of each token of s as
// Bleve's whitespace tokenizer finds them: runs of bytes that are not
// Unicode space, up to the first invalid UTF-8 byte or U+FFFD, where it
// stops. Bytes below 0x80 are tested without decoding.
func whitespaceTokens(s string, emit func(start, end int)) {
	offset, start, end := 0, 0, 0
	for offset < len(s) {
		c := s[offset]
		size := 1
		var isToken bool
		if c < utf8.RuneSelf {
			// unicode.IsSpace below 0x80.
			isToken = !(c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r')
		} else {
			r, sz := utf8.DecodeRuneInString(s[offset:])
			if r == utf8.RuneError {
				break // where Bleve's tokenizer stops
			}
			size = sz
			isToken = !unicode.IsSpace(r)
		}
		if isToken {
			end = offset + size
		} else {
			if end-start > 0 {
				emit(start, end)
			}
			start = offset + size
			end = start
		}
		offset += size
	}
	if end-start > 0 {
		emit(start, end)
	}
}
