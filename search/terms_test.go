package search

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
)

// TestTermsAnalyzerIsBleves compares termsAnalyzer with the mapping's own
// gitmem_terms analyzer token for token (term, offsets, position, type) on
// terms as prepare joins them and on texts with every kind of space,
// invalid UTF-8 and U+FFFD, where Bleve's tokenizer stops.
func TestTermsAnalyzerIsBleves(t *testing.T) {
	bleves := newMapping().AnalyzerNamed(termsAnalyzerName)
	if bleves == nil {
		t.Fatal("no gitmem_terms analyzer in the mapping")
	}
	pieces := []string{"a", "fix", "useeffect", "go", "é", "日本", " ", "  ", "\t", "\n", "\r\n", "\v", "\f",
		"\u00a0", "\u0085", "\u2003", "\u3000", "\ufffd", "\xff", "\xe2\x82", "x1", ""}
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", " ", "a", "a b", " a  b ", "fix useeffect hook", "a\xffb c", "a \ufffd b"}
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for k := rng.IntN(30); k > 0; k-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	deref := func(ts analysis.TokenStream) []analysis.Token {
		out := make([]analysis.Token, len(ts))
		for i, tk := range ts {
			out[i] = *tk
		}
		return out
	}
	for _, s := range texts {
		want := deref(bleves.Analyze([]byte(s)))
		got := deref(termsAnalyzer{}.Analyze([]byte(s)))
		if len(want) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", s, got, want)
		}
	}
}

// TestIndexTermsUsesTermsAnalyzer checks that an index's text fields are
// analysed by termsAnalyzer (else the speed-up silently stops) and that the
// document is otherwise what Bleve's own mapping builds.
func TestIndexTermsUsesTermsAnalyzer(t *testing.T) {
	ix, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	fields := map[string]any{fieldVerbatim: "fix the hook", fieldOutput: "", fieldDistilled: "hook", fieldHead: "fix", fieldAsked: ""}
	var got recorder
	if _, err := ix.indexTerms(&got, "7", fields); err != nil {
		t.Fatal(err)
	}
	want := document.NewDocument("7")
	if err := ix.idx.Mapping().MapDocument(want, fields); err != nil {
		t.Fatal(err)
	}
	if len(got.doc.Fields) != len(want.Fields) || got.doc.ID() != "7" {
		t.Fatalf("fields: got %d, want %d", len(got.doc.Fields), len(want.Fields))
	}
	// Bleve walks the map in random order: match the fields by name.
	byName := map[string]document.Field{}
	for _, w := range want.Fields {
		byName[w.Name()] = w
	}
	texts := 0
	for _, f := range got.doc.Fields {
		w := byName[f.Name()]
		if w == nil || reflect.TypeOf(f) != reflect.TypeOf(w) {
			t.Fatalf("field %s %T: the mapping built %T", f.Name(), f, w)
		}
		tf, ok := f.(*document.TextField)
		if !ok {
			continue
		}
		texts++
		if _, ok := tf.Analyzer().(termsAnalyzer); !ok {
			t.Errorf("field %s analysed by %T", tf.Name(), tf.Analyzer())
		}
		wf := w.(*document.TextField)
		if tf.Options() != wf.Options() || string(tf.Value()) != string(wf.Value()) || !reflect.DeepEqual(tf.ArrayPositions(), wf.ArrayPositions()) {
			t.Errorf("field %s differs from the mapping's", tf.Name())
		}
		tf.Analyze()
		wf.Analyze()
		if tf.AnalyzedLength() != wf.AnalyzedLength() || !reflect.DeepEqual(tf.AnalyzedTokenFrequencies(), wf.AnalyzedTokenFrequencies()) {
			t.Errorf("field %s: analysed differently", tf.Name())
		}
	}
	if texts != len(fields) {
		t.Errorf("%d text fields, want %d", texts, len(fields))
	}
}

type recorder struct{ doc *document.Document }

func (r *recorder) IndexAdvanced(d *document.Document) error { r.doc = d; return nil }
