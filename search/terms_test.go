package search

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
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

// TestCountTermsIsTokenFrequency compares countTerms with what Bleve made
// of the same text (the gitmem_terms analyzer, then
// analysis.TokenFrequency): the same number of tokens, terms, term bytes
// and frequencies, with frequencies and without (SkipFreqNorm), on terms
// as prepare joins them and on texts with every kind of space, invalid
// UTF-8 and U+FFFD.
func TestCountTermsIsTokenFrequency(t *testing.T) {
	bleves := newMapping().AnalyzerNamed(termsAnalyzerName)
	pieces := []string{"a", "fix", "useeffect", "go", "é", "日本", " ", "  ", "\t", "\n", "\r\n", "\v", "\f",
		"\u00a0", "\u0085", "\u2003", "\u3000", "\ufffd", "\xff", "\xe2\x82", "x1", ""}
	rng := rand.New(rand.NewPCG(5, 6))
	texts := []string{"", " ", "a", "a a", "a b a", " a  b ", "fix useeffect hook fix", "a\xffb c", "a \ufffd b", "é é\u00a0é"}
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for k := rng.IntN(40); k > 0; k-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	type tf struct {
		term string
		freq int
		locs int
	}
	flat := func(m index.TokenFrequencies) map[string]tf {
		out := map[string]tf{}
		for k, v := range m {
			out[k] = tf{string(v.Term), v.Frequency(), len(v.Locations)}
		}
		return out
	}
	for _, opts := range []index.FieldIndexingOptions{index.IndexField, index.IndexField | index.SkipFreqNorm} {
		for _, s := range texts {
			tokens := bleves.Analyze([]byte(s))
			want := analysis.TokenFrequency(tokens, nil, opts)
			got, n := countTerms(s, opts.SkipFreqNorm())
			if n != len(tokens) || !reflect.DeepEqual(flat(got), flat(want)) {
				t.Fatalf("%q (options %v):\n got %d %v\nwant %d %v", s, opts, n, flat(got), len(tokens), flat(want))
			}
			// termsField.Size from the counted bytes is what Bleve's
			// TokenFrequencies.Size would say.
			f := termsField{name: "verbatim", opts: opts, value: s}
			f.Analyze()
			g := f
			g.termBytes = -1
			if f.Size() != g.Size() || g.Size() != int(unsafe.Sizeof(g))+len(g.name)+len(s)+want.Size() {
				t.Fatalf("%q (options %v): Size %d, from the map %d, Bleve's %d", s, opts, f.Size(), g.Size(), want.Size())
			}
		}
	}
}

// TestIndexPreparedIsMapDocument checks that the documents indexPrepared
// builds are, once analysed as scorch analyses them (each field, then the
// composite _all), what the mapping builds (indexTerms, which is Bleve's
// MapDocument with its analyzer, TestIndexTermsUsesTermsAnalyzer): the same
// fields by name, type, options, array positions, length, term frequencies
// and plain-text bytes, the same _all; in a new index and a reopened one.
// A mapping that is not newMapping's is declined (termsDocOf nil).
func TestIndexPreparedIsMapDocument(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := [][5]string{
		{"fix the hook", "", "hook", "fix", ""},
		{"", "", "", "", ""},
		{"a a b", "go test go test ./...", "card text", "a", "why does it hang"},
		{"é 日本 é", "x\ty\u00a0z", "bad \xff byte", "\ufffd after", "  spaces  "},
	}
	check := func(ix *Index) {
		t.Helper()
		td := ix.termsDoc()
		if td == nil {
			t.Fatal("termsDocOf declined the index's own mapping")
		}
		for _, c := range cases {
			var got, want recorder
			if _, err := ix.indexPrepared(&got, td, "7", &c); err != nil {
				t.Fatal(err)
			}
			fields := map[string]any{fieldVerbatim: c[0], fieldOutput: c[1], fieldDistilled: c[2], fieldHead: c[3], fieldAsked: c[4]}
			if _, err := ix.indexTerms(&want, "7", fields); err != nil {
				t.Fatal(err)
			}
			if g, w := analysedDoc(got.doc), analysedDoc(want.doc); !reflect.DeepEqual(g, w) {
				t.Errorf("%q:\n got %+v\nwant %+v", c, g, w)
			}
		}
	}
	check(ix)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if ix, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	check(ix)
	ix.Close()

	other := newMapping()
	other.(*mapping.IndexMappingImpl).DefaultMapping.Properties[fieldHead].Fields[0].IncludeTermVectors = true
	if termsDocOf(other) != nil {
		t.Error("termsDocOf took a mapping with term vectors on head")
	}
}

// analysedField is what zap reads of an analysed field.
type analysedField struct {
	Name, Type   string
	Opts         index.FieldIndexingOptions
	ArrayPos     []uint64
	Len          int
	Plain        uint64
	Freqs        map[string][2]int // term → frequency, locations
	TermsAreKeys bool
}

// analysedDoc analyses d as scorch does and returns its fields sorted by
// name (composites first, marked "c:").
func analysedDoc(d *document.Document) []analysedField {
	var out []analysedField
	add := func(f index.Field, prefix string) {
		a := analysedField{Name: prefix + f.Name(), Type: string(f.EncodedFieldType()), Opts: f.Options(),
			ArrayPos: f.ArrayPositions(), Len: f.AnalyzedLength(), Plain: f.NumPlainTextBytes(),
			Freqs: map[string][2]int{}, TermsAreKeys: true}
		for k, v := range f.AnalyzedTokenFrequencies() {
			a.Freqs[k] = [2]int{v.Frequency(), len(v.Locations)}
			a.TermsAreKeys = a.TermsAreKeys && string(v.Term) == k
		}
		out = append(out, a)
	}
	d.VisitFields(func(f index.Field) {
		f.Analyze()
		d.VisitComposite(func(cf index.CompositeField) {
			cf.Compose(f.Name(), f.AnalyzedLength(), f.AnalyzedTokenFrequencies())
		})
	})
	d.VisitComposite(func(cf index.CompositeField) { add(cf, "c:") })
	d.VisitFields(func(f index.Field) { add(f, "") })
	slices.SortFunc(out, func(a, b analysedField) int { return strings.Compare(a.Name, b.Name) })
	return append(out, analysedField{Name: fmt.Sprintf("id=%s indexed=%v", d.ID(), d.Indexed())})
}
