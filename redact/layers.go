package redact

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gitmem/git-mem/internal/lazy"
)

// quotedValue matches a command-line or header value: 'quoted', "quoted"
// or bare; each form is its own group (rule.group -1 takes the one that
// matched).
const quotedValue = `(?:'([^'\n]{1,256})'|"([^"\n]{1,256})"|([^\s'"` + "`" + `;|&)]{1,256}))`

// cmdValue accepts a value given to a password flag: anything but a
// placeholder, a variable or another flag. The flag says it is a password,
// so short ones count too (they are then replaced only where seen).
// A bare word ("--token flag") is prose about the flag, not a value.
func cmdValue(v string) bool {
	if len(v) < 4 || isPlaceholder(v) || v[0] == '-' || typeWords[strings.ToLower(v)] {
		return false
	}
	return countClass(v, isDigit) > 0 || countClass(v, isUpper) > 0 && countClass(v, isLower) > 0 ||
		countClass(v, func(c byte) bool { return !isDigit(c) && !isUpper(c) && !isLower(c) }) > 0
}

// urlRules find credentials inside URLs.
func urlRules() []rule {
	return []rule{
		{
			kind:  "url-password",
			layer: LayerURLs,
			pre:   []string{"://"},
			near:  hasURLCredentials,
			// scheme://user:password@host and scheme://:password@host —
			// only the password goes.
			re:    regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@"'<>()\[\]{}]{0,128}:([^\s@/"'<>]{1,256})@[A-Za-z0-9\[]`),
			group: 1,
			ok:    func(s string) bool { return !isPlaceholder(s) && !typeWords[strings.ToLower(s)] },
		},
		{
			kind:  "url-secret-param",
			layer: LayerURLs,
			lines: true,
			pre:   []string{"="},
			near:  func(s string) bool { return strings.Contains(s, "?") || strings.Contains(s, "&") },
			hint:  hasSecretParamLower,
			// ?token=…&sig=…&key=… in any URL (webhooks, presigned links).
			re:    regexp.MustCompile(`(?i)[?&;](?:access_token|refresh_token|id_token|token|auth|auth_token|api_key|apikey|key|sig|signature|x-amz-signature|x-goog-signature|secret|client_secret|code|password|pass|pwd)=([^&\s#"'<>]{8,1000})`),
			group: 1,
			ok: func(s string) bool {
				if isPlaceholder(s) {
					return false
				}
				return looksRandom(s) || strings.Count(s, "%") >= 2 && len(s) >= 20
			},
		},
		{
			kind:  "webhook-url",
			layer: LayerURLs,
			pre:   []string{"discord", "webhook.office.com", "api.telegram.org/bot", "hooks.zapier.com", "/hooks/", "/webhooks/", "/webhook/"},
			find:  webhookTokens,
		},
	}
}

// secretParams are url-secret-param's parameter names, lower case.
var secretParams = []string{"access_token", "refresh_token", "id_token", "token", "auth", "auth_token", "api_key", "apikey", "key",
	"sig", "signature", "x-amz-signature", "x-goog-signature", "secret", "client_secret", "code", "password", "pass", "pwd"}

// hasSecretParamLower is a necessary condition of url-secret-param's
// regexp on lower (asciiLower's lower case): one of ?&; then one of
// secretParams, '=' and at least 8 bytes none of &#"'<> or white space
// (the value: 8 runes or more, each at least a byte). A rune that (?i)
// folds to an ASCII letter makes it true (foldsToASCII). Without it the
// regexp, which has no literal prefix, ran on every line holding '=' of
// every string holding '?' or '&' (2,495 strings of the coding corpus,
// 6.7 MB, session 20). TestSecretParamHintIsNecessary checks it.
func hasSecretParamLower(lower string) bool {
	for i := 0; i < len(lower); i++ {
		if c := lower[i]; c != '?' && c != '&' && c != ';' {
			continue
		}
		rest := lower[i+1:]
		for _, n := range secretParams {
			if len(rest) > len(n) && rest[len(n)] == '=' && rest[:len(n)] == n && paramValue(rest[len(n)+1:]) {
				return true
			}
		}
	}
	return foldsToASCII(lower)
}

// paramValue reports whether v begins with 8 bytes of url-secret-param's
// value class, [^&\s#"'<>].
func paramValue(v string) bool {
	if len(v) < 8 {
		return false
	}
	for i := 0; i < 8; i++ {
		switch v[i] {
		case '&', '#', '"', '\'', '<', '>', ' ', '\t', '\n', '\f', '\r':
			return false
		}
	}
	return true
}

var webhookURL = lazy.Regexp(`https?://[^\s"'<>/]+/[^\s"'<>)\]]*`)

// webhookTokens finds the random path segments of webhook URLs (Discord,
// Teams, Telegram bots, Zapier, Mattermost, any /hooks/ path): the URL is
// the credential, and its random parts are what must not leak.
func webhookTokens(s string) []span {
	var out []span
	for _, loc := range webhookURL().FindAllStringIndex(s, -1) {
		u := s[loc[0]:loc[1]]
		l := strings.ToLower(u)
		if !strings.Contains(l, "hook") && !strings.Contains(l, "api.telegram.org/bot") {
			continue
		}
		// Segments after the host.
		i := strings.Index(u, "://") + 3
		i += strings.IndexByte(u[i:], '/')
		for i < len(u) {
			j := i + 1
			for j < len(u) && u[j] != '/' && u[j] != '?' && u[j] != '#' && u[j] != '@' {
				j++
			}
			seg := u[i+1 : j]
			seg = strings.TrimPrefix(seg, "bot")
			a := loc[0] + j - len(seg)
			if len(seg) >= 16 && !strings.Contains(seg, Marker) && tokenish(seg) {
				out = append(out, span{a, loc[0] + j, "webhook-url"})
			}
			if j >= len(u) || u[j] == '?' || u[j] == '#' {
				break
			}
			i = j
		}
	}
	return out
}

// tokenish accepts a random-looking URL path segment; words, slugs and
// numeric ids are not.
func tokenish(seg string) bool {
	if isPlaceholder(seg) {
		return false
	}
	if strings.Contains(seg, ":") { // telegram: <bot id>:<token>
		_, t, _ := strings.Cut(seg, ":")
		return len(t) >= 20 && looksRandom(t)
	}
	return looksRandom(seg) && countClass(seg, isUpper)+countClass(seg, isDigit) >= 4
}

// secretWords names a secret in prose; the group is the name.
// "pass" alone is a verb ("the tests pass now: ✅") and "key" alone names
// anything ("Cache restored from key: …"): neither is here.
const secretWords = `(password|passwd|passphrase|pwd|pw|secret(?:[ _-]key)?|client[ _-]secret|` +
	`(?:api|access|auth|secret|private|service(?:[ _-]role)?|deploy|admin|master|bot)[ _-]?(?:key|token)|` +
	`token)`

func wordKind(name string) string {
	l := strings.ToLower(name)
	if strings.HasPrefix(l, "pass") || strings.HasPrefix(l, "pw") {
		return "password"
	}
	return "generic-secret"
}

// wordRules find secrets said in words: "the db password is …", "my
// password: …", "use the token … for now".
func wordRules() []rule {
	// Words between the name and the verb stay on the line: [ \t], never \s.
	said := regexp.MustCompile(`(?i)\b` + secretWords + `\b(?:[ \t]+[\w.@/\-]+){0,4}?(?:[ \t]+(?:is|was|are|will[ \t]+be|should[ \t]+be|=)(?:[ \t]+(?:now|still|set[ \t]+to|just|always))?[ \t]*:?|[ \t]*:)[ \t]+["'` + "`" + `]?([^\s"'` + "`" + `<>]{3,256})`)
	bare := regexp.MustCompile(`(?i)\b(token|password|secret)[ \t]+["'` + "`" + `]?([A-Za-z0-9_\-+/=.]{16,256})`)
	return []rule{
		{
			kind:  "password",
			layer: LayerWords,
			lines: true,
			// A line without a secret word has no match (every match of
			// said and bare holds one): hasSecretWordLower.
			hint: hasSecretWordLower,
			find: func(s string) []span {
				var out []span
				for _, m := range said.FindAllStringSubmatchIndex(s, -1) {
					kind := wordKind(s[m[2]:m[3]])
					a, e := m[4], m[5]
					v := strings.TrimRight(s[a:e], ".,;:)?")
					if kind == "password" && acceptValue(kind, v) || looksRandom(v) && acceptValue("generic-secret", v) {
						out = append(out, span{a, a + len(v), kind})
					}
				}
				for _, m := range bare.FindAllStringSubmatchIndex(s, -1) {
					a, e := m[4], m[5]
					v := strings.TrimRight(s[a:e], ".,;:)?")
					if looksRandom(v) && acceptValue("generic-secret", v) && !isDottedIdent(v) {
						out = append(out, span{a, a + len(v), wordKind(s[m[2]:m[3]])})
					}
				}
				return out
			},
		},
	}
}

// hasSecretWordLower reports whether lower, a string in asciiLower's lower
// case, holds a secret word followed by ' ', '\t' or ':', as every match of
// said and bare does: the word (secretWords) ends in password, passwd,
// passphrase, pwd, pw, secret, token, or key right after one of keyHeads
// (with at most one of " _-" between), and both regexps go on after it with
// [ \t]+ or [ \t]*: (bare: [ \t]+).
//
// It took "key" and "credential" alone before session 18 (the regexps ran
// on 14,367 lines of the coding corpus, 7,719 after); it took any "pass",
// "pw", "secret" or "token" before session 19's round 2, whatever followed
// (on 2,0xx lines now: docs/BENCHMARKS.md). A string with a rune that (?i)
// folds to an ASCII letter (foldsToASCII: "ſecret is x" matches the
// regexps) passes: the byte tests here do not see it.
// TestSecretWordHintIsNecessary checks it against the rule, and
// TestSecretWordHintIsRef against the former hint.
//
// One pass (session 20): at each position whose two bytes begin a word of
// secretEnds or a folding rune (secretPairs), the words beginning with its
// byte are compared; it was one strings.Index pass per word and two for
// the runes. TestSecretWordHintIsOnePass holds it to that code.
func hasSecretWordLower(lower string) bool {
	for i := 0; i+1 < len(lower); i++ {
		if !secretPairs.has(lower[i], lower[i+1]) {
			continue
		}
		for _, w := range secretAt[lower[i]] {
			if !strings.HasPrefix(lower[i:], w) {
				continue
			}
			if w[0] >= utf8.RuneSelf { // a folding rune
				return true
			}
			if e := i + len(w); e < len(lower) && (lower[e] == ' ' || lower[e] == '\t' || lower[e] == ':') && (w != "key" || keyHead(lower[:i])) {
				return true
			}
		}
	}
	return false
}

// secretEnds are the last words of secretWords' names, lower case.
var secretEnds = []string{"password", "passwd", "passphrase", "pwd", "pw", "secret", "token", "key"}

// secretAt lists, by first byte, secretEnds and the runes of foldsToASCII
// (each at least two bytes long); secretPairs holds their first two bytes.
var secretAt, secretPairs = byFirstByte(append(slices.Clone(secretEnds), "\u212a", "\u017f"))

// keyHead reports whether head, the text before a "key", ends with one of
// keyHeads and at most one of " _-".
func keyHead(head string) bool {
	if n := len(head); n > 0 && (head[n-1] == ' ' || head[n-1] == '_' || head[n-1] == '-') {
		head = head[:n-1]
	}
	for _, h := range keyHeads {
		if strings.HasSuffix(head, h) {
			return true
		}
	}
	return false
}

// keyHeads are the words that make "key" a secret word in secretWords
// ("role" ends "service role").
var keyHeads = []string{"api", "access", "auth", "secret", "private", "service", "role", "deploy", "admin", "master", "bot"}

// cmdlineRules find passwords given to command-line clients: mysql -pX,
// sshpass -p X, redis-cli -a X, sqlcmd -P X, --password X, curl -u u:X …
func cmdlineRules() []rule {
	c := func(pre []string, expr string) rule {
		return rule{kind: "password", layer: LayerCmdline, pre: pre, group: -1, ok: cmdValue, lines: true,
			re: regexp.MustCompile(expr + quotedValue)}
	}
	// args is the rest of a command up to the flag: no line break or
	// command separator.
	const args = `\b[^\n;|&]*?\s`
	return []rule{
		c([]string{"mysql", "mariadb"}, `\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mysqlcheck|mariadb(?:-dump|-admin)?)`+args+`-p`),
		c([]string{"sshpass"}, `\bsshpass\s+(?:-[a-oq-zA-Z]\S*\s+)*-p\s*`),
		c([]string{"redis-cli", "keydb-cli"}, `\b(?:redis|keydb)-cli`+args+`(?:-a|--pass)\s+`),
		c([]string{"sqlcmd", "bcp", "osql", "isql"}, `\b(?:sqlcmd|bcp|osql|isql)`+args+`-P\s*`),
		c([]string{"mongo"}, `\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)`+args+`(?:-p|--password)\s+`),
		c([]string{"login"}, `\b(?:docker|podman|helm|nerdctl|buildah|skopeo|oras|crane)\s+(?:registry\s+)?login`+args+`(?:-p|--password)\s+`),
		c([]string{"ldap"}, `\bldap(?:search|modify|add|delete|whoami|passwd)`+args+`-w\s*`),
		c([]string{"zip", "7z"}, `\b(?:zip|unzip|7z|7za)`+args+`-[pP]\s*`),
		c([]string{"pass:"}, `\s-pass(?:in|out)?\s+pass:`),
		c([]string{"htpasswd"}, `\bhtpasswd\s+-\w*b\w*\s+\S+\s+\S+\s+`),
		c([]string{"--pass", "--pw", "--secret", "--token", "--api", "--auth", "--access", "--client-secret", "--db-pass", "--admin-pass"},
			`(?:^|\s)--(?:password|passwd|pass|pw|db-password|admin-password|secret|client-secret|token|auth-token|access-token|api-key|apikey|api-token)\s+`),
		{kind: "password", layer: LayerCmdline, pre: []string{"-u", "--user"}, ok: cmdValue, group: 1, lines: true,
			// curl -u user:password, --user user:password.
			re: regexp.MustCompile(`\b(?:curl|wget|http)\b[^\n;|&]*?\s(?:-u|--user)\s*["']?[^\s:"']*:([^\s"'@]{1,256})`)},
		{kind: "password", layer: LayerCmdline, pre: []string{"-U"}, ok: cmdValue, group: 1, lines: true,
			// smbclient -U user%password.
			re: regexp.MustCompile(`\bsmbclient\b[^\n;|&]*?\s-U\s*["']?[^\s%"']+%([^\s"']{1,256})`)},
	}
}

// headerRules find credentials in Authorization headers, whose value has a
// scheme and a space ("Basic dXNl…", "Token …", "Digest username=…").
func headerRules() []rule {
	return []rule{
		{
			kind:  "authorization",
			layer: LayerHeaders,
			lines: true,
			pre:   []string{"uthorization", "UTHORIZATION"},
			re:    regexp.MustCompile(`(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:digest\s+([^\r\n]{6,1000})|(?:basic|bearer|token|negotiate|ntlm|apikey|api-key|sharedkey|sharedaccesssignature|sso-key|hmac|key|aws4-hmac-sha256|gosign|otoken|splunk|klaviyo-api-key|dsn)\s+([^\r\n"'\\]{6,1000}))`),
			group: -1,
			ok: func(v string) bool {
				v = strings.TrimSpace(v)
				return !isPlaceholder(v) && len(v) >= 6 && countClass(v, isDigit)+countClass(v, isUpper) > 0
			},
		},
	}
}
