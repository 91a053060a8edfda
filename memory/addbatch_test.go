package memory

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
)

// TestAddJSONLBatchesInOrder: a file added in batches of 1, 2 and 3, each
// batch redacted, looked up and distilled while the one before is stored,
// gives what one batch gives: the same report (added, present, forgotten,
// skipped, redacted, commits in order) and the same commits. Ids repeat
// across batches and within one, each time with another first user turn
// (another exchange: stored under a derived id); a bad line and a secret sit among them;
// the memory holds two of the ids already and has forgotten a third.
func TestAddJSONLBatchesInOrder(t *testing.T) {
	var lines []string
	for i := 0; i < 14; i++ {
		id := fmt.Sprintf("x%d", i%9) // x0…x4 twice, in another batch
		text := fmt.Sprintf("step %d of the retry fix", i)
		if i == 6 {
			text = "the key is AKIAIOSFODNN7EXAMPLF, keep it"
		}
		lines = append(lines, fmt.Sprintf(`{"id":%q,"session":"s","time":"2026-01-%02dT00:00:00Z","turns":[{"role":"user","text":%q},{"role":"assistant","text":"done %d"}]}`, id, i+1, text, i))
		if i == 4 {
			lines = append(lines, `{"turns": [}`)
		}
	}
	file := filepath.Join(t.TempDir(), "ex.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Stored before the file: x7 and x8 (x8 then forgotten), and y.
	before := filepath.Join(t.TempDir(), "before.jsonl")
	var early []string
	for _, i := range []int{7, 8} {
		early = append(early, lines[i+1]) // lines[5] is the bad line
	}
	early = append(early, `{"id":"y","session":"s","time":"2026-01-20T00:00:00Z","turns":[{"role":"user","text":"other"},{"role":"assistant","text":"ok"}]}`)
	if err := os.WriteFile(before, []byte(strings.Join(early, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(batch int) (AddReport, string) {
		defer func(b int) { addBatch = b }(addBatch)
		ctx := context.Background()
		m := newMemory(t)
		if rep, err := m.AddFiles(ctx, []string{before}, nil, "exchange", AddOptions{}); err != nil || rep.Added != 3 {
			t.Fatalf("before: %+v %v", rep, err)
		}
		plan, err := m.ForgetPlan(ctx, ForgetSelect{Refs: []string{"x8"}})
		if err != nil || len(plan) != 1 {
			t.Fatalf("forget plan: %v %v", plan, err)
		}
		if _, err := m.Forget(ctx, plan, ""); err != nil {
			t.Fatal(err)
		}
		addBatch = batch
		rep, err := m.AddFiles(ctx, []string{file}, nil, "exchange", AddOptions{})
		if err != nil || !rep.Indexed {
			t.Fatalf("batch %d: %+v %v", batch, rep, err)
		}
		out, err := exec.Command("git", "--git-dir", m.Repo.Dir(), "log", "--format=%T %s%n%b", "main").CombinedOutput()
		if err != nil {
			t.Fatalf("git log: %v %s", err, out)
		}
		return rep, string(out)
	}
	one, logOne := run(1000)
	if one.Added != 12 || one.Reused != 5 || one.Present != 1 || one.Forgotten != 1 || len(one.Skipped) != 1 || one.Redacted != 1 {
		t.Fatalf("one batch: %+v", one)
	}
	ex := func(r AddReport) []string {
		var out []string
		for _, c := range r.Commits {
			out = append(out, c.Exchange)
		}
		return out
	}
	for _, batch := range []int{1, 2, 3} {
		got, log := run(batch)
		if got.Added != one.Added || got.Reused != one.Reused || got.Present != one.Present || got.Forgotten != one.Forgotten || got.Redacted != one.Redacted ||
			!reflect.DeepEqual(got.Skipped, one.Skipped) || !reflect.DeepEqual(ex(got), ex(one)) {
			t.Fatalf("batches of %d: %+v\none batch: %+v", batch, got, one)
		}
		if log != logOne {
			t.Fatalf("batches of %d: commits differ:\n%s\none batch:\n%s", batch, log, logOne)
		}
	}
}

// TestRebuildGCTarget: a rebuild lowers the GC target only when it is
// large, and never over the user's GOGC.
func TestRebuildGCTarget(t *testing.T) {
	cases := []struct {
		commits int
		gogc    string
		want    int
		set     bool
	}{
		{0, "", 0, false},
		{3099, "", 0, false},
		{rebuildLowGCFrom - 1, "", 0, false},
		{rebuildLowGCFrom, "", rebuildGCPercent, true},
		{1_000_000, "", rebuildGCPercent, true},
		{1_000_000, "200", 0, false},
		{1_000_000, "off", 0, false},
		{10, "50", 0, false},
	}
	for _, c := range cases {
		got, set := rebuildGCTarget(c.commits, c.gogc)
		if got != c.want || set != c.set {
			t.Errorf("rebuildGCTarget(%d, %q) = %d, %v; want %d, %v", c.commits, c.gogc, got, set, c.want, c.set)
		}
	}
}

// TestStoreGC: the store phase's collector target and soft limit are set
// and then restored, unless the user set GOGC or GOMEMLIMIT.
func TestStoreGC(t *testing.T) {
	cases := []struct {
		name, gogc, memlimit string
		set                  bool
	}{
		{"default", "", "", true},
		{"user GOGC", "150", "", false},
		{"user GOMEMLIMIT", "", "2GiB", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", tc.memlimit)
			pct := debug.SetGCPercent(100)
			defer debug.SetGCPercent(pct)
			limit := debug.SetMemoryLimit(-1)
			restore := storeGC()
			gotPct, gotLimit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
			debug.SetGCPercent(gotPct)
			if tc.set != (gotPct == storeGCPercent && gotLimit == storeMemLimit) {
				t.Fatalf("during: GC %d, limit %d; want set %v", gotPct, gotLimit, tc.set)
			}
			restore()
			if got, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); got != 100 || l != limit {
				t.Fatalf("after: GC %d, limit %d; want 100, %d", got, l, limit)
			}
		})
	}
}
