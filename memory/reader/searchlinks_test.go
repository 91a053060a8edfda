package reader_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/memory/reader"
)

// TestSearchLinksReadOnce: a search's results marked with the links its
// rerank read (the living first) are the results marked with links read
// again for them, as before — ids, order, scores, layers and the
// supersession and pin marks — for the supersession benchmark's memory
// (derived links) with a stated supersession and pins, every benchmark
// query and its words, with the living and recent reranks on and off; and
// the marks are there to compare.
func TestSearchLinksReadOnce(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "bench", "supersede")
	exs := readJSONL[exchange.Exchange](t, filepath.Join(dir, "exchanges.jsonl"))
	type query struct {
		Query string `json:"query"`
	}
	qs := readJSONL[query](t, filepath.Join(dir, "queries.jsonl"))
	t.Setenv("HOME", t.TempDir())
	m, _, err := memory.Init(filepath.Join(t.TempDir(), "mem.git"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Add(ctx, exs, memory.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Supersede(ctx, exs[len(exs)-1].ID, exs[0].ID, false); err != nil {
		t.Fatal(err)
	}
	for _, e := range []*exchange.Exchange{exs[1], exs[len(exs)/2]} {
		if _, err := m.Pin(ctx, memory.PinRequest{Ref: e.ID}); err != nil {
			t.Fatal(err)
		}
	}
	var texts []string
	for _, q := range qs {
		texts = append(texts, q.Query)
	}
	texts = append(texts, "pull main and rebase my branch on it", "what is the current cache size now")
	defer func() { *reader.TestLinksTwice = false }()
	marked, compared := 0, 0
	for _, text := range texts {
		for _, rr := range []reader.Rerank{{Living: true, Recent: true}, {Living: true}, {Recent: true}, {}} {
			q := memory.SearchQuery{Text: text, K: 20, Rerank: &rr}
			*reader.TestLinksTwice = true
			want, _, err := m.Search(ctx, q)
			*reader.TestLinksTwice = false
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := m.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q %+v: links read once\n%+v\nread twice\n%+v", text, rr, got, want)
			}
			for _, r := range got {
				if len(r.SupersededBy) > 0 || len(r.Supersedes) > 0 || r.Pinned {
					marked++
				}
			}
			compared += len(got)
		}
	}
	if marked == 0 || compared == 0 {
		t.Fatalf("%d results compared, %d marked: the test shows nothing", compared, marked)
	}
	t.Logf("%d queries, %d results compared, %d marked", len(texts), compared, marked)
}

func readJSONL[T any](t *testing.T, path string) []*T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		v := new(T)
		if err := json.Unmarshal(sc.Bytes(), v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
