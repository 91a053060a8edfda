package exchange

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"turns": [`, "not JSON"},
		{`[1,2]`, "not a JSON object"},
		{`{"id": "x"}`, `no "turns"`},
		{`{"turns": []}`, "no turns"},
		{`{"turns": [{"role": "user", "text": "  "}]}`, "empty text"},
		{`{"turns": [{"role": "robot", "text": "hi"}]}`, `unknown role "robot"`},
		{`{"turns": [{"text": "hi"}]}`, "missing role"},
		{`{"turns": [{"role": "assistant", "text": "hi"}]}`, "no user turn"},
		{`{"turns": [{"role": "user", "text": "hi"}], "time": "yesterday"}`, "not RFC 3339"},
		{`{"turns": [{"role": "user", "text": "hi"}, {"role": "tool", "input": {"n": 1e400}}]}`, "out of range"},
		{"{\"turns\": [{\"role\": \"user\", \"text\": \"bad \xff\"}]}", "invalid UTF-8"},
		{`{"id": 5, "turns": [{"role": "user", "text": "hi"}]}`, `field "id" must be a string`},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestCanonicalIsJCS(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"turns":[{"text":"a<b>&","role":"user"}],"b":1,"a":[1.50,-0,1e21,1e-7,100]}`,
			`{"a":[1.5,0,1e+21,1e-7,100],"b":1,"turns":[{"role":"user","text":"a<b>&"}]}`},
		{`{"turns":[{"role":"user","text":"line\nquote\" \u2028 é \u0001"}]}`,
			"{\"turns\":[{\"role\":\"user\",\"text\":\"line\\nquote\\\" \u2028 é \\u0001\"}]}"},
	} {
		ex, err := Parse([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(ex.Canonical()); got != tc.want {
			t.Errorf("Canonical:\n got %s\nwant %s", got, tc.want)
		}
	}
	// Keys sort by UTF-16 code units: U+FF61 sorts after U+1F600 (a surrogate pair).
	b, _ := Canonical(map[string]any{"\uff61": 1, "\U0001F600": 2, "a": 3})
	if string(b) != "{\"a\":3,\"\U0001F600\":2,\"\uff61\":1}" {
		t.Errorf("UTF-16 order: %s", b)
	}
}

func TestUnknownFieldsSurvive(t *testing.T) {
	in := `{"id":"x","speaker_map":{"a":1},"turns":[{"role":"user","text":"hi","dia_id":"D1:1"}]}`
	ex, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := string(ex.Canonical())
	for _, want := range []string{`"speaker_map":{"a":1}`, `"dia_id":"D1:1"`} {
		if !strings.Contains(got, want) {
			t.Errorf("canonical %s lacks %s", got, want)
		}
	}
	again, err := Parse([]byte(got))
	if err != nil || string(again.Canonical()) != got {
		t.Fatalf("canonical JSON does not round-trip: %v", err)
	}
}

func TestMessageRoundTrip(t *testing.T) {
	c := Card{Core: "Fixed the retry\ntimeout", Context: "Error: ETIMEDOUT after 30s",
		Rooms: []Room{{"file", "retry"}, {"concept", "retry_timeout"}}, Files: []string{"src/retry.ts"}, Distiller: "heuristic/1"}
	msg := FormatMessage(c, Trailers{Exchange: "s/1", Session: "s", Project: "billing", Redacted: 2})
	m := ParseMessage(msg)
	if m.Card.Core != "Fixed the retry timeout" || m.Card.Context != c.Context || m.Trailers.Exchange != "s/1" ||
		m.Trailers.Redacted != 2 || len(m.Card.Rooms) != 2 || m.Card.Files[0] != "src/retry.ts" || m.Trailers.Agent != "" {
		t.Fatalf("round trip: %+v", m)
	}
	if strings.Contains(msg, "Agent:") {
		t.Fatal("an empty trailer was written")
	}
}

func TestBlobPathHidesID(t *testing.T) {
	p := BlobPath("../../etc/passwd")
	if strings.Contains(p, "..") || !strings.HasPrefix(p, "ex/") || strings.Count(p, "/") != 4 {
		t.Fatalf("BlobPath = %s", p)
	}
}

func TestHeadTail(t *testing.T) {
	for _, c := range []struct {
		name       string
		turns      []Turn
		head, tail string
	}{
		{"user and reply", []Turn{{Role: RoleUser, Text: "fix it"}, {Role: RoleAssistant, Text: "Done. Anything else?"}}, "fix it", "Done. Anything else?"},
		{"tools skipped", []Turn{{Role: RoleUser, Text: "run tests"}, {Role: RoleAssistant, Text: "running"},
			{Role: RoleTool, Name: "bash", Text: "ok"}, {Role: RoleAssistant, Text: "all green"}, {Role: RoleTool, Text: "log"}}, "run tests", "all green"},
		{"blank turns skipped", []Turn{{Role: RoleUser, Text: "hi"}, {Role: RoleAssistant, Text: "  "}}, "hi", "hi"},
		{"no turns", nil, "", ""},
	} {
		ex := &Exchange{Turns: c.turns}
		if h, tl := ex.HeadTail(); h != c.head || tl != c.tail {
			t.Errorf("%s: HeadTail = %q, %q; want %q, %q", c.name, h, tl, c.head, c.tail)
		}
	}
}

func TestRenderSplit(t *testing.T) {
	ex := &Exchange{Turns: []Turn{
		{Role: RoleUser, Text: "why does the build fail?"},
		{Role: RoleAssistant, Text: "Let me run it."},
		{Role: RoleTool, Name: "bash", Input: map[string]any{"command": "go build ./..."}, Text: "main.go:3: undefined: Foo"},
		{Role: RoleTool, Name: "read_file", Input: "main.go"},
		{Role: RoleTool, Name: "grep", Text: "util.go:9: func foo()"},
		{Role: RoleAssistant, Text: "Foo is unexported as foo."},
	}}
	talk, output := ex.RenderSplit()
	for _, w := range []string{"why does the build fail?", "bash", "command", "go build ./...", "read_file", "main.go", "Foo is unexported"} {
		if !strings.Contains(talk, w) {
			t.Errorf("talk lacks %q:\n%s", w, talk)
		}
	}
	for _, w := range []string{"undefined: Foo", "util.go:9"} {
		if !strings.Contains(output, w) || strings.Contains(talk, w) {
			t.Errorf("%q should be in the output only:\ntalk %q\noutput %q", w, talk, output)
		}
	}
	// The two parts hold exactly the words of Render.
	count := func(texts ...string) map[string]int {
		m := map[string]int{}
		for _, s := range texts {
			for _, w := range strings.Fields(s) {
				m[w]++
			}
		}
		return m
	}
	if got, want := count(talk, output), count(ex.Render()); !reflect.DeepEqual(got, want) {
		t.Errorf("words of the parts %v, of Render %v", got, want)
	}
}
