package search

import (
	"fmt"
	"math/rand"
	"strings"
	"time"
)

// synthDocs makes n deterministic exchanges that look like a coding agent's:
// a prompt, a reply, a tool call with output, identifiers, paths and error
// strings, drawn from a Zipf vocabulary so that BM25 statistics are realistic.
func synthDocs(n int, seed int64) []Doc {
	r := rand.New(rand.NewSource(seed))
	words := strings.Fields(`the retry timeout middleware auth token session cache index query commit branch merge
	rebase test failing panic error nil pointer dereference handler router config yaml json parse decode encode
	schema migration database postgres sqlite connection pool deadlock mutex goroutine channel context cancel
	deadline http request response status header cookie jwt refresh expire login logout user account billing
	invoice payment stripe webhook queue worker job retry backoff jitter rate limit throttle metric prometheus
	log trace span otel docker compose kubernetes pod deploy helm chart build lint format vet race benchmark
	profile memory leak allocation slice map struct interface method generic type param closure defer recover
	file path directory permission denied not found exists create delete rename write read flush sync fsync`)
	idents := []string{"authMiddleware", "retry_timeout", "parseConfig", "HTTPServer", "db.Open", "ctx.Done",
		"sync.Mutex", "json.Unmarshal", "os.ReadFile", "handleLogin", "refreshToken", "MaxRetries", "user_id",
		"invoiceTotal", "StripeWebhook", "queue.Push", "NewRouter", "errNotFound", "io.EOF", "rateLimiter"}
	files := []string{"internal/auth/middleware.go", "cmd/server/main.go", "pkg/db/pool.go", "config.yaml",
		"internal/billing/invoice.go", "web/src/App.tsx", "Makefile", "docs/README.md", "pkg/queue/worker.go",
		"internal/api/router.go", "scripts/deploy.sh", "go.mod"}
	projects := []string{"billing", "gateway", "webapp", "infra"}
	agents := []string{"claude-code", "codex"}
	zipf := rand.NewZipf(r, 1.1, 3, uint64(len(words)-1))
	sentence := func(k int) string {
		var b strings.Builder
		for i := 0; i < k; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			if r.Intn(7) == 0 {
				b.WriteString(idents[r.Intn(len(idents))])
			} else {
				b.WriteString(words[zipf.Uint64()])
			}
		}
		return b.String()
	}
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	docs := make([]Doc, n)
	for i := range docs {
		f1, f2 := files[r.Intn(len(files))], files[r.Intn(len(files))]
		id := idents[r.Intn(len(idents))]
		code := fmt.Sprintf("E%04d", r.Intn(5000))
		prompt := sentence(8+r.Intn(20)) + " " + id + "?"
		reply := sentence(30+r.Intn(60)) + ". I changed " + f1 + " so that " + id + " handles " + code + "."
		output := sentence(60 + r.Intn(200))
		tail := sentence(10 + r.Intn(30))
		if i%4 == 0 {
			tail += ". Want me to add a test for " + id + "?" // a quarter end by asking
		}
		verb := "user: " + prompt + "\n\nassistant: " + reply + "\n\ntool read_file: " + f1 + "\n" + output +
			"\nerror " + code + " in " + f2 + "\n\nassistant: " + tail
		docs[i] = Doc{
			Seq: i, Commit: fmt.Sprintf("%040x", i+1), ID: fmt.Sprintf("ex-%06d", i),
			Time:    base.Add(time.Duration(i) * 37 * time.Minute),
			Core:    "Fixed " + id + " in " + f1 + ": " + sentence(6+r.Intn(8)) + ".",
			Context: "error " + code + " " + sentence(3+r.Intn(5)),
			Rooms:   []string{"file:" + strings.TrimSuffix(f1[strings.LastIndex(f1, "/")+1:], ".go"), "concept:" + words[zipf.Uint64()]},
			Files:   []string{f1, f2},
			Project: projects[r.Intn(len(projects))], Agent: agents[r.Intn(len(agents))],
			Session:  fmt.Sprintf("s%04d", i/7),
			Verbatim: verb, Head: prompt, Tail: tail,
		}
	}
	return docs
}
