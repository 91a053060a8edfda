package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodingMix: -coding mixes whole real sessions in, in order, each copy
// with new ids and sessions; every id is unique; the same input gives the
// same bytes; without sessions the output is the templates alone.
func TestCodingMix(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for s := 0; s < 3; s++ {
		for e := 0; e <= s; e++ { // sessions of 1, 2 and 3 exchanges
			lines = append(lines, fmt.Sprintf(`{"id":"p-s%d-e%d","session":"p-s%d","time":"2025-04-26T20:30:55Z","project":"p","turns":[{"role":"user","text":"q%d"},{"role":"assistant","text":"a"}]}`, s, e, s, e))
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p", "exchanges.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sessions, err := readSessions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 3 || len(sessions[2]) != 3 {
		t.Fatalf("sessions %d", len(sessions))
	}
	run := func(n int, ss [][]map[string]any, share float64) []map[string]any {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := write(w, n, ss, share); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var ex map[string]any
			if err := json.Unmarshal([]byte(l), &ex); err != nil {
				t.Fatal(err)
			}
			out = append(out, ex)
		}
		return out
	}
	out := run(500, sessions, 0.5)
	if len(out) != 500 {
		t.Fatalf("%d exchanges, want 500", len(out))
	}
	ids := map[string]bool{}
	real, prevSession := 0, ""
	seenSession := map[string]bool{}
	for _, ex := range out {
		id, s := ex["id"].(string), ex["session"].(string)
		if ids[id] {
			t.Fatalf("id %s twice", id)
		}
		ids[id] = true
		if s != prevSession && seenSession[s] {
			t.Fatalf("session %s split", s)
		}
		seenSession[s], prevSession = true, s
		if strings.HasPrefix(id, "p-") {
			real++
			if !strings.Contains(id, "-r") || !strings.HasSuffix(s, id[strings.LastIndex(id, "-r"):]) {
				t.Errorf("copy %s in session %s: want the same copy suffix", id, s)
			}
		}
	}
	if real == 0 || !ids["p-s2-e2-r2"] {
		t.Errorf("%d real exchanges; the second copy of the corpus missing", real)
	}
	if again := run(500, sessions, 0.5); fmt.Sprint(again) != fmt.Sprint(out) {
		t.Error("not deterministic")
	}
	for _, ex := range run(50, nil, 0.5) {
		if !strings.HasPrefix(ex["id"].(string), "synth-") {
			t.Fatalf("no sessions given, yet %v", ex["id"])
		}
	}
}
