package memory

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAddFollowsSameIndex: an add whose index update runs beside it
// (storeFeed; a rebuild following the add's batches, or catch-ups) leaves
// the index an update after the whole add leaves: every exchange indexed
// up to main's head, the tables that hold no commit id byte-equal, the
// same hits with the same scores. Cases where the add's batches and the
// rebuild's differ, where the rebuild grows past a small one, catch-ups,
// and exchanges present twice in the input.
func TestAddFollowsSameIndex(t *testing.T) {
	cases := []struct {
		name                 string
		before               int // exchanges added (and indexed) first
		n, addBatch, ixBatch int
		dup                  bool // the input holds each of its first 4 exchanges twice
		follows              bool // the rebuild must have read on into the add
	}{
		{name: "rebuild, batches alike", n: 35, addBatch: 10, ixBatch: 10, follows: true},
		{name: "rebuild, batches differ", n: 23, addBatch: 10, ixBatch: 7, follows: true},
		{name: "rebuild grows past small", n: 17, addBatch: 5, ixBatch: 4, follows: true},
		{name: "rebuild, duplicates", n: 21, addBatch: 6, ixBatch: 6, dup: true, follows: true},
		{name: "one batch", n: 8, addBatch: 10, ixBatch: 10},
		{name: "catch-up", before: 3, n: 12, addBatch: 5, ixBatch: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name string, idx []int) string {
				var b strings.Builder
				for _, i := range idx {
					b.WriteString(aheadLine(i) + "\n")
				}
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			var early, main []int
			for i := 0; i < tc.before; i++ {
				early = append(early, 100+i)
			}
			for i := 0; i < tc.n; i++ {
				main = append(main, i)
				if tc.dup && i < 4 {
					main = append(main, i)
				}
			}
			earlyFile, file := write("early.jsonl", early), write("ex.jsonl", main)
			run := func(follow bool) (string, string, int64) {
				defer func(a, r, c int) {
					addBatch, rebuildBatch, catchUpBatch = a, r, c
				}(addBatch, rebuildBatch, catchUpBatch)
				addBatch, rebuildBatch, catchUpBatch = tc.addBatch, tc.ixBatch, tc.ixBatch
				ctx := context.Background()
				m := newMemory(t)
				if tc.before > 0 {
					if rep, err := m.AddFiles(ctx, []string{earlyFile}, nil, "exchange", AddOptions{}); err != nil || rep.Added != tc.before || !rep.Indexed {
						t.Fatalf("early add: %+v %v", rep, err)
					}
				}
				was := followed.Load()
				rep, err := m.AddFiles(ctx, []string{file}, nil, "exchange", AddOptions{NoIndex: !follow})
				if err != nil || rep.Added != tc.n || rep.Indexed != follow {
					t.Fatalf("add: %+v %v", rep, err)
				}
				if !follow {
					if _, err := m.UpdateIndex(ctx); err != nil {
						t.Fatal(err)
					}
				}
				n := followed.Load() - was
				ix, release, err := m.OpenIndex(ctx)
				if err != nil {
					t.Fatal(err)
				}
				head, _ := m.Repo.Head()
				if ix.LastCommit() != head.String() || ix.Count() != tc.before+tc.n {
					t.Fatalf("index at %s with %d rows; main at %s with %d exchanges", ix.LastCommit(), ix.Count(), head, tc.before+tc.n)
				}
				release()
				var hits strings.Builder
				for _, q := range []string{"retry timeout parser", "raised it", "bash parser.go"} {
					res, _, err := m.Search(ctx, SearchQuery{Text: q, K: 50})
					if err != nil {
						t.Fatal(err)
					}
					if len(res) == 0 {
						t.Fatalf("no hits for %q", q)
					}
					for _, r := range res {
						fmt.Fprintf(&hits, "%s %s %v\n", q, r.Exchange, r.Score)
					}
				}
				return m.currentGen(), hits.String(), n
			}
			genAfter, hitsAfter, _ := run(false)
			genBeside, hitsBeside, n := run(true)
			if (n > 0) != tc.follows {
				t.Fatalf("rebuild read on into the add %d times; want it to: %v", n, tc.follows)
			}
			for _, f := range []string{"minhash.bin", "vectors.f32", "context.bin", "links.bin", "events.json"} {
				a, errA := os.ReadFile(filepath.Join(genAfter, f))
				b, errB := os.ReadFile(filepath.Join(genBeside, f))
				if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
					t.Fatalf("%s differs (%v, %v)", f, errA, errB)
				}
			}
			if hitsAfter != hitsBeside {
				t.Fatalf("hits differ:\nafter the add:\n%s\nbeside it:\n%s", hitsAfter, hitsBeside)
			}
		})
	}
}
