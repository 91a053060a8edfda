// Package redact replaces secrets (keys, tokens, passwords, private keys)
// with "[REDACTED:<kind>]" before an exchange is written: memory gets pushed
// to remotes, so a secret must never reach a commit.
//
// The rules are our own, modelled on gitleaks' rule set (no dependency on
// it). They favour precision: a token is only replaced when its shape is
// unmistakable (a provider prefix, a PEM block, a JWT) or when a secret-ish
// name is assigned a value that looks like a real credential rather than a
// placeholder, a type name or code. Every rule is guarded by cheap substring
// tests, so the common exchange with no secret costs a few scans.
package redact

import (
	"math"
	"regexp"
	"strings"
	"sync"

	"github.com/gitmem/git-mem/exchange"
)

// Marker starts every replacement; text already holding it is left alone,
// so redaction is idempotent.
const Marker = "[REDACTED"

func mark(kind string) string { return "[REDACTED:" + kind + "]" }

// rule is a shape-based detector.
type rule struct {
	kind string
	// pre lists substrings of which at least one must occur (case-sensitive)
	// before the regexp runs.
	pre []string
	re  *regexp.Regexp
	// near, when set, is a second cheap test run before the regexp.
	near func(string) bool
	// group is the submatch replaced; 0 replaces the whole match.
	group int
	// ok, when set, must accept the replaced text (entropy, placeholders).
	ok func(string) bool
}

// rules are compiled on first use, not at start-up: every git mem command
// would otherwise pay for them (4 ms), even those that never redact.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		{
			kind: "private-key",
			pre:  []string{"PRIVATE KEY"},
			// A whole PEM block, or a block cut short (truncated output): the
			// header and the base64 body that follows it.
			re: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=:,\- \t\r\n]|\\n|\\r)*)`),
			ok: func(s string) bool {
				// A bare header in prose ("-----BEGIN PRIVATE KEY----- ... END")
				// with no key material is not a key.
				body := s[strings.Index(s, "KEY-----")+8:]
				return countClass(body, isB64) >= 40
			},
		},
		{
			kind: "aws-access-key",
			pre:  []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
			re:   regexp.MustCompile(`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b`),
		},
		{
			kind: "github-token",
			pre:  []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			re:   regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`),
		},
		{
			kind: "gitlab-token",
			pre:  []string{"glpat-"},
			re:   regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`),
		},
		{
			kind: "anthropic-api-key",
			pre:  []string{"sk-ant-"},
			re:   regexp.MustCompile(`\bsk-ant-[a-z0-9]{2,10}-[A-Za-z0-9_\-]{20,}`),
		},
		{
			kind: "openai-api-key",
			pre:  []string{"sk-"},
			re:   regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}`),
			ok:   looksRandom,
		},
		{
			kind: "slack-token",
			pre:  []string{"xox", "xapp-"},
			re:   regexp.MustCompile(`\b(?:xox[baprse]-[0-9A-Za-z\-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)`),
			ok:   func(s string) bool { return countClass(s, isDigit) >= 4 },
		},
		{
			kind: "slack-webhook",
			pre:  []string{"hooks.slack.com"},
			re:   regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/]{20,}`),
		},
		{
			kind: "stripe-key",
			pre:  []string{"_live_", "_test_"},
			re:   regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,99}\b`),
		},
		{
			kind: "google-api-key",
			pre:  []string{"AIza"},
			re:   regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`),
		},
		{
			kind: "huggingface-token",
			pre:  []string{"hf_"},
			re:   regexp.MustCompile(`\bhf_[A-Za-z]{34}\b`),
			ok: func(s string) bool {
				return countClass(s, isUpper) >= 3 && countClass(s, isLower) >= 3 && entropy(s) >= 3.5
			},
		},
		{
			kind: "npm-token",
			pre:  []string{"npm_"},
			re:   regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`),
			ok:   looksRandom,
		},
		{
			kind: "sendgrid-key",
			pre:  []string{"SG."},
			re:   regexp.MustCompile(`\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b`),
		},
		{
			kind: "supabase-key",
			pre:  []string{"sb_secret_"},
			re:   regexp.MustCompile(`\bsb_secret_[A-Za-z0-9_\-]{20,}`),
		},
		{
			kind: "langsmith-key",
			pre:  []string{"lsv2_"},
			re:   regexp.MustCompile(`\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b`),
		},
		{
			kind: "jwt",
			pre:  []string{"eyJ"},
			re:   regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}`),
		},
		{
			kind: "url-password",
			pre:  []string{"://"},
			near: hasURLCredentials,
			// scheme://user:password@host — only the password goes.
			re:    regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@"'<>()\[\]{}]{1,128}:([^\s@/"'<>]{1,256})@[A-Za-z0-9\[]`),
			group: 1,
			ok:    func(s string) bool { return !isPlaceholder(s) && !typeWords[strings.ToLower(s)] },
		},
		{
			kind:  "bearer-token",
			pre:   []string{"earer "},
			re:    regexp.MustCompile(`\b[Bb]earer ([A-Za-z0-9\-._~+/]{20,}=*)`),
			group: 1,
			ok:    looksRandom,
		},
	}
})

// String returns s with every secret replaced and the number of
// replacements.
func String(s string) (string, int) {
	if len(s) < 8 {
		return s, 0
	}
	n := 0
	rs := rules()
	for i := range rs {
		r := &rs[i]
		if !containsAny(s, r.pre) || (r.near != nil && !r.near(s)) {
			continue
		}
		var k int
		s, k = r.apply(s)
		n += k
	}
	var k int
	s, k = assignments(s)
	return s, n + k
}

func (r *rule) apply(s string) (string, int) {
	locs := r.re.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s, 0
	}
	var b strings.Builder
	last, n := 0, 0
	for _, loc := range locs {
		a, e := loc[2*r.group], loc[2*r.group+1]
		if a < 0 || a < last {
			continue
		}
		v := s[a:e]
		if strings.Contains(v, Marker) || (r.ok != nil && !r.ok(v)) {
			continue
		}
		b.WriteString(s[last:a])
		b.WriteString(mark(r.kind))
		last = e
		n++
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// Exchange redacts every string of ex in place: turn texts and names, tool
// inputs (any JSON, keys kept, values by the key's name too), extra fields,
// session, project and agent. The id is left alone: it is the exchange's
// identity, and ids come from the tools, not from people. It returns the
// number of replacements.
func Exchange(ex *exchange.Exchange) int {
	if ex == nil {
		return 0
	}
	n := 0
	str := func(p *string) {
		var k int
		*p, k = String(*p)
		n += k
	}
	str(&ex.Session)
	str(&ex.Project)
	str(&ex.Agent)
	for i := range ex.Turns {
		t := &ex.Turns[i]
		str(&t.Text)
		str(&t.Name)
		var k int
		t.Input, k = value("", t.Input)
		n += k
		for key, v := range t.Extra {
			t.Extra[key], k = value(key, v)
			n += k
		}
	}
	for key, v := range ex.Extra {
		var k int
		ex.Extra[key], k = value(key, v)
		n += k
	}
	return n
}

// value redacts a decoded JSON value. key is the object key it sits under,
// so {"password": "hunter22"} is caught although the value alone is bland.
func value(key string, v any) (any, int) {
	switch x := v.(type) {
	case string:
		if kind := secretName(key); kind != "" && acceptValue(kind, x) {
			return mark(kind), 1
		}
		s, n := String(x)
		return s, n
	case map[string]any:
		n := 0
		for k, e := range x {
			var c int
			x[k], c = value(k, e)
			n += c
		}
		return x, n
	case []any:
		n := 0
		for i, e := range x {
			var c int
			x[i], c = value(key, e)
			n += c
		}
		return x, n
	}
	return v, 0
}

// hasURLCredentials reports whether some "://" is followed by "user:pass@"
// before the authority ends.
func hasURLCredentials(s string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return false
		}
		i += from + 3
		colon := false
		for j := i; j < len(s) && j < i+400; j++ {
			c := s[j]
			if c == ':' {
				colon = true
			} else if c == '@' {
				if colon {
					return true
				}
				break
			} else if c == '/' || c == ' ' || c == '\n' || c == '"' || c == '\'' || c == '\t' {
				break
			}
		}
		from = i
	}
}

func containsAny(s string, subs []string) bool {
	for _, p := range subs {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isB64(c byte) bool {
	return isDigit(c) || isUpper(c) || isLower(c) || c == '+' || c == '/'
}

func countClass(s string, f func(byte) bool) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if f(s[i]) {
			n++
		}
	}
	return n
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// looksRandom accepts machine-made tokens: long enough, mixed character
// classes and a high entropy, which words, identifiers and repeated
// placeholders (sk-xxxxxxxx…) are not.
func looksRandom(s string) bool {
	if len(s) < 16 || isPlaceholder(s) {
		return false
	}
	classes := 0
	for _, f := range []func(byte) bool{isDigit, isUpper, isLower} {
		if countClass(s, f) > 0 {
			classes++
		}
	}
	if classes < 2 || countClass(s, isDigit) == 0 && classes < 3 {
		return false
	}
	return entropy(s) >= 3.3
}

var placeholderWords = []string{
	"xxx", "***", "...", "…", "your", "example", "placeholder", "changeme", "change_me", "dummy",
	"redacted", "replace", "insert", "_here", "-here", "fake", "sample", "todo", "fixme",
	"abc123", "123456", "000000",
}

// isPlaceholder recognises values that stand for a secret without being one:
// <your-password>, ${TOKEN}, {{ .Key }}, xxx, your_api_key_here, [REDACTED].
func isPlaceholder(v string) bool {
	v = strings.Trim(v, `"'`+"`")
	if v == "" {
		return true
	}
	switch v[0] {
	case '<', '$', '{', '[', '%', '*', '(':
		return true
	}
	l := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	// A single repeated character: xxxxxxxx, 00000000.
	if strings.Count(l, l[:1]) == len(l) {
		return true
	}
	return false
}
