// Package redact replaces secrets (keys, tokens, passwords, private keys)
// with "[REDACTED:<kind>]" before an exchange is written: memory gets pushed
// to remotes, so a secret must never reach a commit.
//
// Two rule sets run side by side. gitleaks' default rules (a few hundred
// provider token formats kept up to date by its maintainers) find what has
// a known shape; our own layers find what gitleaks does not look for in
// prose and transcripts: secret names given a value (KEY=value, JSON keys),
// secrets said in words, passwords on command lines, credentials in URLs,
// connection strings and headers. Once any layer knows a value is a secret,
// every occurrence of it in the whole exchange is replaced, wherever it
// appears again bare. Values that stand for a secret (changeme, <your-key>,
// ${VAR}) are kept: a placeholder is a whole known word, not any value that
// contains one.
package redact

import (
	"math"
	"regexp"
	"strings"
	"sync"
)

// Marker starts every replacement; text already holding it is left alone,
// so redaction is idempotent.
const Marker = "[REDACTED"

func mark(kind string) string { return "[REDACTED:" + kind + "]" }

// Layer names one rule set, so each can be measured alone.
type Layer uint

// The layers. All is what Exchange and String use.
const (
	LayerShapes   Layer = 1 << iota // provider token shapes, PEM blocks, JWTs, AWS secret keys
	LayerURLs                       // passwords in URLs, secret query parameters, webhook URLs
	LayerAssign                     // secret names given a value: KEY=value, "key": "value"
	LayerWords                      // secrets said in words: "the password is …"
	LayerCmdline                    // passwords and tokens given to command-line clients
	LayerHeaders                    // Authorization header values (Basic, Token, Digest …)
	LayerGitleaks                   // gitleaks' default rule set
	All           = LayerShapes | LayerURLs | LayerAssign | LayerWords | LayerCmdline | LayerHeaders | LayerGitleaks
)

// LayerNames are the layers in the order of the benchmark tables.
var LayerNames = []struct {
	Layer Layer
	Name  string
}{
	{LayerShapes, "shapes"}, {LayerURLs, "urls"}, {LayerAssign, "assign"}, {LayerWords, "words"},
	{LayerCmdline, "cmdline"}, {LayerHeaders, "headers"}, {LayerGitleaks, "gitleaks"},
}

// rule is a shape-based detector.
type rule struct {
	kind  string
	layer Layer
	// pre lists substrings of which at least one must occur (case-sensitive)
	// before the regexp runs.
	pre []string
	re  *regexp.Regexp
	// near, when set, is a second cheap test run before the regexp.
	near func(string) bool
	// group is the submatch replaced; 0 replaces the whole match, -1 the
	// first submatch that took part (alternatives for quoted values).
	group int
	// ok, when set, must accept the replaced text (entropy, placeholders).
	ok func(string) bool
	// find, when set, replaces re: a detector in code.
	find func(string) []span
	// lines runs pre and the detector line by line: a regexp with no
	// literal prefix (case-insensitive names, alternatives) scans every
	// byte, and most lines hold none of the hints (measured 4x faster on
	// the coding corpus). It may find what the whole string would not
	// where a match could span lines or its regexp asks for the text's
	// start or end (^, $, \A, \z); a rule whose regexp does neither
	// finds the same either way (TestLinesRulesFindTheSame).
	lines bool
	// hint, when set (lines rules only), is a necessary condition of a
	// match on a line, given the line in asciiLower's lower case; asked of
	// the whole string first (a line's lower case is part of the string's,
	// so a line holds what the hint looks for only if the string does).
	hint func(lower string) bool
}

// rules are compiled on first use, not at start-up: every git mem command
// would otherwise pay for them (4 ms), even those that never redact.
var rules = sync.OnceValue(func() []rule {
	rs := append(shapeRules(), urlRules()...)
	rs = append(rs, wordRules()...)
	rs = append(rs, cmdlineRules()...)
	rs = append(rs, headerRules()...)
	for i := range rs {
		if rs[i].layer == 0 {
			rs[i].layer = LayerShapes
		}
	}
	return rs
})

// shapeRules know a secret by its shape alone.
func shapeRules() []rule {
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
			// Real key ids are base32, but ids with other digits are quoted
			// in the field too: take any upper-case alphanumeric tail.
			re: regexp.MustCompile(awsKeyID),
		},
		{
			kind: "aws-secret-key",
			pre:  []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
			near: hasAWSKeyID,
			// The 40-character secret that travels with a key id; git SHAs
			// (hex, no upper case) and hashes do not pass ok.
			re:    regexp.MustCompile(`(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
			group: 1,
			ok: func(s string) bool {
				return countClass(s, isUpper) > 0 && countClass(s, isLower) > 0 && countClass(s, isDigit) > 0 && entropy(s) >= 4
			},
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
			// Line by line: the same matches (no match spans lines, no
			// ^ or $: TestLinesRulesFindTheSame), and the regexp,
			// which has no literal prefix (\b first), scans only lines
			// holding "sk-", not every byte of a string that does (37 ms
			// of ~600 a pass over the coding corpus, session 27).
			lines: true,
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
			kind:  "bearer-token",
			pre:   []string{"earer "},
			re:    regexp.MustCompile(`\b[Bb]earer ([A-Za-z0-9\-._~+/]{20,}=*)`),
			group: 1,
			ok:    looksRandom,
			lines: true, // as openai-api-key's (11 ms a pass)
		},
	}
}

const awsKeyID = `\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`

var awsKeyIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(awsKeyID) })

func hasAWSKeyID(s string) bool {
	return containsAny(s, []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"}) && awsKeyIDRe().MatchString(s)
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
