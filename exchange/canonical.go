package exchange

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Canonical encodes v following RFC 8785 (JSON Canonicalization Scheme):
// object keys sorted by UTF-16 code units, no insignificant whitespace, no
// HTML escaping, numbers in ECMAScript form. Content hashes are taken over
// these bytes, so two builds of git mem write the same blob for the same
// exchange.
func Canonical(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeString(b, x)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return fmt.Errorf("number %q: %w", x, err)
		}
		return writeNumber(b, f)
	case float64:
		return writeNumber(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return lessUTF16(keys[i], keys[j]) })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := writeCanonical(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		// Anything else goes through encoding/json and back, so it takes
		// the same canonical form.
		raw, err := json.Marshal(x)
		if err != nil {
			return err
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var g any
		if err := d.Decode(&g); err != nil {
			return err
		}
		return writeCanonical(b, g)
	}
	return nil
}

// writeNumber prints f as ECMAScript's Number.prototype.toString does.
func writeNumber(b *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("number %v is not valid JSON", f)
	}
	if f == 0 {
		b.WriteByte('0')
		return nil
	}
	abs := math.Abs(f)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go prints e+21 / e-07; ECMAScript prints e+21 / e-7.
		mant, exp, _ := cut(s, 'e')
		sign := exp[0]
		digits := exp[1:]
		for len(digits) > 1 && digits[0] == '0' {
			digits = digits[1:]
		}
		b.WriteString(mant)
		b.WriteByte('e')
		b.WriteByte(sign)
		b.WriteString(digits)
		return nil
	}
	b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
	return nil
}

func cut(s string, sep byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

const hexDigits = "0123456789abcdef"

// writeString writes s as a JSON string: the escapes RFC 8785 prescribes,
// U+FFFD's escape for each byte of invalid UTF-8, every other byte as is
// and in runs, not a call per byte (TestWriteStringIsRef holds it to the
// byte-at-a-time version: content ids depend on these bytes).
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	from := 0 // s[from:i] is written as is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[from:i])
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
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			}
			i++
			from = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[from:i])
			b.WriteString(`\ufffd`)
			i++
			from = i
			continue
		}
		i += size
	}
	b.WriteString(s[from:])
	b.WriteByte('"')
}

// lessUTF16 orders strings by their UTF-16 code units, as RFC 8785 requires.
func lessUTF16(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		ua, ub := utf16Key(ra[i]), utf16Key(rb[i])
		if ua != ub {
			return ua < ub
		}
	}
	return len(ra) < len(rb)
}

// utf16Key maps a rune to a value that sorts like its first UTF-16 unit
// followed by the second (surrogates sort above U+D7FF but below U+E000).
func utf16Key(r rune) uint32 {
	if r < 0x10000 {
		if r >= 0xE000 {
			return uint32(r) << 10 // above every surrogate pair
		}
		return uint32(r) << 10
	}
	r -= 0x10000
	hi := 0xD800 + (r >> 10)
	lo := 0xDC00 + (r & 0x3FF)
	return uint32(hi)<<10 | uint32(lo-0xDC00)
}
