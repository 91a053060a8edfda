package hooks

import "bytes"

// Claude Code puts a structured UI copy of each tool result beside what the
// model saw (toolUseResult: whole original files, patches). It is most of a
// transcript's bytes and the reader needs one field of it, so it is cut out
// of the line with a quick top-level scan before the line is decoded.

// slimToolUseResult returns line with a large top-level toolUseResult
// replaced by {"agentId": …} (or null). Lines it cannot scan are returned
// unchanged, for the decoder to judge.
func slimToolUseResult(line []byte) []byte {
	vs, ve, ok := topLevelValue(line, "toolUseResult")
	if !ok || ve-vs < 256 {
		return line
	}
	repl := []byte("null")
	if line[vs] == '{' {
		if as, ae, ok := topLevelValue(line[vs:ve], "agentId"); ok {
			repl = append(append([]byte(`{"agentId":`), line[vs+as:vs+ae]...), '}')
		}
	}
	out := make([]byte, 0, len(line)-(ve-vs)+len(repl))
	out = append(out, line[:vs]...)
	out = append(out, repl...)
	return append(out, line[ve:]...)
}

// topLevelValue finds the span of key's value in a JSON object. It checks
// only structure (strings, nesting), not full JSON validity.
func topLevelValue(b []byte, key string) (int, int, bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return 0, 0, false
	}
	i++
	for {
		i = skipWS(b, i)
		if i >= len(b) || b[i] != '"' {
			return 0, 0, false
		}
		ke := skipString(b, i)
		if ke < 0 {
			return 0, 0, false
		}
		k := b[i+1 : ke-1]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, 0, false
		}
		vs := skipWS(b, i+1)
		ve := skipJSONValue(b, vs)
		if ve < 0 {
			return 0, 0, false
		}
		if string(k) == key {
			return vs, ve, true
		}
		i = skipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			return 0, 0, false
		}
		i++
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"',
// or -1 when it does not end.
func skipString(b []byte, i int) int {
	j := i + 1
	for j < len(b) {
		k := bytes.IndexAny(b[j:], "\"\\")
		if k < 0 {
			return -1
		}
		j += k
		if b[j] == '\\' {
			j += 2
			continue
		}
		return j + 1
	}
	return -1
}

// skipJSONValue returns the index after the value starting at b[i], or -1.
func skipJSONValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k := skipString(b, j)
				if k < 0 {
					return -1
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[j])) {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}
