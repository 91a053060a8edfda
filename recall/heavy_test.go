package recall

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/gitmem/git-mem/internal/shared"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/search"
)

// The measurements of docs/bench/recall.md. They build real memories and
// take minutes, so they run only with GIT_MEM_HEAVY=1:
//
//	GIT_MEM_HEAVY=1 go test -run 'TestHeavy' -v -timeout 60m ./recall

func heavy(t *testing.T) {
	if os.Getenv("GIT_MEM_HEAVY") != "1" {
		t.Skip("set GIT_MEM_HEAVY=1 to run the recall measurements")
	}
}

// locomoQuery is one line of a queries.jsonl of shared/eval: LoCoMo's
// category is 1–5, the coding set's a word.
type locomoQuery struct {
	Query       string          `json:"query"`
	Relevant    []string        `json:"relevant"`
	Category    json.RawMessage `json:"category"`
	Adversarial bool            `json:"adversarial"`
}

func readQueries(t *testing.T, path string) []locomoQuery {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []locomoQuery
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var q locomoQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var cat int
		if json.Unmarshal(q.Category, &cat) == nil && (cat < 1 || cat > 4) {
			continue // LoCoMo category 5 is adversarial
		}
		if q.Adversarial || len(q.Relevant) == 0 {
			continue
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHeavyLoCoMoRecall measures, for budgets of 1k, 4k and 16k tokens, how
// often a query's relevant exchange lands in the packed block: cards against
// the verbatim exchanges packed the same way (same ranking, same packer).
func TestHeavyLoCoMoRecall(t *testing.T) {
	heavy(t)
	root := os.Getenv("GIT_MEM_EVAL")
	if root == "" {
		root = filepath.Join(shared.Dir(), "eval")
	}
	t.Setenv("HOME", t.TempDir())
	for _, set := range []struct{ name, glob string }{
		{"LoCoMo dev", "locomo-dev/conv-*/queries.jsonl"},
		{"coding", "coding/*/queries.jsonl"},
	} {
		qs, _ := filepath.Glob(filepath.Join(root, set.glob))
		if len(qs) == 0 {
			t.Logf("%s: no queries under %s: skipped", set.name, root)
			continue
		}
		var dirs []string
		for _, q := range qs {
			dirs = append(dirs, filepath.Dir(q))
		}
		measureRecall(t, set.name, dirs)
	}
}

func measureRecall(t *testing.T, name string, convs []string) {
	budgets := []int{1000, 4000, 16000}
	type tally struct{ any, all, n, tokens, items int }
	cards := make([]tally, len(budgets))
	verb := make([]tally, len(budgets))
	var mode string
	ctx := context.Background()
	for _, conv := range convs {
		m, _, err := memory.Init(filepath.Join(t.TempDir(), "mem.git"))
		if err != nil {
			t.Fatal(err)
		}
		mode = m.Config.Search.Mode
		if mode == "" {
			mode = search.DefaultMode
		}
		if _, err := m.Add(ctx, readExchanges(t, filepath.Join(conv, "exchanges.jsonl")), memory.AddOptions{}); err != nil {
			t.Fatal(err)
		}
		// The verbatim items of every exchange, read from git once.
		verbatim := map[string]string{}
		all, _, err := Entries(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range all {
			ex, _, err := m.Verbatim(e.Exchange)
			if err != nil {
				t.Fatal(err)
			}
			verbatim[e.Exchange] = FormatVerbatim(e, ex, true)
		}
		for _, q := range readQueries(t, filepath.Join(conv, "queries.jsonl")) {
			// One ranking per query, deep enough for the largest budget;
			// cards and verbatim are packed from it the same way.
			hits, _, err := m.Search(ctx, memory.SearchQuery{Text: q.Query, K: candidates(budgets[len(budgets)-1])})
			if err != nil {
				t.Fatal(err)
			}
			var ci, vi []string
			for i := range hits {
				ci = append(ci, FormatCard(&hits[i].Entry, true, len(hits[i].Collapsed)))
				vi = append(vi, verbatim[hits[i].Exchange])
			}
			for b, budget := range budgets {
				for _, c := range []struct {
					items []string
					t     *tally
				}{{ci, &cards[b]}, {vi, &verb[b]}} {
					p := Pack(queryHeader(q.Query), c.items, budget)
					if p.Tokens > budget {
						t.Fatalf("budget %d exceeded: %d", budget, p.Tokens)
					}
					in := map[string]bool{}
					for _, i := range p.Items {
						in[hits[i].Exchange] = true
					}
					found := 0
					for _, r := range q.Relevant {
						if in[r] {
							found++
						}
					}
					c.t.n++
					c.t.tokens += p.Tokens
					c.t.items += len(p.Items)
					if found > 0 {
						c.t.any++
					}
					if found == len(q.Relevant) {
						c.t.all++
					}
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s, %d memories, %d queries (adversarial and LoCoMo category 5 excluded), search mode %q\n\n", name, len(convs), cards[0].n, mode)
	b.WriteString("| budget | cards: any relevant | cards: all relevant | verbatim: any relevant | verbatim: all relevant | mean tokens used (cards / verbatim) | mean exchanges packed (cards / verbatim) |\n|---|---|---|---|---|---|---|\n")
	for i, budget := range budgets {
		c, v := cards[i], verb[i]
		fmt.Fprintf(&b, "| %d | %.3f | %.3f | %.3f | %.3f | %d / %d | %.1f / %.1f |\n", budget,
			frac(c.any, c.n), frac(c.all, c.n), frac(v.any, v.n), frac(v.all, v.n), c.tokens/max(c.n, 1), v.tokens/max(v.n, 1),
			float64(c.items)/float64(max(c.n, 1)), float64(v.items)/float64(max(v.n, 1)))
	}
	t.Log(b.String())
}

func frac(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(a) / float64(n)
}

// synthExchange is one made-up coding exchange: varied projects, files,
// errors and fixes, about 150 tokens.
func synthExchange(i int, rng *rand.Rand) *exchange.Exchange {
	projects := []string{"billing", "api", "web", "infra", "search", "auth", "mobile", "etl", "docs", "cli", "payments", "ml"}
	pkgs := []string{"auth", "billing", "export", "ratelimit", "cache", "webhook", "parser", "storage", "queue", "config", "metrics", "router"}
	errs := []string{"panic: runtime error: invalid memory address or nil pointer dereference",
		"TypeError: Cannot read properties of undefined (reading 'currency')",
		"context deadline exceeded", "connection refused", "duplicate key value violates unique constraint",
		"index out of range [3] with length 3", "permission denied", "unexpected EOF", "too many open files"}
	verbs := []string{"fix", "refactor", "add a test for", "speed up", "document", "rename the helpers in", "add retries to", "remove the dead code in"}
	p := projects[i%len(projects)]
	pkg := pkgs[rng.Intn(len(pkgs))]
	file := fmt.Sprintf("internal/%s/%s_%d.go", pkg, pkg, rng.Intn(40))
	e := errs[rng.Intn(len(errs))]
	v := verbs[rng.Intn(len(verbs))]
	n := rng.Intn(1000)
	return &exchange.Exchange{
		ID:      fmt.Sprintf("synth-%05d", i),
		Session: fmt.Sprintf("synth-s%04d", i/25),
		Time:    time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 17 * time.Minute).Format(time.RFC3339),
		Project: p,
		Agent:   []string{"claude-code", "codex"}[i%2],
		Turns: []exchange.Turn{
			{Role: "user", Text: fmt.Sprintf("Please %s %s. Running the job %d gives `%s` when the %s worker starts with FLAG_%d=on.", v, file, n, e, pkg, n)},
			{Role: "tool", Name: "Read", Input: map[string]any{"file_path": file}, Text: fmt.Sprintf("func handle%d(ctx context.Context) error { return s.%s.Do(ctx) }", n, pkg)},
			{Role: "tool", Name: "Edit", Input: map[string]any{"file_path": file}, Text: "ok"},
			{Role: "assistant", Text: fmt.Sprintf("Done: %s now checks the %s client before use and returns a wrapped error; the %s case has a table test (case %d). go test ./internal/%s passes.", file, pkg, e, n, pkg)},
		},
	}
}

// heavyMemory builds (or reuses, under $GIT_MEM_HEAVY_DIR) a memory of n
// synthetic exchanges.
func heavyMemory(t *testing.T, n int) string {
	t.Helper()
	dir := os.Getenv("GIT_MEM_HEAVY_DIR")
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "mem.git")
	}
	m, _, err := memory.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	start := time.Now()
	const batch = 1000
	added := 0
	for i := 0; i < n; i += batch {
		var exs []*exchange.Exchange
		for j := i; j < min(i+batch, n); j++ {
			exs = append(exs, synthExchange(j, rng))
		}
		rep, err := m.Add(context.Background(), exs, memory.AddOptions{NoIndex: true})
		if err != nil {
			t.Fatal(err)
		}
		added += rep.Added
	}
	t.Logf("memory %s: %d exchanges (%d added in %s)", dir, n, added, time.Since(start).Round(time.Second))
	return dir
}

// TestHeavyHookLatency times the SessionStart hook, the whole process of the
// built binary, on a 15k-exchange memory: once cold (no card cache), once
// after main moved by one commit, and ~20 warm runs.
func TestHeavyHookLatency(t *testing.T) {
	heavy(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := heavyMemory(t, 15000)
	bin := os.Getenv("GIT_MEM_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "git-mem")
		if out, err := exec.Command("go", "build", "-o", bin, "../cmd/git-mem").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	cwd := filepath.Join(t.TempDir(), "billing")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	input := fmt.Sprintf(`{"session_id":"bench","cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, cwd)
	run := func() (time.Duration, []byte) {
		cmd := exec.Command(bin, "context", "--hook", "claude-code", "--mem-dir", dir)
		cmd.Env = append(os.Environ(), "HOME="+home)
		cmd.Stdin = strings.NewReader(input)
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil {
			t.Fatalf("hook: %v", err)
		}
		return d, out
	}
	cache := filepath.Join(dir, "mem", "cache", "entries.bin")
	_ = os.Remove(cache)
	// Cold: the hook gives up at its deadline, prints nothing and leaves a
	// detached `git mem context --warm` building the cache.
	cold, _ := run()
	for i := 0; i < 600; i++ {
		if _, err := os.Stat(cache); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	m, err := memory.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ex := synthExchange(15000+int(time.Now().Unix()%100000), rand.New(rand.NewSource(time.Now().UnixNano())))
	ex.ID = fmt.Sprintf("synth-moved-%d", time.Now().UnixNano())
	if _, err := m.Add(context.Background(), []*exchange.Exchange{ex}, memory.AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	moved, out := run()
	if !strings.Contains(string(out), "hookSpecificOutput") {
		t.Fatalf("hook printed %q", out)
	}
	var warm []time.Duration
	for i := 0; i < 21; i++ {
		d, _ := run()
		warm = append(warm, d)
	}
	sort.Slice(warm, func(i, j int) bool { return warm[i] < warm[j] })
	st, _ := os.Stat(filepath.Join(dir, "mem", "cache", "entries.bin"))
	var size int64
	if st != nil {
		size = st.Size()
	}
	t.Logf("\nSessionStart hook on %d exchanges (GOMAXPROCS %d): cold (no cache: gives up, builds it in the background) %s, main moved by 1 commit %s, warm p50 %s (min %s, max %s, n=%d), cache %d KB, output %d bytes",
		15001, runtime.GOMAXPROCS(0), cold.Round(time.Millisecond), moved.Round(time.Millisecond),
		warm[len(warm)/2].Round(time.Millisecond), warm[0].Round(time.Millisecond), warm[len(warm)-1].Round(time.Millisecond), len(warm), size>>10, len(out))
}
