package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/cmd/internal/cli"
	"github.com/gitmem/git-mem/cmd/internal/warm"
	"github.com/gitmem/git-mem/memory"
)

// The warm search process (docs/CONTRACT.md, "The warm search process";
// package cmd/internal/warm is its wire). `git-mem-core search--daemon`
// keeps the memory and its search index open and answers the front's
// `git mem search` requests over <gitdir>/mem/run/search.sock, running
// the search command itself on the kept index, so the answer is the
// command's own output. It answers only its own user, only requests whose
// environment equals its own and that name its memory, and only from an
// index that a one-shot search would use as it is (memory.View.SearchKept);
// anything else is a fallback, and the front runs the search cold. It
// exits after its idle time without a search, when its git dir or its
// socket disappears, on SIGTERM, or when the config turns it off. It
// writes no query anywhere: its log (mem/log/search.log) says when it
// started and why it stopped.

func init() { register(newSearchDaemonCmd) }

func newSearchDaemonCmd(e *env) *cobra.Command {
	var idle time.Duration
	cmd := &cobra.Command{
		Use:    warm.Command,
		Short:  "Keep the search index open for `git mem search` (started by it; exits when idle)",
		Hidden: true,
		Args:   args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if e.warm != nil {
				return errFallback
			}
			return runSearchDaemon(e, idle)
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", 0, "exit after this long without a search (default: search.server_idle of the config, else 5m)")
	return cmd
}

// errFallback ends a warm request that the process declines.
var errFallback = errors.New("warm search: fall back")

// startSearchServer starts a warm search process for m after a cold
// search (cli.StartSearchServer): this binary.
func startSearchServer(m *memory.Memory) {
	if exe, err := os.Executable(); err == nil {
		cli.StartSearchServer(&m.Reader, exe)
	}
}

// searchDaemon is the running warm process.
type searchDaemon struct {
	dir   string // the git dir, absolute
	dirFI os.FileInfo
	env   string // warm.EnvDigest of its own environment
	logf  func(string, ...any)

	// mu: a request holds it shared while it uses view; a reopen (the
	// config changed, or a search failed) exclusive.
	mu       sync.RWMutex
	m        *memory.Memory
	view     *memory.View
	cfgStamp string
	stale    atomic.Bool // a search failed: open the memory again

	idleFlag time.Duration // --idle; 0: the config's, read again with it
	idle     atomic.Int64  // the idle time in force
	last     atomic.Int64  // unix ns of the last request
	answered atomic.Int64  // requests answered, and declined
	declined atomic.Int64
	inflight sync.WaitGroup
	stop     chan string // why it stops
	stopOnce sync.Once
	// packsOwed: collections owed to unmap packs let go of (check's own).
	packsOwed int
	// tombs is the tombstone ref's commit when the process started: a
	// forget (or a sync that learned tombstones) moves it, and the process
	// then exits (check).
	tombs string
}

func runSearchDaemon(e *env, idle time.Duration) error {
	dir, err := filepath.Abs(e.resolveMemDir())
	if err != nil {
		return err
	}
	m, err := e.open()
	if err != nil {
		return err
	}
	if warm.Disabled(os.Getenv) || !m.Config.Search.ServerOn() {
		return nil
	}
	sock := warm.SockPath(dir)
	if len(sock) > warm.MaxSockPath {
		return fmt.Errorf("warm search: the socket path %s is over %d bytes", sock, warm.MaxSockPath)
	}
	if err := cli.PrivateDir(warm.RunDir(dir)); err != nil {
		return fmt.Errorf("warm search: %w", err)
	}
	lock, err := os.OpenFile(warm.LockPath(dir), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("warm search: lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil // another one runs
		}
		return fmt.Errorf("warm search: lock: %w", err)
	}
	d := &searchDaemon{dir: dir, env: warm.EnvDigest(os.LookupEnv), logf: m.Logger("search.log"),
		m: m, view: newKeptView(m), cfgStamp: configStamp(dir), stop: make(chan string, 1), idleFlag: idle}
	d.setIdle(m)
	d.tombs = tombstoneTip(m)
	// Logged before it listens: whoever reaches it can read its pid.
	d.logf("warm search process %d started (idle %s)", os.Getpid(), time.Duration(d.idle.Load()))
	_ = os.Remove(sock) // a dead one's, under the lock
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return fmt.Errorf("warm search: listen: %w", err)
	}
	defer ln.Close()
	sockFI, err := os.Lstat(sock)
	if err != nil {
		return fmt.Errorf("warm search: %w", err)
	}
	if d.dirFI, err = os.Stat(dir); err != nil {
		return err
	}
	d.last.Store(time.Now().UnixNano())
	// Nothing pins the folder it was started in.
	_ = os.Chdir("/")
	// The index is opened now, not by the first request.
	_, _ = d.view.SearchKept(context.Background(), memory.SearchQuery{Text: "git mem", K: 1})
	d.trim()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go d.accept(ln)
	why := ""
	for why == "" {
		tick := time.NewTimer(min(2*time.Second, max(time.Duration(d.idle.Load())/4, 50*time.Millisecond)))
		select {
		case why = <-d.stop:
		case s := <-sigs:
			why = "signal " + s.String()
		case <-tick.C:
			why = d.check(sock, sockFI)
		}
		tick.Stop()
	}
	if fi, err := os.Lstat(sock); err != nil || !os.SameFile(fi, sockFI) {
		ln.SetUnlinkOnClose(false) // not ours any more: leave it
	}
	ln.Close()
	waitTimeout(&d.inflight, 5*time.Second)
	d.mu.Lock()
	_ = d.view.Close()
	d.mu.Unlock()
	d.logf("warm search process %d stopped: %s; answered %d searches, declined %d", os.Getpid(), why,
		d.answered.Load(), d.declined.Load())
	return nil
}

// freeOld gives the memory of an index let go of back to the system:
// after a forget, nothing of the forgotten exchanges stays in this
// process's memory (a cold search's process ends). The scratch kept for
// the next search (rows and scores of the last one) goes too.
func freeOld() {
	memory.DropSearchScratch()
	debug.FreeOSMemory()
}

// tombstoneTip names the tombstone ref's commit (the zero hash when none,
// "?" when it cannot be read).
func tombstoneTip(m *memory.Memory) string {
	h, err := m.Repo.TombstoneTip()
	if err != nil {
		return "?"
	}
	return h.String()
}

// newKeptView is a view whose index stays open until the process ends.
// The packs its searches read hits from stay mapped between searches
// (check lets go of them when the pack folder changes).
func newKeptView(m *memory.Memory) *memory.View {
	m.Repo.KeepPacks()
	v := memory.NewView(m)
	v.Idle = 0
	v.PostingCache = memory.WarmPostingCache
	return v
}

// setIdle sets the idle time from --idle, else from m's config.
func (d *searchDaemon) setIdle(m *memory.Memory) {
	idle := d.idleFlag
	if idle <= 0 {
		idle = m.Config.Search.Idle()
	}
	d.idle.Store(int64(idle))
}

// check is the periodic look around: the reason to stop, or "".
func (d *searchDaemon) check(sock string, sockFI os.FileInfo) string {
	if _, err := os.Stat(filepath.Join(d.dir, "HEAD")); err != nil {
		return "the git dir is gone"
	}
	if fi, err := os.Lstat(sock); err != nil || !os.SameFile(fi, sockFI) {
		return "the socket is gone"
	}
	if idle := time.Duration(d.idle.Load()); time.Since(time.Unix(0, d.last.Load())) >= idle {
		return fmt.Sprintf("idle for %s", idle)
	}
	d.mu.RLock()
	forgot := d.m != nil && tombstoneTip(d.m) != d.tombs
	d.mu.RUnlock()
	if forgot {
		// Go frees memory without clearing it, and keeps some of it for
		// reuse (encoding/json's buffers are pooled): a forgotten
		// exchange's verbatim text, printed by an earlier search, was
		// still in this process's memory minutes after the forget, its
		// index let go of and freeOld run. Only an exit clears it; the
		// next search runs cold and starts a new process.
		return "a forget (the tombstones moved)"
	}
	d.mu.RLock()
	released := d.view.ReleaseIfChanged()
	packs := d.m != nil && d.m.Repo.ReleaseStalePacks()
	if released && d.m != nil {
		d.m.Repo.ReleasePacks() // with the index: collected by freeOld
	}
	d.mu.RUnlock()
	if released {
		freeOld()
	}
	// Packs a repack or a purge deleted are unmapped by the collection
	// after the last read that used them: now, or, when a search was
	// reading them, at the next check.
	if packs {
		d.packsOwed = 2
	}
	if d.packsOwed > 0 {
		d.packsOwed--
		if !released {
			runtime.GC()
		}
	}
	return ""
}

func (d *searchDaemon) accept(ln *net.UnixListener) {
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				d.halt("accept: " + err.Error())
			}
			return
		}
		d.inflight.Add(1)
		go func() {
			defer d.inflight.Done()
			d.serve(c)
		}()
	}
}

func (d *searchDaemon) halt(why string) {
	d.stopOnce.Do(func() { d.stop <- why })
}

// serve answers one request.
func (d *searchDaemon) serve(c *net.UnixConn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute))
	if !samePeer(c) {
		return
	}
	req, err := warm.ReadRequest(c)
	if err != nil {
		return
	}
	d.last.Store(time.Now().UnixNano())
	defer func() { d.last.Store(time.Now().UnixNano()) }()
	if req.V != warm.Version || req.Env != d.env || !filepath.IsAbs(req.Cwd) || len(req.Args) == 0 {
		d.declined.Add(1)
		_ = warm.WriteReply(c, true, 0, nil, nil)
		return
	}
	d.refresh()
	var out, errOut bytes.Buffer
	w := &warmCall{d: d, req: req}
	d.mu.RLock()
	opened := d.view.Opened()
	d.mu.RUnlock()
	code := mainWith(req.Args, bytes.NewReader(nil), &out, &errOut, w)
	d.mu.RLock()
	reopened := d.view.Opened() != opened
	if reopened && d.m != nil {
		d.m.Repo.ReleasePacks() // with the old index: collected by freeOld
	}
	d.mu.RUnlock()
	if reopened {
		defer freeOld()
	}
	if !w.answered {
		d.declined.Add(1)
		_ = warm.WriteReply(c, true, 0, nil, nil)
		return
	}
	d.answered.Add(1)
	_ = warm.WriteReply(c, false, code, out.Bytes(), errOut.Bytes())
	d.trim()
}

// trim gives back the process's pages of the mapped index files and packs
// when they are over memory.WarmFileBudget (View.TrimResident), after the
// answer went out: each search touches a little of them, a different
// little each, so they made most of the process's memory after a few
// different queries (docs/BENCHMARKS.md, session 30).
func (d *searchDaemon) trim() {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.m != nil {
		d.view.TrimResident(memory.WarmFileBudget)
	}
}

// warmCall is one request as the search command sees it (env.warm).
type warmCall struct {
	d   *searchDaemon
	req warm.Request
	// answered: the search ran on the kept index; otherwise (an error of
	// the arguments included: the cold search prints the same) the
	// process answers "fall back".
	answered bool
}

// search runs q as the one-shot search would, on the kept index, or
// returns errFallback.
func (w *warmCall) search(e *env, q memory.SearchQuery) ([]memory.Result, error) {
	d := w.d
	// The memory the command names, as resolveMemDir finds it in the
	// front's process.
	dir := e.MemDir
	if dir == "" {
		dir = w.req.MemDirEnv
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, errFallback
		}
		dir = filepath.Join(home, ".git-mem")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(w.req.Cwd, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !os.SameFile(fi, d.dirFI) {
		return nil, errFallback
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.m == nil || !d.m.Config.Search.ServerOn() {
		return nil, errFallback
	}
	res, err := d.view.SearchKept(e.ctx, q)
	if err != nil {
		if !errors.Is(err, memory.ErrNotKept) {
			// Whatever failed (a pack a repack removed, a damaged file),
			// the next request opens the memory again.
			d.stale.Store(true)
		}
		return nil, errFallback
	}
	w.answered = true
	return res, nil
}

// refresh opens the memory again when a config file changed or a search
// failed; it stops the process when the config turned it off or the
// memory cannot be opened (the cold search says why).
func (d *searchDaemon) refresh() {
	st := configStamp(d.dir)
	d.mu.RLock()
	same := st == d.cfgStamp && !d.stale.Load()
	d.mu.RUnlock()
	if same {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if st == d.cfgStamp && !d.stale.Load() {
		return
	}
	_ = d.view.Close()
	d.m = nil
	m, err := memory.Open(d.dir)
	if err != nil {
		d.halt("the memory cannot be opened again")
		return
	}
	d.m, d.view, d.cfgStamp = m, newKeptView(m), st
	d.stale.Store(false)
	d.setIdle(m)
	if !m.Config.Search.ServerOn() {
		d.halt("the config turned it off")
	}
}

// configStamp names the state of the config files a memory reads.
func configStamp(dir string) string {
	paths := []string{filepath.Join(dir, "mem", "config.yaml")}
	if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ".config", "git-mem", "config.yaml"))
	}
	st := ""
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			st += "-|"
			continue
		}
		st += fmt.Sprintf("%d/%d/%d|", fi.Size(), fi.ModTime().UnixNano(), inode(fi))
	}
	return st
}

func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// waitTimeout waits for wg, at most d.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
