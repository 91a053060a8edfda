package exchange

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// writeStringRef is writeString as it was before it wrote runs (session
// 16): a byte at a time.
func writeStringRef(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if c < 0x20 {
					b.WriteString(`\u00`)
					b.WriteByte(hexDigits[c>>4])
					b.WriteByte(hexDigits[c&0xf])
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\ufffd`)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// TestWriteStringIsRef: the blobs' bytes (and so every content id) depend
// on writeString; it must write what the byte-at-a-time version wrote, on
// every control byte, escape, DEL, valid and invalid UTF-8 (cut runes,
// surrogates, overlong forms) and U+FFFD, U+2028, in runs of every length.
func TestWriteStringIsRef(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	pieces := []string{"a", "Z", " ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f",
		"é", "中", "😀", "\ufffd", "\u2028", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80",
		"<&>", "plain words here", strings.Repeat("x", 300)}
	texts := []string{"", "a", "\"", "\xff", "é", "\x00"}
	for range 20000 {
		var b strings.Builder
		for range r.Intn(20) {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for range 2000 { // random bytes
		b := make([]byte, r.Intn(40))
		for i := range b {
			b[i] = byte(r.Intn(256))
		}
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		var got, want bytes.Buffer
		got.WriteString("x") // something before, as in an object
		want.WriteString("x")
		writeString(&got, s)
		writeStringRef(&want, s)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("writeString(%q) = %q, want %q", s, got.Bytes(), want.Bytes())
		}
	}
}
