package embed

import (
	"context"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/viterin/vek/vek32"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"The retries are failing", []string{"retri", "fail"}},
		{"authMiddleware", []string{"authmiddlewar", "auth", "middlewar"}},
		{"see internal/auth_middleware.go.", []string{"see", "internal/auth_middleware.go", "intern", "auth", "middlewar", "go"}},
		{"HTTPServer v2", []string{"httpserver", "http", "server", "v2", "v", "2"}},
		{"retry_timeout=30s", []string{"retry_timeout", "retri", "timeout", "30s", "30", "s"}},
		{"", nil},
	}
	for _, tc := range tests {
		if got := Analyze(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Analyze(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBuiltin(t *testing.T) {
	b := NewBuiltin()
	texts := []string{"fix the retry timeout in authMiddleware", "retries time out in the auth middleware",
		"bake a chocolate cake for the party", ""}
	v1, _ := b.Embed(context.Background(), texts)
	v2, _ := b.Embed(context.Background(), texts)
	if !reflect.DeepEqual(v1, v2) {
		t.Fatal("builtin embedder is not deterministic")
	}
	for i, v := range v1[:3] {
		if len(v) != BuiltinDims {
			t.Fatalf("dims %d", len(v))
		}
		if n := vek32.Dot(v, v); math.Abs(float64(n)-1) > 1e-5 {
			t.Errorf("text %d: norm² %v", i, n)
		}
	}
	if vek32.Dot(v1[3], v1[3]) != 0 {
		t.Error("empty text has a non-zero vector")
	}
	near, far := vek32.Dot(v1[0], v1[1]), vek32.Dot(v1[0], v1[2])
	if near < 0.3 || near <= far+0.2 {
		t.Errorf("cos(related) = %.3f, cos(unrelated) = %.3f", near, far)
	}
}

func TestAmerican(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"colour", "color"}, {"colours", "colors"}, {"coloured", "colored"}, {"behaviour", "behavior"},
		{"favourite", "favorite"}, {"neighbourhood", "neighborhood"},
		{"initialise", "initialize"}, {"initialised", "initialized"}, {"initialisation", "initialization"},
		{"serialiser", "serializer"}, {"optimising", "optimizing"}, {"normalises", "normalizes"},
		{"analyse", "analyze"}, {"analysed", "analyzed"},
		{"cancelled", "canceled"}, {"labelling", "labeling"}, {"modeller", "modeler"},
		{"centre", "center"}, {"centres", "centers"}, {"centred", "centered"},
		{"grey", "gray"}, {"licence", "license"}, {"catalogue", "catalog"},
		// the same in both, or not a British form of a listed stem
		{"hour", "hour"}, {"four", "four"}, {"tour", "tour"}, {"promise", "promise"}, {"raise", "raise"},
		{"analysis", "analysis"}, {"analyst", "analyst"}, {"characteristic", "characteristic"},
		{"realistic", "realistic"}, {"specialist", "specialist"}, {"totally", "totally"},
		{"equally", "equally"}, {"central", "central"}, {"color", "color"}, {"initialize", "initialize"},
		{"modeling", "modeling"}, {"colonel", "colonel"}, {"armistice", "armistice"}, {"odd", "odd"},
	} {
		if got := American(c.in); got != c.want {
			t.Errorf("American(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Both spellings reach the same index term, also as a part of an identifier.
	for _, text := range []string{"colours", "paint-colour", "Colour"} {
		if got := Analyze(text); !slices.Contains(got, Term("color")) {
			t.Errorf("Analyze(%q) = %q, lacks %q", text, got, Term("color"))
		}
	}
}
