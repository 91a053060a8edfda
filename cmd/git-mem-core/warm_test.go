package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gitmem/git-mem/cmd/internal/warm"
)

// The commands warm.txtar drives the warm search process with, besides
// the real binaries: they speak its wire directly, so that a script can
// tell an answer of the warm process from a cold search's.
var warmCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"warmask":   cmdWarmAsk,
	"waitwarm":  cmdWaitWarm,
	"waitgone":  cmdWaitGone,
	"deadsock":  cmdDeadSock,
	"warmpacks": cmdWarmPacks,
}

// warmRequest is the request the front sends for args in the script's
// environment.
func warmRequest(ts *testscript.TestScript, args []string) warm.Request {
	lookup := func(k string) (string, bool) { v := ts.Getenv(k); return v, v != "" }
	return warm.Request{Args: args, Cwd: ts.MkAbs("."), Dir: ts.Getenv("GIT_MEM_DIR"),
		MemDirEnv: ts.Getenv("GIT_MEM_DIR"), Env: warm.EnvDigest(lookup)}
}

// warmask [-n N] ARGS...: ask the warm process of $GIT_MEM_DIR to run
// `git mem ARGS`; it fails when the process declines or cannot be
// reached. Its stdout and stderr are the answer's; with -n, N requests
// at once, whose answers must all be the same.
func cmdWarmAsk(ts *testscript.TestScript, neg bool, args []string) {
	n := 1
	if len(args) > 1 && args[0] == "-n" {
		var err error
		if n, err = strconv.Atoi(args[1]); err != nil || n < 1 {
			ts.Fatalf("warmask: -n %s", args[1])
		}
		args = args[2:]
	}
	sock := warm.SockPath(ts.Getenv("GIT_MEM_DIR"))
	req := warmRequest(ts, args)
	type answer struct {
		code        int
		out, errOut []byte
		err         error
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, out, errOut, err := warm.Ask(sock, req, time.Minute)
			answers[i] = answer{rep.Code, out, errOut, err}
		}()
	}
	wg.Wait()
	a := answers[0]
	for i, b := range answers[1:] {
		if (a.err == nil) != (b.err == nil) || a.code != b.code || !bytes.Equal(a.out, b.out) || !bytes.Equal(a.errOut, b.errOut) {
			ts.Fatalf("warmask: answer %d differs from the first: %v %d %q %q / %v %d %q %q", i+1,
				b.err, b.code, b.out, b.errOut, a.err, a.code, a.out, a.errOut)
		}
	}
	if a.err != nil {
		if neg {
			return
		}
		ts.Fatalf("warmask: %v", a.err)
	}
	_, _ = ts.Stdout().Write(a.out)
	_, _ = ts.Stderr().Write(a.errOut)
	if (a.code != 0) != neg {
		ts.Fatalf("warmask: exit code %d", a.code)
	}
}

// waitwarm: wait (up to 30 s) until the warm process of $GIT_MEM_DIR
// accepts connections; it is killed at the end of the script whatever
// happens.
func cmdWaitWarm(ts *testscript.TestScript, neg bool, args []string) {
	dir := ts.Getenv("GIT_MEM_DIR")
	sock := warm.SockPath(dir)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("unix", sock, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitwarm: no warm search process after 30s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pid := warmPID(ts, dir)
	ts.Setenv("WARM_PID", strconv.Itoa(pid))
	ts.Defer(func() {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// warmPID reads the pid of the last warm process started from its log.
func warmPID(ts *testscript.TestScript, dir string) int {
	deadline := time.Now().Add(10 * time.Second)
	re := regexp.MustCompile(`warm search process (\d+) started`)
	for {
		log, _ := os.ReadFile(filepath.Join(dir, "mem", "log", "search.log"))
		if m := re.FindAllSubmatch(log, -1); len(m) > 0 {
			pid, _ := strconv.Atoi(string(m[len(m)-1][1]))
			return pid
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no warm search process in the log: %s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive says whether pid runs (a zombie does not).
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// waitgone TIMEOUT: wait until the warm process waitwarm saw has exited
// (a timeout fails), and check that it left no socket.
func cmdWaitGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitgone TIMEOUT")
	}
	timeout, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("waitgone: %v", err)
	}
	pid, err := strconv.Atoi(ts.Getenv("WARM_PID"))
	if err != nil {
		ts.Fatalf("waitgone: no waitwarm before")
	}
	dir := ts.Getenv("GIT_MEM_DIR")
	deadline := time.Now().Add(timeout)
	for alive(pid) {
		if time.Now().After(deadline) {
			ts.Fatalf("waitgone: warm search process %d still runs after %s", pid, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Lstat(warm.SockPath(dir)); err == nil {
		ts.Fatalf("waitgone: the socket is left behind")
	}
}

// deadsock: leave a socket file at $GIT_MEM_DIR's socket path that no
// process listens on (a killed warm process's).
func cmdDeadSock(ts *testscript.TestScript, neg bool, args []string) {
	dir := ts.Getenv("GIT_MEM_DIR")
	if err := os.MkdirAll(warm.RunDir(dir), 0o700); err != nil {
		ts.Fatalf("deadsock: %v", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: warm.SockPath(dir), Net: "unix"})
	if err != nil {
		ts.Fatalf("deadsock: %v", err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
}

// warmpacks some | warmpacks gone TIMEOUT: the packs the warm process
// waitwarm saw has mapped (/proc/PID/maps). some: it maps at least one
// and none that was deleted; gone: wait until it maps no deleted pack (a
// timeout fails).
func cmdWarmPacks(ts *testscript.TestScript, neg bool, args []string) {
	pid, err := strconv.Atoi(ts.Getenv("WARM_PID"))
	if err != nil {
		ts.Fatalf("warmpacks: no waitwarm before")
	}
	packs := func() (mapped, deleted []string) {
		maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		if err != nil {
			ts.Fatalf("warmpacks: %v", err)
		}
		for _, l := range strings.Split(string(maps), "\n") {
			if !strings.Contains(l, "/objects/pack/pack-") || !strings.Contains(l, ".pack") {
				continue
			}
			mapped = append(mapped, l)
			if strings.HasSuffix(l, " (deleted)") {
				deleted = append(deleted, l)
			}
		}
		return mapped, deleted
	}
	switch {
	case len(args) == 1 && args[0] == "some":
		mapped, deleted := packs()
		if len(mapped) == 0 || len(deleted) > 0 {
			ts.Fatalf("warmpacks: %d packs mapped, deleted ones: %q", len(mapped), deleted)
		}
	case len(args) == 2 && args[0] == "gone":
		timeout, err := time.ParseDuration(args[1])
		if err != nil {
			ts.Fatalf("warmpacks: %v", err)
		}
		deadline := time.Now().Add(timeout)
		for {
			_, deleted := packs()
			if len(deleted) == 0 {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("warmpacks: deleted packs still mapped after %s: %q", timeout, deleted)
			}
			time.Sleep(50 * time.Millisecond)
		}
	default:
		ts.Fatalf("usage: warmpacks some | warmpacks gone TIMEOUT")
	}
}
