// Command synth writes N synthetic coding exchanges in the plain exchange
// format, for benchmarks (`go run ./scripts/synth -n 15000 > ex.jsonl`).
// Deterministic: the same arguments and input give the same file.
//
// The templates below use about a hundred words, so every term's postings
// reach a large share of the memory; real sessions have a long tail of
// rare words. With -coding DIR (folders of exchanges.jsonl, e.g.
// ../shared/eval/coding, read in place), a share of the sessions
// (-coding-share) are the real ones, replicated as often as N needs with
// new ids, sessions and times, so that term statistics stay realistic at
// any size (issue 19).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
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
	coding := flag.String("coding", "", "folder of folders holding exchanges.jsonl: mix their sessions in, replicated with new ids")
	share := flag.Float64("coding-share", 0.5, "with -coding: the share of sessions taken from it")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	var sessions [][]map[string]any
	if *coding != "" {
		var err error
		if sessions, err = readSessions(*coding); err != nil {
			fmt.Fprintln(os.Stderr, "synth:", err)
			os.Exit(1)
		}
	}
	if err := write(w, *n, sessions, *share); err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
}

// write emits n exchanges: synthetic sessions of 12 and, when sessions are
// given, real ones chosen with probability share, in turn, a copy number
// appended to their ids and sessions each time the list starts over. Every
// exchange gets the next time on one clock (17 minutes apart).
func write(w *bufio.Writer, n int, sessions [][]map[string]any, share float64) error {
	r := rand.New(rand.NewSource(42))
	pick := rand.New(rand.NewSource(7)) // apart, so -coding leaves the templates' draws as they were
	start := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	emit := func(i int, ex map[string]any) error {
		ex["time"] = start.Add(time.Duration(i) * 17 * time.Minute).Format(time.RFC3339)
		b, err := json.Marshal(ex)
		if err != nil {
			return err
		}
		w.Write(b)
		return w.WriteByte('\n')
	}
	next, copyNo, synthSession := 0, 1, 0
	for i := 0; i < n; {
		if len(sessions) > 0 && pick.Float64() < share {
			for _, src := range sessions[next] {
				if i == n {
					break
				}
				ex := make(map[string]any, len(src))
				for k, v := range src {
					ex[k] = v
				}
				ex["id"] = fmt.Sprintf("%v-r%d", src["id"], copyNo)
				ex["session"] = fmt.Sprintf("%v-r%d", src["session"], copyNo)
				if err := emit(i, ex); err != nil {
					return err
				}
				i++
			}
			if next++; next == len(sessions) {
				next, copyNo = 0, copyNo+1
			}
			continue
		}
		for k := 0; k < 12 && i < n; k++ {
			if err := emit(i, synthetic(r, i, synthSession)); err != nil {
				return err
			}
			i++
		}
		synthSession++
	}
	return nil
}

// synthetic is one templated exchange; s numbers its session.
func synthetic(r *rand.Rand, i, s int) map[string]any {
	thing := things[r.Intn(len(things))]
	id := idents[r.Intn(len(idents))]
	file := fmt.Sprintf("src/%s/%s.ts", strings.ReplaceAll(thing, " ", "_"), id)
	e := fmt.Sprintf(errs[r.Intn(len(errs))], id, r.Intn(100), r.Intn(100))
	var filler []string
	for k := 0; k < 40+r.Intn(120); k++ {
		filler = append(filler, words[r.Intn(len(words))])
	}
	return map[string]any{
		"id":      fmt.Sprintf("synth-%d", i),
		"session": fmt.Sprintf("synth-s%d", s),
		"project": projects[s%len(projects)],
		"agent":   "claude-code",
		"turns": []map[string]any{
			{"role": "user", "text": fmt.Sprintf("Please %s the %s: %s (seen in %s)", verbs[r.Intn(len(verbs))], thing, e, file)},
			{"role": "tool", "name": "Read", "input": map[string]any{"file_path": file}, "text": strings.Join(filler, " ")},
			{"role": "tool", "name": "Edit", "input": map[string]any{"file_path": file, "old_string": id, "new_string": id + "2"}, "text": "ok"},
			{"role": "assistant", "text": fmt.Sprintf("Done: the %s now handles %s; %s.", thing, id, strings.Join(filler[:20], " "))},
		},
	}
}

// readSessions reads dir/*/exchanges.jsonl, folders in name order, and
// groups the exchanges by session in the order they first appear.
func readSessions(dir string) ([][]map[string]any, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "exchanges.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no */exchanges.jsonl", dir)
	}
	sort.Strings(files)
	var out [][]map[string]any
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		index := map[string]int{}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for line := 1; sc.Scan(); line++ {
			var ex map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
				fh.Close()
				return nil, fmt.Errorf("%s:%d: %v", f, line, err)
			}
			s := fmt.Sprint(ex["session"])
			k, ok := index[s]
			if !ok {
				k = len(out)
				index[s] = k
				out = append(out, nil)
			}
			out[k] = append(out[k], ex)
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return out, nil
}
