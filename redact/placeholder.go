package redact

import "strings"

// placeholderWords stand for a secret in docs and examples. A value is a
// placeholder when it is one of them, or made only of them and filler
// (your_api_key_here), never merely because it contains one:
// "Summer123456!" and "Yourself#9931" are passwords.
var placeholderWords = map[string]bool{
	"xxx": true, "xxxx": true, "changeme": true, "change": true, "me": true, "dummy": true,
	"placeholder": true, "example": true, "sample": true, "fake": true, "redacted": true,
	"replace": true, "insert": true, "here": true, "your": true, "yours": true, "my": true,
	"todo": true, "fixme": true, "tbd": true, "secret": true, "password": true, "passwd": true,
	"pass": true, "token": true, "key": true, "api": true, "apikey": true, "access": true,
	"value": true, "test": true, "testing": true, "foo": true, "bar": true, "baz": true,
	"goes": true, "put": true, "the": true, "a": true, "new": true, "default": true, "none": true,
	"null": true, "empty": true, "hidden": true, "masked": true, "mask": true, "string": true,
	"abc123": true, "123456": true, "000000": true, "12345678": true, "qwerty": true,
	"enter": true, "with": true, "real": true, "actual": true, "id": true, "auth": true,
	"user": true, "username": true, "db": true, "database": true, "admin": true, "s3cr3t": true,
	"private": true, "public": true, "client": true, "app": true, "service": true, "account": true,
	"aws": true, "github": true, "openai": true, "stripe": true, "slack": true, "prod": true,
	"dev": true, "local": true, "staging": true, "secret1": true, "password1": true,
	"password123": true, "notasecret": true, "notreal": true, "not": true, "set": true,
	"ignore": true, "sk": true, "pk": true, "live": true, "of": true, "for": true,
}

// isPlaceholder recognises values that stand for a secret without being one:
// <your-password>, ${TOKEN}, {{ .Key }}, xxx, your_api_key_here, [REDACTED],
// %PASSWORD%, ****, values cut short with an ellipsis.
func isPlaceholder(v string) bool {
	v = strings.Trim(v, `"'`+"`")
	if v == "" {
		return true
	}
	// Templates and variables: <x>, ${X}, $X, {{ x }}, [X], %X%, (none).
	closing := map[byte]byte{'<': '>', '{': '}', '[': ']', '%': '%', '(': ')'}
	if c, ok := closing[v[0]]; ok && len(v) > 1 && v[len(v)-1] == c {
		return true
	}
	if v[0] == '$' && len(v) > 1 && (v[1] == '{' || v[1] == '(' || v[1] == '_' || isUpper(v[1]) || isLower(v[1])) {
		return true
	}
	if strings.Contains(v, "...") || strings.Contains(v, "…") || strings.Contains(v, "***") ||
		strings.Contains(v, Marker) {
		return true
	}
	l := strings.ToLower(v)
	// A single repeated character: xxxxxxxx, 00000000, ********.
	if strings.Count(l, l[:1]) == len(l) {
		return true
	}
	words := strings.FieldsFunc(l, func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r == ' ' || r == ':' || r == '/'
	})
	if len(words) == 0 {
		return true
	}
	// "your-anon-key", "your_db_host": a value that starts with the word
	// "your" tells the reader to put theirs.
	if len(words) >= 2 && words[0] == "your" {
		return true
	}
	// All words known, or all but a short provider prefix
	// (lsv2_your_key_here, ls__your-actual-api-key-here) when at least two
	// are.
	unknown, known := 0, 0
	for i, w := range words {
		if placeholderWords[w] || strings.Count(w, w[:1]) == len(w) {
			known++
		} else if i == 0 && len(w) <= 5 && len(words) > 2 {
			unknown++
		} else {
			return false
		}
	}
	return unknown == 0 || known >= 2
}
