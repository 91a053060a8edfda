package redact

import "strings"

// PrivateMark replaces a <private>…</private> span.
var PrivateMark = mark("private")

// cutPrivate removes every <private>…</private> span of s (tags matched
// without regard to case); an unterminated <private> cuts to the end of s.
// The convention users know from other agent-memory tools: what they mark
// private is never stored, not even redacted.
func cutPrivate(s string) (string, int) {
	out, _, n := cutPrivateLower(s)
	return out, n
}

// cutPrivateLower is cutPrivate that also returns asciiLower of its result,
// which the rules read next: the copy it made to find the tags serves them
// when nothing was cut.
func cutPrivateLower(s string) (out, lower string, n int) {
	if !strings.Contains(s, "<") {
		return s, asciiLower(s), 0
	}
	l := asciiLower(s)
	if !strings.Contains(l, "<private>") {
		return s, l, 0
	}
	var b strings.Builder
	last := 0
	for {
		i := strings.Index(l[last:], "<private>")
		if i < 0 {
			break
		}
		i += last
		b.WriteString(s[last:i])
		b.WriteString(PrivateMark)
		n++
		j := strings.Index(l[i:], "</private>")
		if j < 0 {
			last = len(s)
			break
		}
		last = i + j + len("</private>")
	}
	b.WriteString(s[last:])
	out = b.String()
	return out, asciiLower(out), n
}
