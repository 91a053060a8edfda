package redact

import (
	"strings"
)

// Secret-ish name fragments, lower case. Finding one starts a local parse of
// "NAME = value", "NAME: value", "\"name\": \"value\"" around it.
var nameHints = []string{"pass", "pwd", "secret", "token", "key", "auth", "credential"}

// secretName classifies an identifier: "password" for password-like names
// (any non-placeholder value is a secret), "generic-secret" for token/key
// names (only random-looking values are), "" otherwise.
func secretName(name string) string {
	if name == "" {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case isLower(c), isDigit(c):
			b.WriteByte(c)
		case isUpper(c):
			b.WriteByte(c + 'a' - 'A')
		}
	}
	n := b.String()
	for _, w := range []string{"password", "passwd", "passphrase", "pwd", "dbpass", "pgpass"} {
		if strings.Contains(n, w) {
			return "password"
		}
	}
	l := strings.ToLower(name)
	if strings.Contains(n, "public") {
		// .NET PublicKeyToken, public keys: published by design.
		return ""
	}
	if strings.HasSuffix(l, "_pass") || strings.HasSuffix(l, "-pass") || strings.HasSuffix(l, ".pass") {
		return "password"
	}
	if strings.HasSuffix(n, "key") || strings.HasSuffix(n, "keys") {
		// Keys of services (AccountKey, SERVICE_ROLE_KEY, FIREBASE_ADMIN_KEY),
		// not of maps (primaryKey, cacheKey, sortKey).
		for _, w := range keyQualifiers {
			if strings.Contains(n, w) {
				return "generic-secret"
			}
		}
	}
	for _, w := range []string{"secret", "token", "apikey", "accesskey", "privatekey", "signingkey",
		"encryptionkey", "masterkey", "authkey", "sessionkey", "credential", "auth"} {
		if strings.Contains(n, w) {
			if w == "auth" && strings.Contains(n, "author") {
				continue
			}
			return "generic-secret"
		}
	}
	return ""
}

// keyQualifiers make a name ending in "key" the name of a credential.
var keyQualifiers = []string{"api", "access", "account", "admin", "app", "client", "consumer",
	"deploy", "license", "live", "master", "private", "prod", "role", "server", "service",
	"shared", "signing", "subscription", "webhook", "write", "bot", "encryption", "storage"}

// codePrefixes start values that are expressions, not literals.
var codePrefixes = []string{"process.", "os.", "env.", "config.", "settings.", "self.", "this.",
	"req.", "request.", "args.", "options.", "opts.", "ctx.", "props.", "import.", "window."}

var typeWords = map[string]bool{"string": true, "str": true, "number": true, "bool": true,
	"boolean": true, "null": true, "none": true, "nil": true, "undefined": true, "true": true,
	"false": true, "optional": true, "required": true, "text": true, "varchar": true, "any": true,
	"password": true, "secret": true, "token": true, "admin": true, "pass": true}

// acceptValue says whether v, assigned to a name of the given kind, is a
// real credential worth redacting.
func acceptValue(kind, v string) bool {
	if len(v) < 6 || len(v) > 256 || isPlaceholder(v) || strings.ContainsAny(v, " \t\r\n()") ||
		strings.Contains(v, "://") {
		return false
	}
	l := strings.ToLower(v)
	if typeWords[l] {
		return false
	}
	for _, p := range codePrefixes {
		if strings.HasPrefix(l, p) {
			return false
		}
	}
	if strings.HasPrefix(v, "**") { // markdown bold (**Save this password!**), masks
		return false
	}
	switch v[0] {
	case '/', '~':
		return false
	case '.', '@', '#', '&', '-', '%', '*':
		// Comments, flags, decorators, references — unless it is a long
		// password that merely starts with a symbol.
		if kind != "password" || len(v) < 8 || countClass(v, isDigit) == 0 {
			return false
		}
	}
	if kind == "password" {
		if strings.Contains(l, "password") || strings.Contains(l, "passwd") || isDottedIdent(v) {
			return false
		}
		// Bare words and identifiers (hashedPassword, required) are code or
		// prose; real passwords carry a digit or a symbol.
		return countClass(v, isDigit) > 0 || countClass(v, func(c byte) bool {
			return !isDigit(c) && !isUpper(c) && !isLower(c) && c != '_'
		}) > 0
	}
	return looksRandom(v)
}

// isDottedIdent matches a.b.c property chains.
func isDottedIdent(v string) bool {
	if !strings.Contains(v, ".") {
		return false
	}
	for _, part := range strings.Split(v, ".") {
		if part == "" || isDigit(part[0]) {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(isLower(c) || isUpper(c) || isDigit(c) || c == '_') {
				return false
			}
		}
	}
	return true
}

func isNameChar(c byte) bool {
	return isLower(c) || isUpper(c) || isDigit(c) || c == '_' || c == '-' || c == '.'
}

// assignments finds values assigned to secret-ish names; lower is
// asciiLower(s).
//
// One pass over lower finds where each hint occurs (nameAt: positions
// whose two bytes begin no hint are skipped); the hints are then taken in
// nameHints' order, each at its occurrences left to right, the next one
// looked for after the identifier around the last, as when each hint had
// its own strings.Index passes (before session 20, after a first pass of
// strings.Contains per hint to tell whether any occurs). The same spans in
// the same order: TestAssignmentsIsRef holds it to that code.
func assignments(s, lower string) []span {
	var at []hintAt
	for i := 0; i+1 < len(lower); i++ {
		if !namePairs.has(lower[i], lower[i+1]) {
			continue
		}
		for _, h := range nameAt[lower[i]] {
			if strings.HasPrefix(lower[i:], nameHints[h]) {
				at = append(at, hintAt{h, i})
			}
		}
	}
	if len(at) == 0 {
		return nil
	}
	var spans []span
	for h, name := range nameHints {
		from := 0
		for _, o := range at {
			if o.hint != h || o.i < from {
				continue
			}
			// The identifier around the hint.
			a, e := o.i, o.i+len(name)
			for a > 0 && isNameChar(s[a-1]) {
				a--
			}
			for e < len(s) && isNameChar(s[e]) {
				e++
			}
			from = e
			if sp, ok := parseAssignment(s, a, e); ok {
				spans = append(spans, sp)
			}
		}
	}
	return spans
}

// hintAt is an occurrence of nameHints[hint] at i.
type hintAt struct{ hint, i int }

// nameAt lists, by first byte, the indices of the nameHints beginning with
// it; namePairs holds their first two bytes (every hint is longer).
var nameAt, namePairs = func() (t [256][]int, p pairSet) {
	for h, w := range nameHints {
		t[w[0]] = append(t[w[0]], h)
		p.add(w[0], w[1])
	}
	return t, p
}()

// parseAssignment reads `name["']? *(=|:|:=|=>) *["']?value` where s[a:e] is
// the name, and returns the value's span when it should be redacted.
func parseAssignment(s string, a, e int) (span, bool) {
	kind := secretName(strings.Trim(s[a:e], ".-"))
	if kind == "" {
		return span{}, false
	}
	j := e
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j >= len(s) {
		return span{}, false
	}
	switch {
	case strings.HasPrefix(s[j:], ":="), strings.HasPrefix(s[j:], "=>"):
		j += 2
	case s[j] == '=':
		if j+1 < len(s) && s[j+1] == '=' {
			return span{}, false
		}
		j++
	case s[j] == ':':
		if j+1 < len(s) && s[j+1] == ':' {
			return span{}, false
		}
		j++
	default:
		return span{}, false
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	var quote byte
	if j < len(s) && (s[j] == '"' || s[j] == '\'' || s[j] == '`') {
		quote = s[j]
		j++
	}
	k := j
	for k < len(s) && k-j <= 256 {
		c := s[k]
		if quote != 0 {
			if c == quote || c == '\n' || c == '\\' {
				break
			}
		} else if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '"' || c == '\'' ||
			c == '`' || c == ',' || c == ';' || c == ')' || c == '}' || c == ']' || c == '&' || c == '<' {
			break
		}
		k++
	}
	v := s[j:k]
	if !acceptValue(kind, v) {
		return span{}, false
	}
	return span{a: j, b: k, kind: kind}, true
}

// asciiLower lower-cases ASCII letters only, keeping byte offsets equal:
// the lower case of s[a:b] is asciiLower(s)[a:b], so one copy serves every
// part of a string (its lines, gitleaks' fragments). s itself when it has no
// upper-case letter (no copy).
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !isUpper(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if isUpper(b[i]) {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}
