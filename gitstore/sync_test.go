package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// syncMain is the test binary as a second process: it appends
// GITSTORE_TEST_N entries named GITSTORE_TEST_PREFIX-i to the memory at dir
// and syncs with origin after each batch of GITSTORE_TEST_BATCH.
func syncMain(dir string) int {
	r, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv("GITSTORE_TEST_N"))
	batch, _ := strconv.Atoi(os.Getenv("GITSTORE_TEST_BATCH"))
	prefix := os.Getenv("GITSTORE_TEST_PREFIX")
	for i := 0; i < n; i += batch {
		var es []Entry
		for j := i; j < i+batch && j < n; j++ {
			es = append(es, testEntry(fmt.Sprintf("%s-%d", prefix, j)))
		}
		if _, err := r.Append(es, time.Minute); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := r.Sync(context.Background(), "origin", SyncOptions{Retries: 50}); err != nil {
			fmt.Fprintln(os.Stderr, "sync:", err)
			return 1
		}
	}
	return 0
}

func gitOut(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// bareRemote makes an empty bare repo (HEAD → main) under base.
func bareRemote(t testing.TB, base, name string) string {
	t.Helper()
	dir := filepath.Join(base, name)
	gitOut(t, "init", "-q", "--bare", "-b", "main", dir)
	gitOut(t, "--git-dir", dir, "config", "http.receivepack", "true")
	return dir
}

func addRemote(t testing.TB, r *Repo, name, url string) {
	t.Helper()
	gitOut(t, "--git-dir", r.Dir(), "remote", "add", name, url)
}

func memWith(t testing.TB, url string, ids ...string) *Repo {
	t.Helper()
	r, _, err := Init(filepath.Join(t.TempDir(), "mem.git"))
	if err != nil {
		t.Fatal(err)
	}
	addRemote(t, r, "origin", url)
	appendIDs(t, r, ids...)
	return r
}

func appendIDs(t testing.TB, r *Repo, ids ...string) {
	t.Helper()
	var es []Entry
	for _, id := range ids {
		es = append(es, testEntry(id))
	}
	if _, err := r.Append(es, 0); err != nil {
		t.Fatal(err)
	}
}

func ids(prefix string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func mustSync(t testing.TB, r *Repo) SyncResult {
	t.Helper()
	res, err := r.Sync(context.Background(), "origin", SyncOptions{})
	if err != nil {
		t.Fatalf("sync %s: %v", r.Dir(), err)
	}
	return res
}

// exchangeSet lists the exchange ids of main's history, sorted, and fails
// when the tree does not hold exactly one blob per id.
func exchangeSet(t testing.TB, dir string) []string {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	err = r.Walk(plumbing.ZeroHash, nil, func(c *object.Commit) error {
		for _, line := range strings.Split(c.Message, "\n") {
			if v, ok := strings.CutPrefix(line, "Exchange: "); ok {
				set[v] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for id := range set {
		out = append(out, id)
		if _, ok, err := r.ReadPath(plumbing.ZeroHash, testEntry(id).Path); err != nil || !ok {
			t.Fatalf("%s: no blob for %s (%v)", dir, id, err)
		}
	}
	sort.Strings(out)
	return out
}

// transports are the remotes the sync tests run against.
func transports(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"path": func(t *testing.T) string { return bareRemote(t, t.TempDir(), "remote.git") },
		"file-url": func(t *testing.T) string {
			return "file://" + bareRemote(t, t.TempDir(), "remote.git")
		},
		"git-daemon": func(t *testing.T) string {
			base := t.TempDir()
			bareRemote(t, base, "remote.git")
			return gitDaemon(t, base) + "/remote.git"
		},
		"http-backend": func(t *testing.T) string {
			base := t.TempDir()
			bareRemote(t, base, "remote.git")
			return httpBackend(t, base, nil) + "/remote.git"
		},
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// gitDaemon serves base over git:// on 127.0.0.1 with push enabled.
func gitDaemon(t testing.TB, base string) string {
	t.Helper()
	if err := exec.Command("git", "daemon", "-h").Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 129 {
			t.Skipf("git daemon is not installed: %v", err)
		}
	}
	port := freePort(t)
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--listen=127.0.0.1", "--port="+strconv.Itoa(port),
		"--base-path="+base, "--export-all", "--enable=receive-pack", "--informative-errors", base)
	// Its own process group: the per-connection children go with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("git daemon: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i > 200 {
			t.Fatalf("git daemon did not start: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "git://" + addr
}

// httpBackend serves base with git http-backend behind net/http/cgi; check,
// when given, guards every request (for the authentication tests).
func httpBackend(t testing.TB, base string, check func(*http.Request) bool) string {
	t.Helper()
	execPath := strings.TrimSpace(gitOut(t, "--exec-path"))
	backend := filepath.Join(execPath, "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git http-backend is not installed: %v", err)
	}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if check != nil && !check(req) {
			w.Header().Set("WWW-Authenticate", `Basic realm="mem"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestSyncTwoMachinesOverEveryTransport(t *testing.T) {
	for name, mk := range transports(t) {
		t.Run(name, func(t *testing.T) {
			url := mk(t)
			a := memWith(t, url, append(ids("a", 5), "both")...)
			b := memWith(t, url, append(ids("b", 7), "both")...)
			// First order: a then b, twice.
			ra := mustSync(t, a)
			if ra.Pushed != 6 || ra.Fetched != 0 {
				t.Fatalf("first push: %+v", ra)
			}
			rb := mustSync(t, b)
			if rb.Fetched != 6 || rb.Merged != 5 || rb.MergeCommit.IsZero() || rb.Pushed != 8 {
				t.Fatalf("b merge: %+v", rb)
			}
			ra = mustSync(t, a)
			if !ra.FastForward || ra.Merged != 7 {
				t.Fatalf("a fast-forward: %+v", ra)
			}
			if rb = mustSync(t, b); !rb.UpToDate {
				t.Fatalf("b again: %+v", rb)
			}
			// Both add offline again; the other order.
			appendIDs(t, a, ids("a2", 3)...)
			appendIDs(t, b, ids("b2", 4)...)
			mustSync(t, b)
			mustSync(t, a)
			mustSync(t, b)
			if ra = mustSync(t, a); !ra.UpToDate {
				t.Fatalf("a at the end: %+v", ra)
			}
			want := exchangeSet(t, a.Dir())
			if len(want) != 5+7+1+3+4 {
				t.Fatalf("%d exchanges: %v", len(want), want)
			}
			ha, _ := a.Head()
			hb, _ := b.Head()
			if ha != hb {
				t.Fatalf("heads differ: %s %s", ha, hb)
			}
			// The plain git CLI clones and reads it; fsck is clean everywhere.
			clone := filepath.Join(t.TempDir(), "clone.git")
			gitOut(t, "clone", "-q", "--bare", url, clone)
			for _, dir := range []string{a.Dir(), b.Dir(), clone} {
				fsck(t, dir)
				if got := exchangeSet(t, dir); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("%s holds %v, want %v", dir, got, want)
				}
			}
			if n := strings.Count(gitOut(t, "--git-dir", clone, "log", "--format=%H", "--grep=^Exchange: "), "\n"); n < len(want) {
				t.Fatalf("git log shows %d exchange commits", n)
			}
			if n := strings.Count(gitOut(t, "--git-dir", clone, "ls-tree", "-r", "--name-only", "main"), "\n"); n != len(want) {
				t.Fatalf("the tree holds %d blobs, want %d (one per exchange)", n, len(want))
			}
		})
	}
}

func TestSyncKeepsSmallerBlobAndConverges(t *testing.T) {
	url := bareRemote(t, t.TempDir(), "remote.git")
	a := memWith(t, url)
	b := memWith(t, url)
	e1, e2 := testEntry("x-1"), testEntry("x-1")
	e2.Blob = []byte(`{"id":"x-1","redacted":true}`)
	if _, err := a.Append([]Entry{e1}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append([]Entry{e2}, 0); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	mustSync(t, b)
	mustSync(t, a)
	h1, h2 := plumbing.ComputeHash(plumbing.BlobObject, e1.Blob), plumbing.ComputeHash(plumbing.BlobObject, e2.Blob)
	want := e1.Blob
	if h2.String() < h1.String() {
		want = e2.Blob
	}
	for _, r := range []*Repo{a, b} {
		got, _, err := r.ReadPath(plumbing.ZeroHash, e1.Path)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s keeps %q, want %q (%v)", r.Dir(), got, want, err)
		}
		fsck(t, r.Dir())
	}
}

func TestUnionTreeIsSortedLikeGit(t *testing.T) {
	// Names whose bytewise order differs from git's folder order, split
	// across both sides.
	url := bareRemote(t, t.TempDir(), "remote.git")
	a := memWith(t, url)
	b := memWith(t, url)
	mk := func(p string) Entry { return Entry{Path: p, Blob: []byte(p), Message: "m\n\nExchange: " + p + "\n"} }
	if _, err := a.Append([]Entry{mk("ex/a.b"), mk("ex/a/c"), mk("ex/q/1")}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append([]Entry{mk("ex/a-"), mk("ex/a0"), mk("ex/a/d"), mk("ex/q/2")}, 0); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	if res := mustSync(t, b); res.MergeCommit.IsZero() || res.Merged != 3 {
		t.Fatalf("merge: %+v", res)
	}
	fsck(t, b.Dir())
	out := gitOut(t, "--git-dir", b.Dir(), "ls-tree", "-r", "--name-only", "main")
	if out != "ex/a-\nex/a.b\nex/a/c\nex/a/d\nex/a0\nex/q/1\nex/q/2\n" {
		t.Fatalf("tree:\n%s", out)
	}
	parents := gitOut(t, "--git-dir", b.Dir(), "log", "-1", "--format=%P%n%s", "main")
	if !strings.Contains(parents, "Merge memory from origin") || len(strings.Fields(strings.SplitN(parents, "\n", 2)[0])) != 2 {
		t.Fatalf("merge commit: %q", parents)
	}
}

func TestSyncRefusesRemoteThatIsNotAMemory(t *testing.T) {
	base := t.TempDir()
	work := filepath.Join(base, "work")
	gitOut(t, "init", "-q", "-b", "main", work)
	if err := os.WriteFile(filepath.Join(work, "README"), []byte("code\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, "-C", work, "add", "README")
	gitOut(t, "-C", work, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", "code")
	remote := filepath.Join(base, "code.git")
	gitOut(t, "clone", "-q", "--bare", work, remote)
	r := memWith(t, remote, ids("m", 2)...)
	before, _ := r.Head()
	_, err := r.Sync(context.Background(), "origin", SyncOptions{})
	if !errors.Is(err, ErrNotMemory) || !strings.Contains(err.Error(), `"README"`) {
		t.Fatalf("want not-a-memory, got %v", err)
	}
	after, _ := r.Head()
	if before != after {
		t.Fatal("main moved")
	}
	if h, _ := readRef(r.Dir(), TrackingRef("origin")); !h.IsZero() {
		t.Fatal("the tracking ref was left pointing at the foreign main")
	}
	if got := gitOut(t, "--git-dir", remote, "rev-list", "--count", "main"); strings.TrimSpace(got) != "1" {
		t.Fatalf("remote changed: %s", got)
	}
	// A remote whose commits lack the trailer (paths under ex/ only).
	remote2 := bareRemote(t, base, "plain.git")
	w2 := memWith(t, remote2)
	if _, err := w2.Append([]Entry{{Path: "ex/x", Blob: []byte("x"), Message: "no trailer\n"}}, 0); err != nil {
		t.Fatal(err)
	}
	gitOut(t, "--git-dir", w2.Dir(), "push", "-q", remote2, "main")
	r2 := memWith(t, remote2, "m-1")
	if _, err := r2.Sync(context.Background(), "origin", SyncOptions{}); !errors.Is(err, ErrNotMemory) || !strings.Contains(err.Error(), "no Exchange trailer") {
		t.Fatalf("want not-a-memory for a commit without trailer, got %v", err)
	}
}

func TestSyncRefusesRewrittenRemoteHistory(t *testing.T) {
	url := bareRemote(t, t.TempDir(), "remote.git")
	a := memWith(t, url, ids("a", 3)...)
	mustSync(t, a)
	// Someone force-pushes another history over the remote.
	other := memWith(t, url, ids("o", 2)...)
	gitOut(t, "--git-dir", other.Dir(), "push", "-q", "--force", url, "main")
	remoteTip := strings.TrimSpace(gitOut(t, "--git-dir", url, "rev-parse", "main"))
	appendIDs(t, a, "a-new")
	before, _ := a.Head()
	for i := 0; i < 2; i++ { // refused again on a second try
		_, err := a.Sync(context.Background(), "origin", SyncOptions{})
		if !errors.Is(err, ErrRewritten) || !strings.Contains(err.Error(), "force-push") {
			t.Fatalf("want rewritten, got %v", err)
		}
	}
	if after, _ := a.Head(); after != before {
		t.Fatal("main moved")
	}
	if got := strings.TrimSpace(gitOut(t, "--git-dir", url, "rev-parse", "main")); got != remoteTip {
		t.Fatal("the remote was changed")
	}
	// The way out the message names: forget the old tip, then a union merge.
	gitOut(t, "--git-dir", a.Dir(), "update-ref", "-d", string(TrackingRef("origin")))
	mustSync(t, a)
	if got := exchangeSet(t, url); len(got) != 6 {
		t.Fatalf("after merging anyway: %v", got)
	}
}

func TestSyncUnreachableAndAuthFailuresAreClear(t *testing.T) {
	r := memWith(t, "git://127.0.0.1:"+strconv.Itoa(freePort(t))+"/nothing.git", "u-1")
	before, _ := r.Head()
	_, err := r.Sync(context.Background(), "origin", SyncOptions{})
	var re *RemoteError
	if !errors.As(err, &re) || re.Kind != "unreachable" || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("want unreachable, got %v", err)
	}
	if after, _ := r.Head(); after != before {
		t.Fatal("main moved")
	}

	_, err = r.Sync(context.Background(), "upstream", SyncOptions{})
	if !errors.Is(err, ErrNoRemote) || !strings.Contains(err.Error(), "git mem remote add upstream") {
		t.Fatalf("want no remote, got %v", err)
	}

	base := t.TempDir()
	bareRemote(t, base, "remote.git")
	srv := httpBackend(t, base, func(req *http.Request) bool {
		u, p, ok := req.BasicAuth()
		return ok && u == "me" && p == "s3cret"
	})
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(base, "gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_MEM_TOKEN", "GIT_MEM_USERNAME", "GIT_MEM_PASSWORD"} {
		t.Setenv(k, "")
	}
	h := memWith(t, srv+"/remote.git", "h-1")
	_, err = h.Sync(context.Background(), "origin", SyncOptions{})
	if !errors.As(err, &re) || re.Kind != "auth" || !strings.Contains(err.Error(), "GIT_MEM_TOKEN") {
		t.Fatalf("want an auth error, got %v", err)
	}
	// A wrong password in the URL: refused, and the password is not shown.
	bad := memWith(t, strings.Replace(srv, "http://", "http://me:wrong@", 1)+"/remote.git", "h-2")
	if _, err = bad.Sync(context.Background(), "origin", SyncOptions{}); !errors.As(err, &re) || re.Kind != "auth" || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("want an auth error without the password, got %v", err)
	}
	// Environment credentials work.
	t.Setenv("GIT_MEM_USERNAME", "me")
	t.Setenv("GIT_MEM_PASSWORD", "s3cret")
	mustSync(t, h)
	t.Setenv("GIT_MEM_PASSWORD", "")
	t.Setenv("GIT_MEM_TOKEN", "s3cret") // a token, with the user from the URL
	t.Setenv("GIT_MEM_USERNAME", "")
	tok := memWith(t, strings.Replace(srv, "http://", "http://me@", 1)+"/remote.git", "t-1")
	if res := mustSync(t, tok); res.Pushed != 1 {
		t.Fatalf("token sync: %+v", res)
	}
	t.Setenv("GIT_MEM_TOKEN", "")
	// So do the user's git credential helpers.
	helper := "!f() { test \"$1\" = get && echo username=me && echo password=s3cret; true; }; f"
	gitOut(t, "config", "--file", filepath.Join(base, "gitconfig"), "credential.helper", helper)
	c := memWith(t, srv+"/remote.git", "c-1")
	if res := mustSync(t, c); res.Fetched != 2 || res.Pushed != 1 {
		t.Fatalf("credential helper sync: %+v", res)
	}
}

func TestConcurrentSyncFromTwoProcessesLosesNothing(t *testing.T) {
	url := bareRemote(t, t.TempDir(), "remote.git")
	const procs, n = 3, 12
	var mems []*Repo
	for p := 0; p < procs; p++ {
		mems = append(mems, memWith(t, url))
	}
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p, m := range mems {
		wg.Add(1)
		go func(p int, dir string) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "GITSTORE_TEST_SYNC="+dir, "GITSTORE_TEST_PREFIX="+fmt.Sprintf("p%d", p),
				"GITSTORE_TEST_N="+strconv.Itoa(n), "GITSTORE_TEST_BATCH=3")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("process %d: %v: %s", p, err, out)
			}
		}(p, m.Dir())
	}
	// A second process syncing the first memory at the same time.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 4; i++ {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "GITSTORE_TEST_SYNC="+mems[0].Dir(), "GITSTORE_TEST_PREFIX=q",
				"GITSTORE_TEST_N=1", "GITSTORE_TEST_BATCH=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("second process: %v: %s", err, out)
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, m := range mems {
		mustSync(t, m)
	}
	want := procs*n + 1
	for _, dir := range []string{url, mems[0].Dir(), mems[procs-1].Dir()} {
		if got := exchangeSet(t, dir); len(got) != want {
			t.Fatalf("%s holds %d exchanges, want %d", dir, len(got), want)
		}
		fsck(t, dir)
	}
}

func TestCloneHoldsNoMemFilesAndWorks(t *testing.T) {
	url := bareRemote(t, t.TempDir(), "remote.git")
	a := memWith(t, url, ids("a", 20)...)
	// git mem's own files exist locally...
	for _, f := range []string{"write.lock", "index/manifest.json"} {
		p := filepath.Join(a.MemDir(), f)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustSync(t, a)
	// ...and never reach the remote or a clone.
	if _, err := os.Stat(filepath.Join(url, "mem")); !os.IsNotExist(err) {
		t.Fatalf("the remote has a mem/ folder: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "clone.git")
	gitOut(t, "clone", "-q", "--bare", url, clone)
	if _, err := os.Stat(filepath.Join(clone, "mem")); !os.IsNotExist(err) {
		t.Fatalf("the clone has a mem/ folder: %v", err)
	}
	if out := gitOut(t, "--git-dir", clone, "ls-tree", "--name-only", "main"); out != "ex\n" {
		t.Fatalf("top of the tree: %q", out)
	}
	// The plain clone is a working memory: open, append, sync back.
	c, err := Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	appendIDs(t, c, "from-clone")
	if res := mustSync(t, c); res.Pushed != 1 {
		t.Fatalf("sync from a clone: %+v", res)
	}
	if res := mustSync(t, a); res.Fetched != 1 || !res.FastForward {
		t.Fatalf("sync back: %+v", res)
	}
}

func TestFetchOfEmptyAndUpToDateRemoteSucceeds(t *testing.T) {
	url := bareRemote(t, t.TempDir(), "remote.git")
	r := memWith(t, url)
	if tip, err := r.Fetch("origin"); err != nil || !tip.IsZero() {
		t.Fatalf("empty remote: %s %v", tip, err)
	}
	if res := mustSync(t, r); !res.UpToDate {
		t.Fatalf("empty both sides: %+v", res)
	}
	appendIDs(t, r, "e-1")
	mustSync(t, r)
	head, _ := r.Head()
	for i := 0; i < 2; i++ {
		if tip, err := r.Fetch("origin"); err != nil || tip != head {
			t.Fatalf("fetch: %s %v", tip, err)
		}
	}
}

func TestSyncAncestryCacheIsOnlyACache(t *testing.T) {
	url := bareRemote(t, t.TempDir(), "remote.git")
	a := memWith(t, url, ids("a", 3)...)
	b := memWith(t, url, ids("b", 2)...)
	mustSync(t, a)
	mustSync(t, b)
	if _, _, ok := b.loadAncestry(); !ok {
		t.Fatal("no ancestry cache after a sync")
	}
	// Damaged: ignored.
	if err := os.WriteFile(b.ancestryCachePath(), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	appendIDs(t, b, "b-late")
	if res := mustSync(t, b); res.Pushed != 1 {
		t.Fatalf("with a damaged cache: %+v", res)
	}
	// The cache of an unrelated history (its tip is not an ancestor): ignored.
	other := memWith(t, bareRemote(t, t.TempDir(), "other.git"), ids("o", 2)...)
	mustSync(t, other)
	data, err := os.ReadFile(other.ancestryCachePath())
	if err != nil {
		t.Fatal(err)
	}
	gitOut(t, "--git-dir", a.Dir(), "fetch", "-q", other.Dir(), "main") // its objects exist locally
	if err := os.WriteFile(a.ancestryCachePath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	appendIDs(t, a, "a-late")
	if res := mustSync(t, a); res.Fetched != 3 || res.Pushed != 1 || res.MergeCommit.IsZero() {
		t.Fatalf("with a foreign cache: %+v", res)
	}
	if got := exchangeSet(t, url); len(got) != 7 {
		t.Fatalf("remote: %v", got)
	}
	fsck(t, url)
}

func TestPushRaceIsRetried(t *testing.T) {
	url := bareRemote(t, t.TempDir(), "remote.git")
	a := memWith(t, url, ids("a", 2)...)
	b := memWith(t, url, ids("b", 2)...)
	raced := false
	testHookBeforePush = func() {
		if raced {
			return
		}
		raced = true
		testHookBeforePush = nil
		mustSync(t, b) // b gets in first
	}
	t.Cleanup(func() { testHookBeforePush = nil })
	res := mustSync(t, a)
	if !raced || res.Rounds != 2 || res.Fetched != 2 || res.Pushed != 2 || res.MergeCommit.IsZero() {
		t.Fatalf("race: %+v", res)
	}
	if got := exchangeSet(t, url); len(got) != 4 {
		t.Fatalf("remote: %v", got)
	}
	fsck(t, url)
}

// branchFrom sets main back to base, appends es on it and returns the new
// head: one side of a merge to come.
func branchFrom(t *testing.T, r *Repo, base plumbing.Hash, es []Entry) plumbing.Hash {
	t.Helper()
	if err := r.casMain(mustHead(t, r), base, 0); err != nil {
		t.Fatal(err)
	}
	if len(es) > 0 {
		if _, err := r.Append(es, 0); err != nil {
			t.Fatal(err)
		}
	}
	return mustHead(t, r)
}

// TestParallelUnionTreeIsTheSerialOne: the merge of sibling folders on
// several goroutines gives the serial merge's tree, writes the same new
// trees in the same order, and fails where the serial merge fails.
func TestParallelUnionTreeIsTheSerialOne(t *testing.T) {
	at := func(dirs, name string) Entry {
		p := "ex/" + dirs + "/" + name + ".json"
		return Entry{Path: p, Blob: []byte(`{"id":"` + p + `"}`), Message: "m\n\nExchange: " + p + "\n"}
	}
	spread := func(prefix string, n int) []Entry {
		var es []Entry
		for i := range n {
			es = append(es, at(fmt.Sprintf("%x/%x", i%16, (i/16)%4), fmt.Sprintf("%s-%d", prefix, i)))
		}
		return es
	}
	other := func(e Entry) Entry { e.Blob = append([]byte(`{"v":2,`), e.Blob[1:]...); return e }
	cases := []struct {
		name       string
		base, a, b []Entry
		conflict   bool
	}{
		{name: "both sides add in many folders", base: spread("base", 40), a: spread("a", 90), b: spread("b", 70)},
		{name: "one side adds nothing", base: spread("base", 40), a: spread("a", 50)},
		{name: "only one folder differs", base: spread("base", 40), a: []Entry{at("3/1", "a")}, b: []Entry{at("3/1", "b")}},
		{name: "two versions of records", base: spread("base", 20), a: spread("x", 30),
			b: func() []Entry {
				var es []Entry
				for _, e := range spread("x", 30) {
					es = append(es, other(e))
				}
				return append(es, spread("b", 30)...)
			}()},
		{name: "a file on one side is a folder on the other", base: spread("base", 20), a: append(spread("a", 30), at("5", "k")),
			b: append(spread("b", 30), at("5/k.json", "z")), conflict: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := Init(filepath.Join(t.TempDir(), "mem.git"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Append(c.base, 0); err != nil {
				t.Fatal(err)
			}
			base, _ := r.Head()
			tip := func(es []Entry) plumbing.Hash {
				t.Helper()
				th, err := r.treeOf(branchFrom(t, r, base, es))
				if err != nil {
					t.Fatal(err)
				}
				return th
			}
			ta, tb := tip(c.a), tip(c.b)
			merge := func(par int) (plumbing.Hash, []plumbing.Hash, error) {
				b := newBatch()
				h, err := r.unionTree(r.tree, b.put, ta, tb, "", par, nil)
				return h, b.order, err
			}
			want, wantOrder, werr := merge(1)
			if c.conflict != errors.Is(werr, errPathConflict) {
				t.Fatalf("serial merge: %v, want a path conflict: %v", werr, c.conflict)
			}
			if werr == nil && want == ta && len(c.b) > 0 {
				t.Fatalf("serial merge kept ours (%s): b's entries are missing", want)
			}
			for _, par := range []int{2, 3, 16} {
				got, order, err := merge(par)
				if !errors.Is(err, werr) && (err == nil || werr == nil || err.Error() != werr.Error()) {
					t.Fatalf("par %d: error %v, serial %v", par, err, werr)
				}
				if err != nil {
					continue // the batch is dropped
				}
				if got != want || fmt.Sprint(order) != fmt.Sprint(wantOrder) {
					t.Fatalf("par %d: tree %s, %d new trees; serial %s, %d", par, got, len(order), want, len(wantOrder))
				}
			}
		})
	}
}

func mustHead(t *testing.T, r *Repo) plumbing.Hash {
	t.Helper()
	h, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestWalkBesideMergeIsMissingObjects: the push's walk of ours run beside
// the merge, finished with the merge commit, lists what missingObjects
// lists for the merge, in the same order; for anything but a merge of ours
// and a commit the remote holds it declines, and the caller walks again.
func TestWalkBesideMergeIsMissingObjects(t *testing.T) {
	mk := func(prefix string, n int) []Entry {
		var es []Entry
		for i := range n {
			es = append(es, testEntry(fmt.Sprintf("%s-%d", prefix, i)))
		}
		return es
	}
	cases := []struct {
		name        string
		ours, their int  // commits on each side after the base
		appendAfter bool // main moves on after the merge
		remoteBase  bool // the remote is at the base, not at theirs
		want        bool // missingAfterMerge answers
	}{
		{name: "both sides added", ours: 12, their: 9, want: true},
		{name: "one commit of ours", ours: 1, their: 30, want: true},
		{name: "ours added nothing", ours: 0, their: 5, want: true},
		{name: "main moved on after the merge", ours: 4, their: 4, appendAfter: true},
		{name: "theirs is not the remote's", ours: 4, their: 4, remoteBase: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := Init(filepath.Join(t.TempDir(), "mem.git"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Append(mk("base", 40), 0); err != nil {
				t.Fatal(err)
			}
			base := mustHead(t, r)
			side := func(es []Entry) plumbing.Hash { t.Helper(); return branchFrom(t, r, base, es) }
			theirs := side(mk("t", c.their))
			ours := side(mk("o", c.ours))
			remoteTip := theirs
			if c.remoteBase {
				remoteTip = base
			}
			have, err := r.ancestry(remoteTip)
			if err != nil {
				t.Fatal(err)
			}
			early := r.startWalk(ours, remoteTip, have)
			head, err := r.mergeCommit(ours, theirs, "Merge memory from origin\n")
			if err != nil {
				t.Fatal(err)
			}
			if c.appendAfter {
				if err := r.casMain(mustHead(t, r), head, 0); err != nil {
					t.Fatal(err)
				}
				appendIDs(t, r, "after-1")
				head = mustHead(t, r)
			}
			objs, commits, ok, err := r.missingAfterMerge(early, head)
			if err != nil || ok != c.want {
				t.Fatalf("missingAfterMerge: ok %v, err %v; want ok %v", ok, err, c.want)
			}
			if !ok {
				return
			}
			wantObjs, wantCommits, err := r.missingObjects(head, remoteTip, have)
			if err != nil {
				t.Fatal(err)
			}
			if len(wantObjs) < 1+2*c.ours { // the merge; each of ours: a commit, a blob, trees
				t.Fatalf("missingObjects lists %d objects for %d new commits", len(wantObjs), c.ours+1)
			}
			if fmt.Sprint(objs) != fmt.Sprint(wantObjs) || fmt.Sprint(commits) != fmt.Sprint(wantCommits) {
				t.Fatalf("beside the merge: %d objects, %d commits; missingObjects: %d, %d", len(objs), len(commits), len(wantObjs), len(wantCommits))
			}
		})
	}
}

// TestMissingObjectsSendsOnlyWhatTheRemoteLacks: the push's list holds
// every object of head the remote lacks, once, and none it has, also
// where ours's first commit still holds the base's version of a folder
// the remote changed since (the remote's tip no longer names it; the
// boundary commit's tree does).
func TestMissingObjectsSendsOnlyWhatTheRemoteLacks(t *testing.T) {
	at := func(prefix, dirs string, n int) []Entry {
		var es []Entry
		for i := range n {
			d := string(dirs[i%len(dirs)])
			p := fmt.Sprintf("ex/%s/%s/%s-%d.json", d, string(dirs[(i/len(dirs))%len(dirs)]), prefix, i)
			es = append(es, Entry{Path: p, Blob: []byte(`{"id":"` + p + `"}`), Message: "m\n\nExchange: " + p + "\n"})
		}
		return es
	}
	cases := []struct {
		name         string
		ours, theirs []Entry // after the base
		merge        bool    // head is the merge of ours and theirs; else ours
		remoteAtBase bool    // the remote is at the base (a fast-forward push)
	}{
		{name: "merge, folders apart", ours: at("o", "ab", 9), theirs: at("t", "cd", 7), merge: true},
		{name: "merge, folders shared", ours: at("o", "abc", 12), theirs: at("t", "bcd", 10), merge: true},
		{name: "merge, ours added nothing", theirs: at("t", "ab", 5), merge: true},
		{name: "fast-forward push", ours: at("o", "abc", 8), remoteAtBase: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := Init(filepath.Join(t.TempDir(), "mem.git"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Append(at("base", "abcde", 60), 0); err != nil {
				t.Fatal(err)
			}
			base := mustHead(t, r)
			theirs := branchFrom(t, r, base, c.theirs)
			head := branchFrom(t, r, base, c.ours)
			if c.merge {
				if head, err = r.mergeCommit(head, theirs, "Merge memory from origin\n"); err != nil {
					t.Fatal(err)
				}
			}
			remoteTip := theirs
			if c.remoteAtBase {
				remoteTip = base
			}
			have, err := r.ancestry(remoteTip)
			if err != nil {
				t.Fatal(err)
			}
			objs, _, err := r.missingObjects(head, remoteTip, have)
			if err != nil {
				t.Fatal(err)
			}
			objects := func(args ...string) map[string]bool {
				m := map[string]bool{}
				for _, l := range strings.Split(gitOut(t, append([]string{"--git-dir", r.Dir(), "rev-list", "--objects"}, args...)...), "\n") {
					if id, _, _ := strings.Cut(l, " "); id != "" {
						m[id] = true
					}
				}
				return m
			}
			remote := objects(remoteTip.String())
			lacks := objects(head.String(), "--not", remoteTip.String())
			for id := range remote {
				delete(lacks, id) // (--not spares what the edge trees name; older trees are the remote's too)
			}
			sent := map[string]bool{}
			for _, h := range objs {
				id := h.String()
				switch {
				case sent[id]:
					t.Fatalf("%s listed twice", id)
				case remote[id]:
					t.Fatalf("%s listed, the remote has it (%d listed, %d lacked)", id, len(objs), len(lacks))
				}
				sent[id] = true
			}
			for id := range lacks {
				if !sent[id] {
					t.Fatalf("%s lacked by the remote, not listed", id)
				}
			}
			if len(sent) != len(lacks) {
				t.Fatalf("%d listed, the remote lacks %d", len(sent), len(lacks))
			}
		})
	}
}

// TestSyncStoreReadsTreesFromManyGoroutines: goroutines reading the same
// trees from a sync's store at once (one reads, the others wait for it)
// all get each tree whole, and the store keeps each once.
func TestSyncStoreReadsTreesFromManyGoroutines(t *testing.T) {
	for _, n := range []int{2, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := memWith(t, bareRemote(t, t.TempDir(), "remote.git"), ids("g", 300)...)
			var want []*object.Tree
			walk := func(h plumbing.Hash) {}
			walk = func(h plumbing.Hash) {
				tr, err := object.GetTree(r.st, h)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, tr)
				for _, e := range tr.Entries {
					if e.Mode == filemode.Dir {
						walk(e.Hash)
					}
				}
			}
			root, err := r.treeOf(mustHead(t, r))
			if err != nil {
				t.Fatal(err)
			}
			walk(root)
			s, done, err := r.forSync()
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for g := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range want {
						w := want[(i+g*7)%len(want)]
						got, err := s.st.getTree(w.Hash)
						if err != nil {
							errs <- err
							return
						}
						if fmt.Sprint(got.Entries) != fmt.Sprint(w.Entries) {
							errs <- fmt.Errorf("tree %s: %d entries, want %d", w.Hash, len(got.Entries), len(w.Entries))
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if k := len(s.st.memo.trees); k != len(want) {
				t.Fatalf("the memo keeps %d trees, want %d", k, len(want))
			}
			if len(s.st.memo.reading) != 0 {
				t.Fatalf("%d reads left claimed", len(s.st.memo.reading))
			}
		})
	}
}

// TestSyncCountsAndCacheBesidePush: the records a sync brought in and sent
// (worked out beside the push, besidePush) and the ancestry cache (saved
// beside it) are those of main as the sync left it, in each kind of sync,
// a push race included (two moves of main counted, the cache of the last).
func TestSyncCountsAndCacheBesidePush(t *testing.T) {
	cases := []struct {
		name string
		// setup returns the memory to sync; race, when set, runs in the
		// push race hook (once).
		setup                        func(t *testing.T, url string) (r *Repo, race func())
		merged, pushed, rounds       int
		fastForward, merge, upToDate bool
	}{
		{"push only", func(t *testing.T, url string) (*Repo, func()) {
			return memWith(t, url, ids("a", 3)...), nil
		}, 0, 3, 1, false, false, false},
		{"fast-forward", func(t *testing.T, url string) (*Repo, func()) {
			mustSync(t, memWith(t, url, ids("a", 3)...))
			return memWith(t, url), nil
		}, 3, 0, 1, true, false, false},
		{"merge", func(t *testing.T, url string) (*Repo, func()) {
			mustSync(t, memWith(t, url, ids("a", 2)...))
			return memWith(t, url, ids("b", 3)...), nil
		}, 2, 3, 1, false, true, false},
		{"push race", func(t *testing.T, url string) (*Repo, func()) {
			mustSync(t, memWith(t, url, ids("a", 2)...))
			other := memWith(t, url, ids("c", 4)...)
			return memWith(t, url, ids("b", 3)...), func() { mustSync(t, other) }
		}, 6, 3, 2, false, true, false},
		{"up to date", func(t *testing.T, url string) (*Repo, func()) {
			r := memWith(t, url, ids("a", 2)...)
			mustSync(t, r)
			return r, nil
		}, 0, 0, 1, false, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := bareRemote(t, t.TempDir(), "remote.git")
			r, race := c.setup(t, url)
			if race != nil {
				testHookBeforePush = func() {
					testHookBeforePush = nil
					race()
				}
				t.Cleanup(func() { testHookBeforePush = nil })
			}
			before := len(exchangeSet(t, r.Dir()))
			res := mustSync(t, r)
			if res.Merged != c.merged || res.Pushed != c.pushed || res.Rounds != c.rounds ||
				res.FastForward != c.fastForward || res.MergeCommit.IsZero() == c.merge || res.UpToDate != c.upToDate {
				t.Fatalf("got %+v", res)
			}
			if got := len(exchangeSet(t, r.Dir())); got != before+c.merged {
				t.Fatalf("main holds %d exchanges, %d before and %d merged", got, before, c.merged)
			}
			head := mustHead(t, r)
			if res.Head != head || res.RemoteHead != head {
				t.Fatalf("head %s, report %+v", head, res)
			}
			tip, set, ok := r.loadAncestry()
			if !ok || tip != head || !set.has(head) {
				t.Fatalf("ancestry cache: tip %s ok %v, main %s", tip, ok, head)
			}
			want, err := r.ancestry(head)
			if err != nil {
				t.Fatal(err)
			}
			if got := set.all(); len(got) != len(want.all()) {
				t.Fatalf("ancestry cache holds %d commits, main's history %d", len(got), len(want.all()))
			}
			fsck(t, url)
		})
	}
}

// TestUnionTreeWritesOnlyTreesTheRepoLacks: the union merge's tree holds
// every path of both sides (the smaller blob where they differ), every
// tree under it can be read once the batch is written (git fsck --strict
// of a commit naming it), and the batch holds no tree the repo already
// has: a folder only one side changed is that side's tree, named, not
// written again.
func TestUnionTreeWritesOnlyTreesTheRepoLacks(t *testing.T) {
	at := func(dirs, name, v string) Entry {
		p := "ex/" + dirs + "/" + name + ".json"
		return Entry{Path: p, Blob: []byte(`{"id":"` + p + `"` + v + `}`), Message: "m\n\nExchange: " + p + "\n"}
	}
	spread := func(prefix string, n, folders int) []Entry {
		var es []Entry
		for i := range n {
			es = append(es, at(fmt.Sprintf("%x/%x", i%folders, (i/folders)%4), fmt.Sprintf("%s-%d", prefix, i), ""))
		}
		return es
	}
	cases := []struct {
		name   string
		base   []Entry
		a, b   []Entry
		reuseB bool // some folder of the union is b's, as b has it
	}{
		{name: "folders apart", base: spread("base", 40, 16), a: spread("a", 8, 4), b: []Entry{at("c/2", "b1", ""), at("d/3", "b2", "")}, reuseB: true},
		{name: "both sides in every folder", base: spread("base", 40, 16), a: spread("a", 64, 16), b: spread("b", 64, 16)},
		{name: "only b adds", base: spread("base", 40, 16), b: spread("b", 30, 16), reuseB: true},
		{name: "two versions of one record", base: spread("base", 20, 16), a: []Entry{at("1/0", "x", "")}, b: []Entry{at("1/0", "x", `,"v":2`), at("9/1", "y", "")}, reuseB: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "mem.git")
			r, _, err := Init(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Append(c.base, 0); err != nil {
				t.Fatal(err)
			}
			base := mustHead(t, r)
			ca, cb := branchFrom(t, r, base, c.a), branchFrom(t, r, base, c.b)
			ta, err := r.treeOf(ca)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := r.treeOf(cb)
			if err != nil {
				t.Fatal(err)
			}
			b := newBatch()
			h, err := r.unionTree(r.tree, b.put, ta, tb, "", 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, l := range strings.Fields(gitOut(t, "--git-dir", dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")) {
				have[l] = true
			}
			for _, o := range b.order {
				if have[o.String()] {
					t.Fatalf("the batch writes %s again: the repo has it", o)
				}
			}
			if (len(b.order) > 0) != (h != ta && h != tb) {
				t.Fatalf("%d trees written for a union %s of %s and %s", len(b.order), h, ta, tb)
			}
			if err := b.writeTo(r); err != nil {
				t.Fatal(err)
			}
			// The union, path by path, from git's own listing of both sides.
			want := map[string]string{}
			for _, side := range []plumbing.Hash{ta, tb} {
				for _, l := range strings.Split(strings.TrimSpace(gitOut(t, "--git-dir", dir, "ls-tree", "-r", side.String())), "\n") {
					f := strings.Fields(l)
					if old, ok := want[f[3]]; !ok || f[2] < old {
						want[f[3]] = f[2]
					}
				}
			}
			got := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(gitOut(t, "--git-dir", dir, "ls-tree", "-r", h.String())), "\n") {
				f := strings.Fields(l)
				got[f[3]] = f[2]
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("union of %d paths, want %d:\n%v\n%v", len(got), len(want), got, want)
			}
			// Some folder of the union is b's own tree, as b holds it.
			reused := false
			bTrees := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSpace(gitOut(t, "--git-dir", dir, "ls-tree", "-r", "-t", tb.String())), "\n") {
				if f := strings.Fields(l); f[1] == "tree" {
					bTrees[f[2]] = true
				}
			}
			aTrees := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSpace(gitOut(t, "--git-dir", dir, "ls-tree", "-r", "-t", ta.String())), "\n") {
				if f := strings.Fields(l); len(f) > 2 && f[1] == "tree" {
					aTrees[f[2]] = true
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(gitOut(t, "--git-dir", dir, "ls-tree", "-r", "-t", h.String())), "\n") {
				if f := strings.Fields(l); f[1] == "tree" && bTrees[f[2]] && !aTrees[f[2]] {
					reused = true
				}
			}
			if reused != c.reuseB {
				t.Fatalf("a folder of b's own in the union: %v, want %v", reused, c.reuseB)
			}
			commit := strings.TrimSpace(gitOut(t, "--git-dir", dir, "commit-tree", h.String(), "-p", ca.String(), "-p", cb.String(), "-m", "merge"))
			gitOut(t, "--git-dir", dir, "update-ref", "refs/heads/union", commit)
			fsck(t, dir)
		})
	}
}

// TestUnionTreeRecordKey: where the sides hold different blobs at one
// record path, the union keeps the blob of the smallest key, then of the
// smallest hash; it is a total order, so every order of pairwise merges of
// the same versions keeps the same blob (every machine, whatever the order
// of its syncs, gets one tree). Seeded: the seed is logged.
func TestUnionTreeRecordKey(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	r := newRepo(t)
	if _, err := r.Append([]Entry{testEntry("base-a")}, 0); err != nil {
		t.Fatal(err)
	}
	base := mustHead(t, r)
	// The key is the blob's first byte: versions share keys, so the hash
	// decides among them.
	key := func(b []byte) []byte { return b[:1] }
	const path = "ex/x/x.json"
	for round := range 20 {
		n := 2 + rng.Intn(3)
		var trees []plumbing.Hash
		var blobs []plumbing.Hash
		for i := range n {
			blob := []byte(fmt.Sprintf("%c version %d.%d", 'a'+rng.Intn(2), round, i))
			c := branchFrom(t, r, base, []Entry{{Path: path, Blob: blob, Message: "m\n\nExchange: x\n"}})
			th, err := r.treeOf(c)
			if err != nil {
				t.Fatal(err)
			}
			trees = append(trees, th)
			blobs = append(blobs, BlobID(blob))
		}
		// The winner by the rule: the smallest (key, hash).
		want := -1
		for i := range n {
			if want < 0 {
				want = i
				continue
			}
			bi, _ := r.Blob(blobs[i])
			bw, _ := r.Blob(blobs[want])
			if c := bytes.Compare(key(bi), key(bw)); c < 0 || c == 0 && bytes.Compare(blobs[i][:], blobs[want][:]) < 0 {
				want = i
			}
		}
		for range 6 {
			perm := rng.Perm(n)
			acc := trees[perm[0]]
			for _, k := range perm[1:] {
				a, b := acc, trees[k]
				if rng.Intn(2) == 0 {
					a, b = b, a // ours and theirs either way
				}
				bt := newBatch()
				h, err := r.unionTree(r.tree, bt.put, a, b, "", 1, key)
				if err != nil {
					t.Fatal(err)
				}
				if err := bt.writeTo(r); err != nil {
					t.Fatal(err)
				}
				acc = h
			}
			tr, err := object.GetTree(r.st, acc)
			if err != nil {
				t.Fatal(err)
			}
			f, err := tr.File(path)
			if err != nil {
				t.Fatal(err)
			}
			if f.Hash != blobs[want] {
				t.Fatalf("round %d, merges in the order %v: kept %s, want %s (the smallest key, then hash)", round, perm, f.Hash, blobs[want])
			}
		}
	}
	fsck(t, r.dir)
}
