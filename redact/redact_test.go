package redact

import (
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/redact/redacttest"
)

const (
	alnum  = redacttest.Alnum
	upper2 = redacttest.Upper2
	hexd   = redacttest.Hex
	b64    = redacttest.B64
	urlb64 = redacttest.URLB64
)

func secrets() []struct{ name, in, kind string } {
	g := redacttest.NewGen(4, 2026)
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + g.S(b64, 64) + "\n" + g.S(b64, 64) + "\n-----END RSA PRIVATE KEY-----"
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJ" + g.S(urlb64, 40) + "." + g.S(urlb64, 43)
	return []struct{ name, in, kind string }{
		{"aws key", "export AWS_ACCESS_KEY_ID=AKIA" + g.S(upper2, 16), "aws-access-key"},
		{"aws key prose", "the key AKIA" + g.S(upper2, 16) + " leaked", "aws-access-key"},
		{"aws sts key", "ASIA" + g.S(upper2, 16), "aws-access-key"},
		{"github classic", "token ghp_" + g.S(alnum, 36), "github-token"},
		{"github oauth", "gho_" + g.S(alnum, 36), "github-token"},
		{"github fine-grained", "github_pat_" + g.S(alnum, 22) + "_" + g.S(alnum, 59), "github-token"},
		{"gitlab", "glpat-" + g.S(urlb64, 20), "gitlab-token"},
		{"openai legacy", "OPENAI_API_KEY=sk-" + g.S(alnum, 48), "openai-api-key"},
		{"openai project", `key: "sk-proj-` + g.S(urlb64, 64) + `"`, "openai-api-key"},
		{"anthropic", "ANTHROPIC_API_KEY=sk-ant-api03-" + g.S(urlb64, 93) + "AA", "anthropic-api-key"},
		{"slack bot", "xoxb-" + g.S("0123456789", 12) + "-" + g.S("0123456789", 13) + "-" + g.S(alnum, 24), "slack-token"},
		{"slack webhook", "https://hooks.slack.com/services/T" + g.S(upper2, 8) + "/B" + g.S(upper2, 8) + "/" + g.S(alnum, 24), "slack-webhook"},
		{"stripe live", "sk_live_" + g.S(alnum, 24), "stripe-key"},
		{"stripe restricted", "rk_test_" + g.S(alnum, 24), "stripe-key"},
		{"google", "apiKey: \"AIza" + g.S(urlb64, 35) + "\"", "google-api-key"},
		{"private key", "here:\n" + pem + "\nend", "private-key"},
		{"private key truncated", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + g.S(b64, 70) + "\n" + g.S(b64, 30) + "\n[... 900 more characters truncated]", "private-key"},
		{"jwt", "Authorization: Bearer " + jwt, "jwt"},
		{"postgres url", "DATABASE_URL=postgres://app:" + g.S(alnum, 14) + "@db.internal:5432/app", "url-password"},
		{"mongodb srv", "mongodb+srv://admin:Hu" + g.S(alnum, 10) + "9!@cluster0.mongodb.net/test", "url-password"},
		{"redis url", "redis://default:" + g.S(alnum, 20) + "@redis-123.cloud:6379", "url-password"},
		{"env password", "DB_PASSWORD=Tr0ub4dor&3x", "password"},
		{"json password", `{"username": "alice", "password": "hunter2-` + g.S(alnum, 6) + `"}`, "password"},
		{"yaml password", "  password: S3cure!" + g.S(alnum, 5), "password"},
		{"go secret", `clientSecret := "` + g.S(alnum, 32) + `"`, "generic-secret"},
		{"generic token", "API_TOKEN=" + g.S(alnum, 40), "generic-secret"},
		{"bearer", "curl -H 'Authorization: Bearer " + g.S(alnum, 40) + "'", "bearer-token"},
		{"huggingface", "HF_TOKEN hf_" + g.S("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 34), "huggingface-token"},
		{"npm", "//npm.internal.example/:_authToken=npm_" + g.S(alnum, 36), "npm-token"},
		{"langsmith", "LANGCHAIN_API_KEY=lsv2_pt_" + g.S(hexd, 32) + "_" + g.S(hexd, 10), "langsmith-key"},
		{"aws secret", "aws_secret_access_key = " + g.S(b64, 40), "generic-secret"},
	}
}

func TestSecretsCaught(t *testing.T) {
	for _, c := range secrets() {
		t.Run(c.name, func(t *testing.T) {
			out, n := String(c.in)
			if n == 0 {
				t.Fatalf("not redacted: %q", c.in)
			}
			if !strings.Contains(out, "[REDACTED:"+c.kind+"]") {
				t.Errorf("kind: got %q, want [REDACTED:%s]", out, c.kind)
			}
			// Nothing of the secret's random body may survive.
			for _, f := range strings.FieldsFunc(c.in, func(r rune) bool { return strings.ContainsRune(" \n\"'=:@/", r) }) {
				if len(f) >= 20 && strings.Contains(out, f) && !strings.Contains(f, "REDACTED") && !strings.HasPrefix(f, "eyJhbGci") && !strings.Contains(f, ".") && strings.ToLower(f) != f {
					t.Errorf("secret part %q survived in %q", f, out)
				}
			}
			again, n2 := String(out)
			if n2 != 0 || again != out {
				t.Errorf("not idempotent: %q -> %q (%d)", out, again, n2)
			}
		})
	}
}

// String (one string, no exchange around it) keeps the look-alikes too.
func TestLookAlikesSurvive(t *testing.T) {
	for _, s := range redacttest.LookAlikes() {
		out, n := String(s)
		if n != 0 || out != s {
			t.Errorf("look-alike changed: %q -> %q", s, out)
		}
	}
}

func TestExchange(t *testing.T) {
	g := redacttest.NewGen(7, 7)
	key := "ghp_" + g.S(alnum, 36)
	ex := &exchange.Exchange{
		Session: "s1",
		Project: "billing",
		Turns: []exchange.Turn{
			{Role: "user", Text: "use " + key},
			{Role: "tool", Name: "run_terminal_cmd", Input: map[string]any{
				"command": "curl -u x:" + key,
				"env":     []any{map[string]any{"password": "Hunter2!x"}},
				"count":   "12",
			}, Text: "ok"},
		},
		Extra: map[string]any{"note": "token " + key},
	}
	if n := Exchange(ex); n != 4 {
		t.Errorf("Exchange redacted %d, want 4", n)
	}
	got := string(ex.Canonical())
	if strings.Contains(got, key) || strings.Contains(got, "Hunter2") {
		t.Errorf("secret survived: %s", got)
	}
	if !strings.Contains(got, `"password":"[REDACTED:password]"`) {
		t.Errorf("key-based redaction missing: %s", got)
	}
	if Exchange(nil) != 0 {
		t.Error("nil exchange")
	}
}

func BenchmarkString(b *testing.B) {
	text := strings.Repeat("Let me read the file src/server.ts and check the token handling. const key = cfg.key;\n", 400)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		String(text)
	}
}
