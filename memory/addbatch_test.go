package memory

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestAddJSONLBatchesInOrder: a file added in batches of 3, each batch
// redacted while the one before is stored, gives what one batch gives: the
// same report (added, present, skipped, redacted, commits in order) and
// the same commits. Ids repeat across batches and within one; a bad line
// and a secret sit among them.
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
	run := func(batch int) (AddReport, string) {
		defer func(b int) { addBatch = b }(addBatch)
		addBatch = batch
		m := newMemory(t)
		rep, err := m.AddFiles(context.Background(), []string{file}, nil, "exchange", AddOptions{})
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
	three, logThree := run(3)
	if one.Added != 9 || one.Present != 5 || len(one.Skipped) != 1 || one.Redacted != 1 {
		t.Fatalf("one batch: %+v", one)
	}
	ex := func(r AddReport) []string {
		var out []string
		for _, c := range r.Commits {
			out = append(out, c.Exchange)
		}
		return out
	}
	if three.Added != one.Added || three.Present != one.Present || three.Redacted != one.Redacted ||
		!reflect.DeepEqual(three.Skipped, one.Skipped) || !reflect.DeepEqual(ex(three), ex(one)) {
		t.Fatalf("batches of 3: %+v\none batch: %+v", three, one)
	}
	if logThree != logOne {
		t.Fatalf("commits differ:\n%s\none batch:\n%s", logThree, logOne)
	}
}
