// Command synth writes N synthetic coding exchanges in the plain exchange
// format, for benchmarks (`go run ./scripts/synth -n 15000 > ex.jsonl`).
// Deterministic: the same N gives the same file.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"time"
)

var (
	verbs    = []string{"fix", "add", "refactor", "rename", "document", "speed up", "test", "remove", "debug", "migrate"}
	things   = []string{"retry loop", "auth middleware", "invoice export", "webhook handler", "rate limiter", "cache layer", "db pool", "session store", "CSV parser", "feature flag", "login form", "build script", "docker image", "cron job", "search index"}
	errs     = []string{"TypeError: Cannot read properties of undefined (reading '%s')", "panic: runtime error: index out of range [%d] with length %d", "error[E0502]: cannot borrow `%s` as mutable", "ECONNREFUSED 127.0.0.1:%d", "AssertionError: expected %d to equal %d", "ModuleNotFoundError: No module named '%s'"}
	words    = strings.Fields("the a to of and in is it that for on with as this was be by not are from at or an have has but they we you can will would should could when what which")
	idents   = []string{"userId", "retryCount", "maxBackoff", "invoiceTotal", "sessionTTL", "rateLimit", "poolSize", "authToken", "featureFlag", "batchSize"}
	projects = []string{"billing", "api", "web", "infra", "mobile"}
)

func main() {
	n := flag.Int("n", 15000, "number of exchanges")
	flag.Parse()
	r := rand.New(rand.NewSource(42))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	start := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := 0; i < *n; i++ {
		thing := things[r.Intn(len(things))]
		id := idents[r.Intn(len(idents))]
		file := fmt.Sprintf("src/%s/%s.ts", strings.ReplaceAll(thing, " ", "_"), id)
		e := fmt.Sprintf(errs[r.Intn(len(errs))], id, r.Intn(100), r.Intn(100))
		var filler []string
		for k := 0; k < 40+r.Intn(120); k++ {
			filler = append(filler, words[r.Intn(len(words))])
		}
		ex := map[string]any{
			"id":      fmt.Sprintf("synth-%d", i),
			"session": fmt.Sprintf("synth-s%d", i/12),
			"time":    start.Add(time.Duration(i) * 17 * time.Minute).Format(time.RFC3339),
			"project": projects[(i/12)%len(projects)],
			"agent":   "claude-code",
			"turns": []map[string]any{
				{"role": "user", "text": fmt.Sprintf("Please %s the %s: %s (seen in %s)", verbs[r.Intn(len(verbs))], thing, e, file)},
				{"role": "tool", "name": "Read", "input": map[string]any{"file_path": file}, "text": strings.Join(filler, " ")},
				{"role": "tool", "name": "Edit", "input": map[string]any{"file_path": file, "old_string": id, "new_string": id + "2"}, "text": "ok"},
				{"role": "assistant", "text": fmt.Sprintf("Done: the %s now handles %s; %s.", thing, id, strings.Join(filler[:20], " "))},
			},
		}
		b, _ := json.Marshal(ex)
		w.Write(b)
		w.WriteByte('\n')
	}
}
