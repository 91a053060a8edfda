package memory

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/distill"
	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/redact"
)

// checkTalk fails when talkOf takes ex's talk where it differs from what
// the indexer reads of ex's blob; it reports whether talkOf took it.
func checkTalk(t *testing.T, name string, ex *exchange.Exchange) bool {
	t.Helper()
	blob := ex.Canonical()
	got, ok := talkOf(ex, blob)
	if ok {
		if want := talkOfBlob(blob); got != want {
			t.Fatalf("%s: talkOf differs from the blob's:\n%+v\nwant\n%+v", name, got, want)
		}
	}
	return ok
}

// TestTalkOfRefuses: the exchanges whose blob the indexer reads otherwise
// than talkOf would render them are refused, and the blob is parsed.
func TestTalkOfRefuses(t *testing.T) {
	user := exchange.Turn{Role: "user", Text: "fix the test"}
	cases := map[string]*exchange.Exchange{
		"invalid UTF-8 text": {Turns: []exchange.Turn{{Role: "user", Text: "bad \xff byte"}}},
		"invalid UTF-8 in a tool input": {Turns: []exchange.Turn{user,
			{Role: "tool", Name: "bash", Input: map[string]any{"cmd": "ls \xfe"}}}},
		"invalid UTF-8 key of a tool input": {Turns: []exchange.Turn{user,
			{Role: "tool", Name: "bash", Input: map[string]any{"c\xffmd": "ls"}}}},
		"Extra text over an empty tool text": {Turns: []exchange.Turn{user,
			{Role: "tool", Name: "bash", Extra: map[string]any{"text": "from Extra"}}}},
		"a []byte speaker":     {Turns: []exchange.Turn{{Role: "user", Text: "hi", Extra: map[string]any{"speaker": []byte("bob")}}}},
		"a float64 tool input": {Turns: []exchange.Turn{user, {Role: "tool", Name: "n", Input: 1.5}}},
		"Extra id":             {Extra: map[string]any{"id": "x y"}, Turns: []exchange.Turn{user}},
		"no user turn":         {Turns: []exchange.Turn{{Role: "assistant", Text: "hello"}}},
	}
	deep := any("x")
	for i := 0; i < 10001; i++ {
		deep = []any{deep}
	}
	cases["a tool input past the decoder's depth"] = &exchange.Exchange{Turns: []exchange.Turn{user, {Role: "tool", Name: "n", Input: deep}}}
	differs := 0
	for name, ex := range cases {
		if checkTalk(t, name, ex) {
			t.Errorf("%s: taken from memory", name)
		}
		blob := ex.Canonical()
		if ex.Validate() == nil && len(blob) < 1<<20 {
			var mem talk
			mem.verbatim, mem.output = ex.RenderSplit()
			mem.head, mem.tail = ex.HeadTail()
			if mem != talkOfBlob(blob) {
				differs++
			}
		}
	}
	// Most of them would be rendered otherwise from memory: the guard is
	// needed, not only careful.
	if differs < 5 {
		t.Errorf("only %d of the refused exchanges render otherwise from memory", differs)
	}
	t.Logf("%d of %d refused exchanges render otherwise from memory", differs, len(cases))
}

// randText mixes what JSON escapes, U+FFFD, line separators and words.
func randText(rng *rand.Rand) string {
	parts := []string{"word", " ", "\n", "\t", "\"", "\\", "\u2028", "\ufffd", "é", "\x01", "\x7f", "</private>", "key=abc", "😀", "\r\n", "  ", "\xff"}
	var b strings.Builder
	for n := rng.Intn(12); n > 0; n-- {
		b.WriteString(parts[rng.Intn(len(parts))])
	}
	return b.String()
}

func randJSON(rng *rand.Rand, depth int) any {
	switch k := rng.Intn(8); {
	case k == 0:
		return nil
	case k == 1:
		return rng.Intn(2) == 0
	case k == 2:
		nums := []string{"1", "1.0", "-0", "1e2", "1E+2", "0.000001", "1e-7", "123456789012345678901234", "3.14159", "-2.5e-3"}
		return json.Number(nums[rng.Intn(len(nums))])
	case k < 5 || depth > 3:
		return randText(rng)
	case k == 5:
		var l []any
		for n := rng.Intn(4); n > 0; n-- {
			l = append(l, randJSON(rng, depth+1))
		}
		return l
	default:
		m := map[string]any{}
		for n := rng.Intn(4); n > 0; n-- {
			m[randText(rng)] = randJSON(rng, depth+1)
		}
		return m
	}
}

// TestTalkOfIsBlobs: where talkOf takes the talk from memory it is the
// blob's, on 20,000 exchanges made of every kind of text and tool input
// and, with GIT_MEM_CODING=FILE, on every exchange of the coding corpus,
// redacted and distilled as Add does (all of those must be taken).
func TestTalkOfIsBlobs(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	taken := 0
	for i := 0; i < 20000; i++ {
		ex := &exchange.Exchange{ID: fmt.Sprintf("r%d", i)}
		roles := []string{"user", "assistant", "tool", "system"}
		ex.Turns = append(ex.Turns, exchange.Turn{Role: "user", Text: "q " + randText(rng)})
		for n := rng.Intn(5); n > 0; n-- {
			tr := exchange.Turn{Role: roles[rng.Intn(len(roles))], Text: randText(rng)}
			if tr.Role == "tool" {
				tr.Name = randText(rng)
				if rng.Intn(4) > 0 {
					tr.Input = randJSON(rng, 0)
				}
			}
			if rng.Intn(5) == 0 {
				tr.Extra = map[string]any{"speaker": randJSON(rng, 2), "other": randJSON(rng, 1)}
			}
			ex.Turns = append(ex.Turns, tr)
		}
		if rng.Intn(5) == 0 {
			ex.Extra = map[string]any{"source": randJSON(rng, 1)}
		}
		if checkTalk(t, ex.ID, ex) {
			taken++
		}
	}
	if taken < 5000 || taken > 19000 {
		t.Errorf("%d of 20,000 generated exchanges taken from memory: the test no longer tries both ways", taken)
	}
	t.Logf("%d of 20,000 generated exchanges taken from memory, the same as their blobs", taken)
	p := os.Getenv("GIT_MEM_CODING")
	if p == "" {
		return
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, exchange.MaxRecordBytes+1)
	n := 0
	for sc.Scan() {
		ex, err := exchange.Parse(sc.Bytes())
		if err != nil {
			continue
		}
		n++
		redact.Exchange(ex)
		blob := ex.Canonical()
		if _, err := (distill.Heuristic{}).Distill(context.Background(), ex); err != nil {
			t.Fatal(err)
		}
		got, ok := talkOf(ex, blob)
		if !ok {
			t.Fatalf("coding exchange %s not taken from memory", ex.ID)
		}
		if want := talkOfBlob(blob); got != want {
			t.Fatalf("coding exchange %s: talkOf differs from the blob's", ex.ID)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d coding exchanges: the same talk from memory as from their blobs", n)
}
