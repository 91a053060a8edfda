package exchange

import (
	"bytes"
	"strings"
	"testing"
)

// TestCanonicalSized: Exchange.Canonical, its buffer sized by sizeHint, is
// Canonical of its Map, and the hint is not far past what is written for
// exchanges of plain text (the spare capacity lives as long as the blob).
func TestCanonicalSized(t *testing.T) {
	lines := []string{
		`{"id":"a","turns":[{"role":"user","text":"hi"}]}`,
		`{"id":"b","session":"s","time":"2025-01-02T03:04:05Z","project":"p","agent":"claude","turns":[{"role":"user","text":"fix \"it\"\n\tnow"},{"role":"assistant","text":"ok"},{"role":"tool","name":"bash","input":{"cmd":"go test ./...","n":1.50,"z":[1,null,true]},"text":"` + strings.Repeat("x\\u0001\\\\", 3000) + `"}],"extra":{"k":"v"}}`,
		`{"id":"c","turns":[{"role":"user","text":"` + strings.Repeat("é😀 plain words ", 2000) + `","x-unknown":[1,2]}]}`,
	}
	for _, l := range lines {
		ex, err := Parse([]byte(l))
		if err != nil {
			t.Fatalf("%.40s: %v", l, err)
		}
		want, err := Canonical(ex.Map())
		if err != nil {
			t.Fatal(err)
		}
		got := ex.Canonical()
		if !bytes.Equal(got, want) {
			t.Fatalf("%.40s: Canonical\n%s\nwant\n%s", l, got, want)
		}
		if h := ex.sizeHint(); h > 2*len(got)+256 {
			t.Errorf("%.40s: hint %d for %d bytes", l, h, len(got))
		}
	}
}
