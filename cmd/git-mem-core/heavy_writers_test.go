package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// TestHeavyEightWriters: 8 processes add disjoint files (each batch big
// enough to be its own pack) into a memory seeded with 8,000 exchanges,
// with background repacks on; a searcher runs beside them. Every exchange
// is in main exactly once, the index holds exactly main's exchanges, and
// git fsck --strict and git mem check are clean (GIT_MEM_HEAVY=1).
func TestHeavyEightWriters(t *testing.T) {
	if os.Getenv("GIT_MEM_HEAVY") != "1" {
		t.Skip("heavy: set GIT_MEM_HEAVY=1")
	}
	work := t.TempDir()
	bin := filepath.Join(work, "git-mem")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	mem := filepath.Join(work, "mem.git")
	env := append(os.Environ(), "GIT_MEM_DIR="+mem, "HOME="+work, "GIT_CONFIG_NOSYSTEM=1", "GIT_MEM_AUTO_REPACK=1")
	run := func(args ...string) ([]byte, error) {
		c := exec.Command(bin, args...)
		c.Env = env
		return c.CombinedOutput()
	}
	write := func(name string, n int, prefix string) string {
		p := filepath.Join(work, name)
		f, _ := os.Create(p)
		for i := 0; i < n; i++ {
			fmt.Fprintf(f, `{"id":"%s-%d","session":"%s-s%d","time":"2026-03-01T10:00:00Z","turns":[{"role":"user","text":"%s question %d about the heron gateway"},{"role":"assistant","text":"answer %d"}]}`+"\n", prefix, i, prefix, i/10, prefix, i, i)
		}
		f.Close()
		return p
	}
	if out, err := run("init"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := run("add", write("seed.jsonl", 8000, "seed")); err != nil {
		t.Fatalf("seed: %v %s", err, out)
	}
	const writers, batches, per = 8, 6, 150
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches+1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if out, err := run("search", "heron gateway question"); err != nil {
				errs <- fmt.Errorf("search beside writers: %v %s", err, out)
				return
			}
		}
	}()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				p := write(fmt.Sprintf("w%d-b%d.jsonl", w, b), per, fmt.Sprintf("w%d-b%d", w, b))
				if out, err := run("add", p); err != nil {
					errs <- fmt.Errorf("writer %d batch %d: %v %s", w, b, err, out)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := 8000 + writers*batches*per
	keep := func() {
		if dir := os.Getenv("GIT_MEM_KEEP_FAILED"); dir != "" {
			_ = exec.Command("cp", "-a", mem, dir).Run()
			t.Logf("memory kept in %s", dir)
		}
	}
	out, err := run("check", "--json")
	if err != nil {
		keep()
		t.Fatalf("check: %v %s", err, out)
	}
	var full map[string]any
	_ = json.Unmarshal(out, &full)
	if int(full["exchanges"].(float64)) != want || int(full["index_docs"].(float64)) != want {
		keep()
		t.Fatalf("check: %s (want %d)", out, want)
	}
	if out, err := exec.Command("git", "--git-dir", mem, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("fsck: %v %s", err, out)
	}
}
