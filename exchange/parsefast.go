package exchange

import (
	"bytes"
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"
)

// parseFast decodes one record straight into an Exchange from jsontext's
// tokens, giving what Parse's encoding/json path gives (a map of any, then
// FromMap) for every record it takes; anything else it declines (ok false)
// and Parse decodes the record the former way, which also words the errors.
// Declined: a syntax error, a duplicate name (encoding/json keeps the last,
// jsontext refuses), an escape of a lone surrogate (encoding/json writes
// U+FFFD, jsontext refuses), more than whitespace after the value, a known
// field of the wrong type, nesting past maxFastDepth. Why: the map of any
// and encoding/json's reflection were ~0.35 CPU-s of `git mem add` of the
// coding corpus, the largest piece of its input side (docs/BENCHMARKS.md,
// session 22); jsontext's tokens are the same grammar, case-sensitive like
// FromMap's look-ups. Same values: TestParseFastIsParse.
func parseFast(data []byte) (ex *Exchange, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	ex = &Exchange{}
	sawTurns := false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		name := tok.String()
		if f := ex.stringField(name); f != nil {
			if *f, ok = readFastString(dec); !ok {
				return nil, false
			}
			continue
		}
		switch name {
		case "turns":
			if !readFastTurns(dec, ex) {
				return nil, false
			}
			sawTurns = true
		default:
			v, ok := readFastAny(dec, 1)
			if !ok {
				return nil, false
			}
			if ex.Extra == nil {
				ex.Extra = map[string]any{}
			}
			ex.Extra[name] = v
		}
	}
	if _, err := dec.ReadToken(); err != nil || !sawTurns {
		return nil, false
	}
	if len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) != 0 {
		return nil, false
	}
	return ex, true
}

// maxFastDepth bounds parseFast's nesting (its recursion); deeper records
// go the former way, whose own limit then applies.
const maxFastDepth = 1000

// readFastString reads a string or null (""), as FromMap takes a field
// it knows.
func readFastString(dec *jsontext.Decoder) (string, bool) {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		return tok.String(), true
	case 'n':
		_, err := dec.ReadToken()
		return "", err == nil
	}
	return "", false
}

// readFastTurns reads the turns array into ex.Turns.
func readFastTurns(dec *jsontext.Decoder, ex *Exchange) bool {
	if dec.PeekKind() != '[' {
		return false
	}
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	for dec.PeekKind() != ']' {
		if dec.PeekKind() != '{' {
			return false
		}
		if _, err := dec.ReadToken(); err != nil {
			return false
		}
		t := Turn{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return false
			}
			name := tok.String()
			if f := t.stringField(name); f != nil {
				s, ok := readFastString(dec)
				if !ok {
					return false
				}
				*f = s
				continue
			}
			v, ok := readFastAny(dec, 3)
			if !ok {
				return false
			}
			if name == "input" {
				t.Input = v
				continue
			}
			if t.Extra == nil {
				t.Extra = map[string]any{}
			}
			t.Extra[name] = v
		}
		if _, err := dec.ReadToken(); err != nil {
			return false
		}
		ex.Turns = append(ex.Turns, t)
	}
	_, err := dec.ReadToken()
	return err == nil
}

// readFastAny reads any value as encoding/json decodes it into an any
// with UseNumber: map[string]any, a non-nil []any, string, json.Number
// (the literal as written), bool or nil.
func readFastAny(dec *jsontext.Decoder, depth int) (any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	switch dec.PeekKind() {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil, false
		}
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, false
			}
			name := tok.String() // before the next read, which invalidates tok
			v, ok := readFastAny(dec, depth+1)
			if !ok {
				return nil, false
			}
			m[name] = v
		}
		_, err := dec.ReadToken()
		return m, err == nil
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, false
		}
		a := make([]any, 0)
		for dec.PeekKind() != ']' {
			v, ok := readFastAny(dec, depth+1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
		}
		_, err := dec.ReadToken()
		return a, err == nil
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, false
	}
	switch tok.Kind() {
	case '"':
		return tok.String(), true
	case '0':
		return json.Number(tok.String()), true
	case 't', 'f':
		return tok.Bool(), true
	case 'n':
		return nil, true
	}
	return nil, false
}
