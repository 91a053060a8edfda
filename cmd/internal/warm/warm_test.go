package warm

import (
	"bytes"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// serveOnce answers one request on a fresh socket with answer, after
// checking the request it got.
func serveOnce(t *testing.T, answer func(c net.Conn, req Request)) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := ReadRequest(c)
		if err != nil {
			return
		}
		answer(c, req)
	}()
	return sock
}

// TestAskCarriesBytes: the answer's bytes come back as they were written
// (not valid UTF-8 included: no JSON string carries them), with the code.
func TestAskCarriesBytes(t *testing.T) {
	out := []byte("a1b2c3 2026-03-02  1.000\n\xff\xfe not UTF-8\n")
	errOut := []byte("git mem: note: x\n")
	var got Request
	sock := serveOnce(t, func(c net.Conn, req Request) {
		got = req
		_ = WriteReply(c, false, 3, out, errOut)
	})
	req := Request{Args: []string{"search", "x"}, Cwd: "/", Dir: "/m", Env: "e"}
	rep, o, e, err := Ask(sock, req, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Code != 3 || !bytes.Equal(o, out) || !bytes.Equal(e, errOut) {
		t.Fatalf("got %d %q %q", rep.Code, o, e)
	}
	if got.V != Version || got.Args[1] != "x" || got.Dir != "/m" {
		t.Errorf("request %+v", got)
	}
}

// TestAskFallsBack: a "fall back" answer, a process that hangs up, and no
// process at all are errors: the front runs the search cold.
func TestAskFallsBack(t *testing.T) {
	sock := serveOnce(t, func(c net.Conn, _ Request) { _ = WriteReply(c, true, 0, []byte("x"), nil) })
	if _, o, _, err := Ask(sock, Request{}, 5*time.Second); !errors.Is(err, ErrFallback) || o != nil {
		t.Errorf("fallback: %q %v", o, err)
	}
	sock = serveOnce(t, func(c net.Conn, _ Request) { _, _ = c.Write([]byte(`{"code":0,"stdout":10,"stderr":0}` + "\nshort")) })
	if _, _, _, err := Ask(sock, Request{}, 5*time.Second); err == nil {
		t.Error("a cut answer was taken")
	}
	if _, _, _, err := Ask(filepath.Join(t.TempDir(), "none.sock"), Request{}, time.Second); err == nil {
		t.Error("no socket: no error")
	}
}

// TestEnvDigest tells values apart, and set from unset.
func TestEnvDigest(t *testing.T) {
	env := func(kv map[string]string) string {
		return EnvDigest(func(k string) (string, bool) { v, ok := kv[k]; return v, ok })
	}
	a := env(map[string]string{"HOME": "/h"})
	for _, other := range []map[string]string{
		{"HOME": "/g"}, {"HOME": "/h", "TZ": ""}, {"HOME": "/h", "TZ": "UTC"}, {},
	} {
		if env(other) == a {
			t.Errorf("%v has the digest of HOME=/h", other)
		}
	}
	if env(map[string]string{"HOME": "/h", "UNRELATED": "1"}) != a {
		t.Error("a variable search does not read changed the digest")
	}
}
