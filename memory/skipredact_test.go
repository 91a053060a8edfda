package memory

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSkippedMessagesRedacted: a skipped record's message quotes the bad
// value ("time", "role", a transcript's record type); a secret there must not
// reach the report (stderr, --json, the worker's log) as it was. The line
// numbers and the reason stay.
func TestSkippedMessagesRedacted(t *testing.T) {
	const secret = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	m := newMemory(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, format, content string
		want                  []string // in the messages, in order
	}{
		{"exchange", "exchange",
			`{"id":"a","session":"s","time":"` + secret + `","turns":[{"role":"user","text":"x"}]}` + "\n" +
				`{"id":"b","session":"s","time":"2026-01-01T00:00:00Z","turns":[{"role":"` + secret + `","text":"x"}]}` + "\n" +
				`{"id":"c","session":"s","time":"2026-01-01T00:00:00Z","turns":[{"role":"user","text":"fine"},{"role":"assistant","text":"ok"}]}` + "\n",
			[]string{`:1: field "time": "[REDACTED:`, `:2: turn 1: unknown role "[REDACTED:`}},
		{"claude-code", "claude-code",
			`{"type":"` + secret + `","sessionId":"s1","uuid":"u0"}` + "\n" +
				`{"type":"user","sessionId":"s1","uuid":"u1","cwd":"/tmp","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}` + "\n" +
				`{"type":"assistant","sessionId":"s1","uuid":"a1","parentUuid":"u1","cwd":"/tmp","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}` + "\n",
			[]string{`:1: unknown record type "[REDACTED:`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".jsonl")
			// Old enough that a transcript's last exchange counts as closed.
			writeAged(t, path, []byte(tc.content), time.Now().Add(-time.Hour))
			rep, err := m.AddFiles(context.Background(), []string{path}, nil, tc.format, AddOptions{NoIndex: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Added != 1 || len(rep.Skipped) != len(tc.want) {
				t.Fatalf("added %d, skipped %q; want 1 added, %d skipped", rep.Added, rep.Skipped, len(tc.want))
			}
			for i, s := range rep.Skipped {
				if strings.Contains(s, secret) || strings.Contains(s, "ghp_") {
					t.Errorf("skipped message holds the secret: %q", s)
				}
				if !strings.Contains(s, tc.want[i]) {
					t.Errorf("skipped message %q lacks %q", s, tc.want[i])
				}
			}
		})
	}
	fsckStrict(t, m.Repo.Dir())
}

// TestAddHoldsBackALiveTranscript: `add` of a transcript written to in the
// last LiveSession stores all but its last exchange, which its session may
// still be answering (stored open, the prompt alone, its reply would have
// been lost: the hook then finds the id present); once the file is older,
// the same add stores it, with the reply. The exchange format is never held.
func TestAddHoldsBackALiveTranscript(t *testing.T) {
	m := newMemory(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "live.jsonl")
	line := func(typ, uuid, parent, at, content string) string {
		return `{"type":"` + typ + `","sessionId":"s1","uuid":"` + uuid + `","parentUuid":"` + parent + `","cwd":"/tmp","timestamp":"2026-01-01T00:00:0` + at + `Z","message":{"role":"` + typ + `","content":` + content + `}}` + "\n"
	}
	first := line("user", "u1", "", "0", `"first question"`) + line("assistant", "a1", "u1", "1", `[{"type":"text","text":"first answer"}]`)
	live := first + line("user", "u2", "a1", "2", `"second question"`)
	writeAged(t, path, []byte(live), time.Now())
	rep, err := m.AddFiles(ctx, []string{path}, nil, "claude-code", AddOptions{NoIndex: true})
	if err != nil || rep.Added != 1 || rep.HeldBack != 1 {
		t.Fatalf("live: added %d, held back %d, %v; want 1, 1", rep.Added, rep.HeldBack, err)
	}
	// The session answers; its file is no longer written to.
	writeAged(t, path, []byte(live+line("assistant", "a2", "u2", "3", `[{"type":"text","text":"second answer"}]`)), time.Now().Add(-time.Hour))
	rep, err = m.AddFiles(ctx, []string{path}, nil, "claude-code", AddOptions{NoIndex: true})
	if err != nil || rep.Added != 1 || rep.Present != 1 || rep.HeldBack != 0 {
		t.Fatalf("ended: %+v %v; want 1 added, 1 present, none held", rep, err)
	}
	es, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range es {
		_, blob, err := m.Show(e.Exchange)
		if err != nil {
			t.Fatal(err)
		}
		found = found || (strings.Contains(string(blob), "second question") && strings.Contains(string(blob), "second answer"))
	}
	if !found {
		t.Fatal("the second exchange was not stored with its reply")
	}
	// The exchange format has no open exchange: a fresh file is stored whole.
	ex := filepath.Join(t.TempDir(), "ex.jsonl")
	writeAged(t, ex, []byte(`{"id":"x1","session":"s","time":"2026-01-01T00:00:00Z","turns":[{"role":"user","text":"plain"}]}`+"\n"), time.Now())
	if rep, err = m.AddFiles(ctx, []string{ex}, nil, "exchange", AddOptions{NoIndex: true}); err != nil || rep.Added != 1 || rep.HeldBack != 0 {
		t.Fatalf("exchange format: %+v %v", rep, err)
	}
	fsckStrict(t, m.Repo.Dir())
}
