// Package warm is the warm search process's wire: the socket under the
// memory's git dir, the request the front binary (git-mem) sends and the
// answer git-mem-core's `search--daemon` gives. The front imports it, so
// it links nothing of the engine, nor package net (whose resolver makes a
// cgo build link libc dynamically: +1.2 ms on every start of the front):
// cmd/git-mem/imports_test.go.
//
// A `git mem search` pays ~14 ms of process start and a few ms opening
// the index before it ranks anything (docs/BENCHMARKS.md, session 14). A
// search--daemon keeps git-mem-core started and the index open; the front
// asks it over the socket and prints its answer, byte for byte what the
// one-shot search would have printed. It is never required: any problem
// (no socket, a stale one, another environment, an index that must catch
// up first) and the front execs git-mem-core as always.
package warm

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// Command is git-mem-core's hidden command that runs the warm process
// (git's own helpers are named so: credential-cache--daemon).
const Command = "search--daemon"

// DisableEnv turns the warm process off: set to anything but "", "0",
// "false" or "no", `git mem search` neither asks nor starts one.
const DisableEnv = "GIT_MEM_NO_SERVER"

// Disabled reports whether getenv's DisableEnv turns the warm process off.
func Disabled(getenv func(string) string) bool {
	switch strings.ToLower(getenv(DisableEnv)) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// RunDir is the folder of the socket and the lock, under the git dir
// (mode 0700; never pushed, like all of mem/).
func RunDir(gitDir string) string { return filepath.Join(gitDir, "mem", "run") }

// SockPath is the socket the warm process listens on.
func SockPath(gitDir string) string { return filepath.Join(RunDir(gitDir), "search.sock") }

// LockPath is the file the running warm process holds locked (flock): one
// per memory.
func LockPath(gitDir string) string { return filepath.Join(RunDir(gitDir), "search.lock") }

// MaxSockPath is the longest socket path a unix socket address holds
// (sun_path is 108 bytes on Linux, with its NUL); a memory at a longer
// path has no warm process.
const MaxSockPath = 107

// EnvNames are the variables a search's answer depends on (but
// GIT_MEM_DIR, which Request carries): its configuration, the embedder's endpoint, the time zone of
// dates, the Go runtime's settings. The warm process answers only a
// request whose values equal its own (compared through EnvDigest: the
// values, a key among them, never travel).
var EnvNames = []string{
	"GIT_MEM_EMBEDDER", "GIT_MEM_DISTILLER", "OPENAI_BASE_URL", "OPENAI_API_KEY",
	"HOME", "TZ", "GOGC", "GOMEMLIMIT", "GODEBUG",
}

// ColdEnvNames make a search run cold whatever their value: they ask for
// a profile (or trace) of the search process itself.
var ColdEnvNames = []string{"GIT_MEM_CPUPROFILE", "GIT_MEM_HEAPPROFILE", "GIT_MEM_TRACE"}

// EnvDigest is a hash (SHA-256) of EnvNames' values, set or not, under
// lookup.
func EnvDigest(lookup func(string) (string, bool)) string {
	h := sha256.New()
	for _, k := range EnvNames {
		v, ok := lookup(k)
		fmt.Fprintf(h, "%s\x00%t\x00%d\x00%s\x00", k, ok, len(v), v)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Version is the wire's version; a process that speaks another answers
// Fallback.
const Version = 1

// Request is one search, as the front received it.
type Request struct {
	V    int      `json:"v"`
	Args []string `json:"args"` // the arguments after the program's name
	Cwd  string   `json:"cwd"`  // the front's working directory
	// Dir is the memory the front resolved (--mem-dir, GIT_MEM_DIR,
	// ~/.git-mem, made absolute); the process checks it against its own.
	Dir string `json:"dir"`
	// MemDirEnv is the front's GIT_MEM_DIR, which names the memory when
	// no --mem-dir does.
	MemDirEnv string `json:"mem_dir_env,omitempty"`
	Env       string `json:"env"` // EnvDigest of the front's environment
}

// Reply heads the answer: the exit code and the sizes of stdout and
// stderr, whose bytes follow it. Fallback asks the front to run the
// search itself (exec git-mem-core), nothing having been printed.
type Reply struct {
	Fallback bool `json:"fallback,omitempty"`
	Code     int  `json:"code"`
	Stdout   int  `json:"stdout"`
	Stderr   int  `json:"stderr"`
}

// MaxRequest bounds a request line (a query is at most 256 KB, each byte
// at most 6 in JSON).
const MaxRequest = 2 << 20

// MaxOutput bounds what an answer may carry (--verbatim of many hits).
const MaxOutput = 256 << 20

// ErrFallback says the warm process declined: run the search cold.
var ErrFallback = errors.New("the warm search process asks for a cold search")

// Ask sends req over the socket at sock and returns the answer. Any error
// (ErrFallback included) means: run the search cold; nothing was printed.
// The connect does not wait (a process whose backlog is full is not
// asked); timeout bounds the whole exchange.
func Ask(sock string, req Request, timeout time.Duration) (rep Reply, stdout, stderr []byte, err error) {
	c, err := dialUnix(sock)
	if err != nil {
		return rep, nil, nil, err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return rep, nil, nil, err
	}
	req.V = Version
	line, err := json.Marshal(req)
	if err != nil {
		return rep, nil, nil, err
	}
	if _, err := c.Write(append(line, '\n')); err != nil {
		return rep, nil, nil, fmt.Errorf("send to the warm search process: %w", err)
	}
	br := bufio.NewReader(c)
	head, err := br.ReadBytes('\n')
	if err != nil {
		return rep, nil, nil, fmt.Errorf("read the warm search process's answer: %w", err)
	}
	if err := json.Unmarshal(head, &rep); err != nil {
		return rep, nil, nil, fmt.Errorf("the warm search process's answer: %w", err)
	}
	if rep.Fallback {
		return rep, nil, nil, ErrFallback
	}
	if rep.Stdout < 0 || rep.Stderr < 0 || rep.Stdout+rep.Stderr > MaxOutput {
		return rep, nil, nil, errors.New("the warm search process's answer: bad sizes")
	}
	body := make([]byte, rep.Stdout+rep.Stderr)
	if _, err := io.ReadFull(br, body); err != nil {
		return rep, nil, nil, fmt.Errorf("read the warm search process's answer: %w", err)
	}
	return rep, body[:rep.Stdout], body[rep.Stdout:], nil
}

// ReadRequest reads one request line from r (at most MaxRequest bytes).
func ReadRequest(r io.Reader) (Request, error) {
	var req Request
	line, err := bufio.NewReader(io.LimitReader(r, MaxRequest)).ReadBytes('\n')
	if err != nil {
		return req, fmt.Errorf("request: %w", err)
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return req, fmt.Errorf("request: %w", err)
	}
	return req, nil
}

// WriteReply writes the answer: Fallback alone, or the code and the two
// outputs.
func WriteReply(w io.Writer, fallback bool, code int, stdout, stderr []byte) error {
	rep := Reply{Fallback: fallback, Code: code}
	if !fallback {
		rep.Stdout, rep.Stderr = len(stdout), len(stderr)
	}
	head, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len(head)+1+rep.Stdout+rep.Stderr)
	buf = append(append(buf, head...), '\n')
	if !fallback {
		buf = append(append(buf, stdout...), stderr...)
	}
	_, err = w.Write(buf)
	return err
}
