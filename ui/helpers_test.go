package ui_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/ui"
)

const (
	testPort  = 48123
	testToken = "test-token-0123456789abcdef"
	fixture   = "../testdata/ui/exchanges.jsonl"
)

// readFixture reads a JSON Lines file of exchanges.
func readFixture(t testing.TB, path string) []*exchange.Exchange {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var exs []*exchange.Exchange
	err = exchange.ReadJSONL(f, filepath.Base(path), func(r exchange.Record) error {
		if r.Err != nil {
			return r.Err
		}
		exs = append(exs, r.Exchange)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

// fixtureMemory is a temporary memory holding testdata/ui/exchanges.jsonl.
func fixtureMemory(t testing.TB) *memory.Memory {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	m, _, err := memory.Init(filepath.Join(t.TempDir(), "mem.git"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(context.Background(), readFixture(t, fixture), memory.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}

// newServer serves m at testPort with testToken, days in UTC.
func newServer(t testing.TB, m *memory.Memory) (*ui.Server, *memory.View) {
	t.Helper()
	v := memory.NewView(m)
	v.Loc = time.UTC
	t.Cleanup(func() { v.Close() })
	return ui.New(v, testPort, testToken), v
}

// get makes a request as the page would: right Host, the token's cookie.
func request(s http.Handler, method, target string, mod func(*http.Request)) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	r.Host = "127.0.0.1:48123"
	r.AddCookie(&http.Cookie{Name: "gitmem_48123", Value: testToken})
	if mod != nil {
		mod(r)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func ioNopCloser(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }
