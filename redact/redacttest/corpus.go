// Package redacttest holds the labelled corpus the redaction tests use:
// many variants of every secret class (generated from a seed, so no literal
// token sits in the source for a scanner to flag) and a look-alike set that
// must survive untouched. Both redact's own tests and the pipeline tests
// (memory) read it.
package redacttest

import (
	"math/rand/v2"
	"strings"
)

// Gen makes fake secrets from a seeded generator, so test sources hold no
// literal token that a secret scanner (or a push protection) would flag.
type Gen struct{ r *rand.Rand }

// NewGen seeds a generator.
func NewGen(seed1, seed2 uint64) Gen { return Gen{rand.New(rand.NewPCG(seed1, seed2))} }

// Character sets of tokens.
const (
	Alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	Upper2 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	Hex    = "0123456789abcdef"
	B64    = Alnum + "+/"
	URLB64 = Alnum + "-_"
)

// Intn is the generator's own rand.IntN.
func (g Gen) Intn(n int) int { return g.r.IntN(n) }

// S returns n characters drawn from set.
func (g Gen) S(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

const (
	alnum  = Alnum
	upper2 = Upper2
	hexd   = Hex
	b64    = B64
	urlb64 = URLB64
)

// mixed says a generated token has upper, lower and digits, as machine
// tokens do.
func mixed(s string) bool {
	return strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz") &&
		strings.ContainsAny(s, "0123456789")
}

// Sample is one labelled text of the class corpus: the secrets in it that
// must go.
type Sample struct {
	Class   string
	Text    string
	Secrets []string
}

// Wrap places a secret-bearing line in different positions of a turn:
// alone, inside prose, in a fenced block, as the last line of a log, in a
// JSON string (escaped newline context).
func Wrap(i int, line string) string {
	switch i % 5 {
	case 1:
		return "Here is what I ran earlier today:\n" + line + "\nand it worked."
	case 2:
		return "```\n" + line + "\n```"
	case 3:
		return "2026-04-01 09:00:01 INFO starting\n2026-04-01 09:00:02 DEBUG " + line
	case 4:
		return `{"note": "` + strings.ReplaceAll(line, `"`, `\"`) + `"}`
	}
	return line
}

// Classes writes many variants of every class issue 14 names, and of
// the provider tokens, from a seeded generator (seed logged by the tests).
func Classes(seed uint64) []Sample {
	g := NewGen(seed, 14)
	upnum := "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	sym := "!#%^*-_+"
	pw := func() string {
		// Passwords people choose: a word, digits, a symbol, in any order.
		words := []string{"Summer", "Yourself", "Sample", "Example", "Dragon", "Monkey", "Tiger", "Falcon", "Secret", "Change"}
		w := words[g.Intn(len(words))]
		d := g.S("0123456789", 2+g.Intn(5))
		s := string(sym[g.Intn(len(sym))])
		switch g.Intn(3) {
		case 0:
			return w + d + s
		case 1:
			// A leading '-' would read as a flag on a command line.
			return strings.TrimPrefix(s, "-") + w + d + g.S(alnum, 3)
		}
		return strings.ToLower(w) + s + d + g.S(alnum, 2)
	}
	tok := func(n int) string {
		for {
			t := g.S(alnum, n)
			if mixed(t) {
				return t
			}
		}
	}
	var out []Sample
	add := func(class, text string, secrets ...string) {
		out = append(out, Sample{class, text, secrets})
	}
	for i := 0; i < 10; i++ {
		id := []string{"AKIA", "ASIA", "ABIA", "ACCA"}[i%4] + g.S(upnum, 16)
		sec := g.S(alnum+"/+", 18) + "Zq8" + g.S(alnum+"/+", 19)
		add("aws", Wrap(i, []string{
			"The key " + id + " looks inactive",
			"rotate " + id + " (secret " + sec + ")",
			"| " + id + " | " + sec + " | active |",
			"aws configure set aws_access_key_id " + id + " && aws configure set aws_secret_access_key " + sec,
			"AccessKeyId: " + id + "\nSecretAccessKey: " + sec,
		}[i%5]), id)
		if i%5 != 0 {
			out[len(out)-1].Secrets = append(out[len(out)-1].Secrets, sec)
		}

		p := pw()
		add("password-assign", Wrap(i, []string{
			"DB_PASSWORD=" + p,
			`password="` + p + `"`,
			"  password: " + p,
			`{"password": "` + p + `"}`,
			"spring.datasource.password=" + p,
			"ADMIN_PASS=" + p,
			"$env:SQL_PWD = '" + p + "'",
			"set MYSQL_PASSWORD=" + p,
			"passphrase := \"" + p + "\"",
			"POSTGRES_PASSWORD: " + p,
		}[i]), p)

		p = pw()
		add("words", Wrap(i, []string{
			"the db password is " + p,
			"The password for the staging admin is " + p + ".",
			"my password: " + p,
			"Password is now " + p,
			"the wifi passphrase was " + p,
			"root pw is " + p,
			"the admin password should be " + p + " until Friday",
			"ok, the new password is " + p + " — keep it safe",
			"our api key is " + tok(32),
			"use the token " + tok(40) + " for now",
		}[i]), p)
		if i >= 8 {
			out[len(out)-1].Secrets = nil
			f := strings.Fields(out[len(out)-1].Text)
			for _, w := range f {
				w = strings.Trim(w, `"{}:.`)
				if len(w) >= 32 && mixed(w) {
					out[len(out)-1].Secrets = append(out[len(out)-1].Secrets, w)
				}
			}
		}

		b := g.S(b64, 20+i) + "="
		t := tok(36)
		add("header", Wrap(i, []string{
			"curl -H 'Authorization: Basic " + b + "' https://api.acme.io",
			`"Authorization": "Basic ` + b + `"`,
			"Authorization: Token " + t,
			"authorization: Bearer " + t,
			"-H \"Proxy-Authorization: Basic " + b + "\"",
			"Authorization: Digest username=\"bob\", realm=\"api\", response=\"" + t + "\"",
			"AUTHORIZATION: token " + t,
			"headers = {'Authorization': 'Basic " + b + "'}",
			"X-Api-Key: " + t,
			"Authorization: SharedKey acme:" + b,
		}[i]), []string{b, b, t, t, b, t, t, b, t, b}[i])

		k := g.S(b64, 86) + "=="
		p = pw()
		add("connection-string", Wrap(i, []string{
			"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + k + ";EndpointSuffix=core.windows.net",
			"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=" + k[:44],
			"Server=tcp:db.acme.net,1433;Database=app;User ID=sa;Password=" + p + ";Encrypt=true",
			"jdbc:mysql://db:3306/app?user=root&password=" + p + "&useSSL=true",
			"jdbc:sqlserver://db:1433;databaseName=app;user=sa;password=" + p,
			"Driver={PostgreSQL};Server=db;Port=5432;Database=app;Uid=app;Pwd=" + p + ";",
			"mongodb+srv://app:" + p + "@cluster0.ab12c.mongodb.net/app",
			"postgresql://app:" + p + "@db.acme.net:5432/app?sslmode=require",
			"amqp://guest:" + p + "@rabbit:5672/",
			"Data Source=db;Initial Catalog=app;User Id=app;Password=" + p,
		}[i]), []string{k, k[:44], p, p, p, p, p, p, p, p}[i])

		t = tok(24)
		w := g.S(urlb64, 68)
		add("webhook", Wrap(i, []string{
			"https://hooks.slack.com/services/T" + g.S(upper2, 8) + "/B" + g.S(upper2, 8) + "/" + t,
			"https://discord.com/api/webhooks/123456789012345678/" + w,
			"https://acme.webhook.office.com/webhookb2/" + g.S(hexd, 8) + "@" + g.S(hexd, 8) + "/IncomingWebhook/" + t + "/" + g.S(hexd, 8),
			"https://api.telegram.org/bot12345678:" + w[:35] + "/sendMessage",
			"https://hooks.zapier.com/hooks/catch/123456/" + t + "/",
			"https://chat.acme.io/hooks/" + t,
			"https://notify.acme.io/v1/send?token=" + t + "&channel=ops",
			"https://api.acme.io/webhook/" + t,
			"POST https://ci.acme.io/generic-webhook-trigger/invoke?token=" + t,
			"https://discordapp.com/api/webhooks/987654321/" + w,
		}[i]), []string{t, w, t, w[:35], t, t, t, t, t, w}[i])

		s := g.S(urlb64, 40)
		add("service-key", Wrap(i, []string{
			"SUPABASE_SERVICE_ROLE_KEY=" + s,
			"FIREBASE_ADMIN_KEY: " + s,
			"sb_secret_" + s,
			"PLANETSCALE_PASSWORD=pscale_pw_" + s,
			"UPSTASH_REDIS_REST_TOKEN=" + s,
			"TURSO_AUTH_TOKEN=" + s,
			"NEON_API_KEY=" + s,
			`"private_key_id": "` + g.S(hexd, 40) + `"`,
			"PINECONE_API_KEY=pcsk_" + s,
			"CONVEX_DEPLOY_KEY=prod:acme|" + s,
		}[i]), s)
		if i == 7 {
			out[len(out)-1].Secrets = []string{strings.Split(out[len(out)-1].Text, `"`)[3]}
			if i%5 == 4 {
				out[len(out)-1].Secrets = nil
			}
		}

		p = pw()
		add("cmdline", Wrap(i, []string{
			"mysql -u root -p" + p + " app",
			"mysqldump -uroot -p'" + p + "' app > dump.sql",
			"sshpass -p '" + p + "' ssh deploy@10.0.0.4",
			"redis-cli -h cache -a " + p + " ping",
			"sqlcmd -S db -U sa -P " + p + " -Q 'select 1'",
			"mongosh --username admin --password " + p + " mongodb://db",
			"PGPASSWORD=" + p + " psql -h db -U app",
			"MYSQL_PWD=" + p + " mysql -u app",
			"docker login -u bot -p " + p + " registry.acme.io",
			"curl -u admin:" + p + " https://jenkins.acme.io/api/json",
		}[i]), p)

		p = pw()
		add("url-no-user", Wrap(i, []string{
			"REDIS_URL=redis://:" + p + "@cache:6379/0",
			"git clone https://:" + t + "@git.acme.io/acme/app.git",
			"rediss://:" + p + "@eu1-redis.upstash.io:6379",
			"amqps://:" + p + "@mq.acme.io",
			"redis://default:" + p + "@redis-123.cloud:6379",
		}[i%5]), []string{p, t, p, p, p}[i%5])

		pt := []string{
			"ghp_" + g.S(alnum, 36),
			"glpat-" + g.S(urlb64, 20),
			"sk-proj-" + g.S(urlb64, 64),
			"sk_live_" + g.S(alnum, 24),
			"xoxb-" + g.S("0123456789", 12) + "-" + g.S("0123456789", 13) + "-" + g.S(alnum, 24),
			"AIza" + g.S(urlb64, 35),
			"npm_" + tok(36),
			"SG." + g.S(urlb64, 22) + "." + g.S(urlb64, 43),
			"dop_v1_" + g.S(hexd, 64),
			"shpat_" + g.S(hexd, 32),
		}[i]
		add("provider", Wrap(i, []string{"token " + pt, pt, "OPENAI_API_KEY=" + pt, "export STRIPE_KEY=" + pt, "slack: " + pt}[i%5]), pt)
	}
	return out
}

// LookAlikes are texts no layer may change: hashes, ids, test data,
// placeholders and ordinary code that talks about secrets.
func LookAlikes() []string {
	return []string{
		"commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
		"git checkout a1b2c3d && git log --oneline 9fceb02..HEAD",
		"Merge: 1a2b3c4 5d6e7f8\nAuthor: Jane Doe <jane@example.org>",
		"id: 550e8400-e29b-41d4-a716-446655440000",
		"session 123e4567-e89b-12d3-a456-426614174000 resumed",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"docker pull alpine@sha256:c5b1261d6d3e43071626931fc004f70149baeba2c8ec672bd4f27761f8e1ad6b",
		"md5sum: d41d8cd98f00b204e9800998ecf8427e  empty.txt",
		`"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+5Er7QF5rhOy5XOnAn7fAEl/hbkwOM3WAwWs/Lg=="`,
		"data := \"SGVsbG8gV29ybGQhIFRoaXMgaXMgYSB0ZXN0Lg==\"",
		"want := []byte(\"dGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==\")",
		"color: #ff5733; background: #1e1e1e;",
		"password=<your-password>",
		"API_KEY=xxx",
		"TOKEN=${TOKEN}",
		"OPENAI_API_KEY=your_api_key_here",
		"DB_PASSWORD=changeme",
		"password: \"{{ .Values.db.password }}\"",
		"SECRET_KEY=%SECRET_KEY%",
		"export GITHUB_TOKEN=<token>",
		"AWS_SECRET_ACCESS_KEY=****************",
		"apiKey: process.env.OPENAI_API_KEY",
		"password: string;",
		"const tokenCount = countTokens(text)",
		"max_tokens: 4096",
		"src/auth/token_service.go",
		"internal/secret/keys.go and app/(protected)/teams/[id]/route.ts",
		"postgres://user:password@localhost:5432/db",
		"postgres://postgres:[YOUR-PASSWORD]@db.supabase.co:5432/postgres",
		"redis://localhost:6379/0",
		"https://github.com/gitmem/git-mem@v1.2.3",
		"author: Jane Doe",
		"the token: it expires after an hour",
		"the password is required",
		"the password is stored hashed with bcrypt",
		"the api key is read from the environment",
		"password = hashedPassword",
		"if token == expected {",
		"sk-proj-MB… was the prefix",
		"task-runner and disk-usage-analyzer-v2-long-name",
		"OPENAI_API_KEY=[REDACTED]",
		"git@github.com:gitmem/git-mem.git",
		"auth: true",
		"key: value",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host",
		"-----BEGIN PUBLIC KEY----- is how a PEM header starts",
		"eyJhbGciOiJIUzI1NiJ9 is a header only",
		"npm install tokenizer@2.3.1",
		"mysql -u root -p app",
		"psql -h localhost -p 5432 -U app",
		"ssh -p 2222 deploy@host",
		"redis-cli -h cache -p 6380 ping",
		"mysql -u root -p$MYSQL_ROOT_PASSWORD",
		"docker login -u bot --password-stdin < token.txt",
		"curl -u \"$USER:$PASS\" https://x.io",
		"Authorization: Bearer <token>",
		"Authorization: Basic ${BASIC_AUTH}",
		"set the Authorization header to the token",
		"func (s *Server) authorize(token string) error { return s.verify(token) }",
		"def check_password(self, raw_password):\n    return check(raw_password, self.password)",
		"if (password.length < 8) throw new Error('password too short')",
		"cacheKey := fmt.Sprintf(\"%s:%d\", user, id)",
		"primaryKey: 9f86d081884c7d659a2feaa0c55ad015",
		"sortKey = 'createdAt'",
		"https://example.com/search?q=token+rotation&page=2",
		"https://docs.github.com/en/webhooks/using-webhooks/creating-webhooks",
		"https://api.acme.io/hooks/on-deploy",
		"https://github.com/acme/app/blob/3f786850e387550fdab836ed7e6dc881de23001b/main.go",
		"key_id: 7",
		"the secret sauce is caching",
		"version: 2.4.1-rc.3+build.20260401",
		"const uuidRe = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/",
		"base64: YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo=",
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUX\n-----END CERTIFICATE-----",
		"passed 42 tests, 0 failed",
		"token_type: bearer, expires_in: 3600",
		"the key is in the vault",
		"set password_min_length = 12",
		// False positives seen on the real coding corpus, kept out since.
		"   - Database password: **Save this password!**",
		"ArgumentException: An item with the same key has already been added. Key: 4c91a75b17aeb995.Test.ApplicationService",
		"Warning: Encountered two children with the same key, `cmd2i7nxe000hjhki85pw2fou`. Keys should be unique",
		"curl -s \"https://your-project.supabase.co/rest/v1/\" -H \"apikey: your-anon-key\" -H \"Authorization: Bearer your-anon-key\"",
		"2025-09-19T16:44:26.1226750Z Cache restored from key: node-cache-Linux-x64-npm-8f3c2a9d41b7e6f0a5c3d2e1b4a7f9c8e6d5b3a1f2e4c6d8b0a9f7e5c3d1b2a4",
		"Created conversation ID: 7a3f9c2e-4b1d-4e8a-9f6c-2d5b8e1a7c3f",
		"Cannot use automatic login flow inside non-TTY environments. Please provide --token flag or set the SUPABASE_ACCESS_TOKEN environment variable.",
		"Let me run the tests again to see if they pass now: ✅ All integration tests pass when services are running",
		"LANGSMITH_API_KEY=\"lsv2_your_key_here\" node test-agent.js",
		"export LANGSMITH_API_KEY=\"ls__your-actual-api-key-here\"",
	}
}
