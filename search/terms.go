package search

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
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
	offset, start, end := 0, 0, 0
	for offset < len(input) {
		c := input[offset]
		size := 1
		var isToken bool
		if c < utf8.RuneSelf {
			// unicode.IsSpace below 0x80.
			isToken = !(c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r')
		} else {
			r, sz := utf8.DecodeRune(input[offset:])
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
	return rv
}

// indexTerms adds the document id with fields to batch b as b.Index does
// (the mapping builds the document, _all field included), with every text
// field the mapping gives the gitmem_terms analyzer analysed by
// termsAnalyzer instead. A mapping whose text fields use another analyzer
// (an index built by other code) is left as it is.
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
