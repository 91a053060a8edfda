package gitstore

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The test binary doubles as a writer process for the multi-process tests.
func TestMain(m *testing.M) {
	if dir := os.Getenv("GITSTORE_TEST_WRITER"); dir != "" {
		os.Exit(writerMain(dir))
	}
	if dir := os.Getenv("GITSTORE_TEST_SYNC"); dir != "" {
		os.Exit(syncMain(dir))
	}
	// A detached repack would outlive a test and race its cleanup;
	// TestBackgroundRepack turns it back on.
	os.Setenv("GIT_MEM_AUTO_REPACK", "0")
	os.Exit(m.Run())
}

// writerMain appends GITSTORE_TEST_N entries named by GITSTORE_TEST_PREFIX,
// one Append call per entry (the worst case for contention).
func writerMain(dir string) int {
	r, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv("GITSTORE_TEST_N"))
	batch, _ := strconv.Atoi(os.Getenv("GITSTORE_TEST_BATCH"))
	if batch <= 0 {
		batch = 1
	}
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
	}
	return 0
}

func testEntry(id string) Entry {
	return Entry{
		Path:    "ex/" + id[len(id)-1:] + "/" + id + ".json",
		Blob:    []byte(`{"id":"` + id + `"}`),
		Message: "stored " + id + "\n\nExchange: " + id + "\n",
		When:    time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
	}
}

func newRepo(t *testing.T) *Repo {
	t.Helper()
	r, created, err := Init(filepath.Join(t.TempDir(), "mem.git"))
	if err != nil || !created {
		t.Fatalf("init: created=%v err=%v", created, err)
	}
	return r
}

func countCommits(t *testing.T, r *Repo) map[string]int {
	t.Helper()
	ids := map[string]int{}
	err := r.Walk(plumbing.ZeroHash, nil, func(c *object.Commit) error {
		for _, line := range strings.Split(c.Message, "\n") {
			if v, ok := strings.CutPrefix(line, "Exchange: "); ok {
				ids[v]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func fsck(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", "--no-dangling").CombinedOutput()
	if err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

func TestInitIsIdempotentAndHeadIsMain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	if _, created, err := Init(dir); err != nil || !created {
		t.Fatalf("first init: %v %v", created, err)
	}
	if _, created, err := Init(dir); err != nil || created {
		t.Fatalf("second init: created=%v err=%v", created, err)
	}
	head, err := os.ReadFile(filepath.Join(dir, "HEAD"))
	if err != nil || strings.TrimSpace(string(head)) != "ref: refs/heads/main" {
		t.Fatalf("HEAD = %q, %v", head, err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "git mem init") {
		t.Fatalf("open missing: %v", err)
	}
}

func TestAppendIsIdempotentAndGitReadsIt(t *testing.T) {
	r := newRepo(t)
	var es []Entry
	for i := 0; i < 40; i++ { // over the pack threshold: one pack
		es = append(es, testEntry(fmt.Sprintf("a-%d", i)))
	}
	es = append(es, testEntry("a-3")) // a duplicate inside the batch
	res, err := r.Append(es, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 40 || res.Present != 1 {
		t.Fatalf("added %d present %d", res.Added, res.Present)
	}
	res, err = r.Append(es[:5], 0) // loose path
	if err != nil || res.Added != 0 || res.Present != 5 {
		t.Fatalf("re-append: %+v %v", res, err)
	}
	res, err = r.Append([]Entry{testEntry("b-1"), testEntry("b-2")}, 0)
	if err != nil || res.Added != 2 {
		t.Fatalf("append loose: %+v %v", res, err)
	}
	fsck(t, r.Dir())
	out, err := exec.Command("git", "--git-dir", r.Dir(), "rev-list", "--count", "main").Output()
	if err != nil || strings.TrimSpace(string(out)) != "42" {
		t.Fatalf("rev-list: %q %v", out, err)
	}
	blob, err := exec.Command("git", "--git-dir", r.Dir(), "cat-file", "blob", "main:ex/7/a-7.json").Output()
	if err != nil || string(blob) != `{"id":"a-7"}` {
		t.Fatalf("cat-file: %q %v", blob, err)
	}
	data, ok, err := r.ReadPath(plumbing.ZeroHash, "ex/7/a-7.json")
	if err != nil || !ok || string(data) != string(blob) {
		t.Fatalf("ReadPath: %q %v %v", data, ok, err)
	}
	date, _ := exec.Command("git", "--git-dir", r.Dir(), "log", "-1", "--format=%aI", "main").Output()
	if strings.TrimSpace(string(date)) != "2026-03-01T10:00:00Z" && strings.TrimSpace(string(date)) != "2026-03-01T10:00:00+00:00" {
		t.Fatalf("author date %q", date)
	}
}

func TestTreesFollowGitOrder(t *testing.T) {
	r := newRepo(t)
	// Names chosen so that bytewise order differs from git's folder order.
	es := []Entry{
		{Path: "x/a.b", Blob: []byte("1"), Message: "1"},
		{Path: "x/a/c", Blob: []byte("2"), Message: "2"},
		{Path: "x/a-", Blob: []byte("3"), Message: "3"},
		{Path: "x/a0", Blob: []byte("4"), Message: "4"},
	}
	if _, err := r.Append(es, 0); err != nil {
		t.Fatal(err)
	}
	fsck(t, r.Dir())
}

func TestGitLockIsNotBroken(t *testing.T) {
	r := newRepo(t)
	if _, err := r.Append([]Entry{testEntry("x-1")}, 0); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.Dir(), "refs", "heads", "main.lock")
	if err := os.WriteFile(lock, []byte("git's own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := r.Append([]Entry{testEntry("x-2")}, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("want a locked error, got %v", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("git's lock was removed: %v", err)
	}
	os.Remove(lock)
	if _, err := r.Append([]Entry{testEntry("x-2")}, 0); err != nil {
		t.Fatal(err)
	}
	if n := len(countCommits(t, r)); n != 2 {
		t.Fatalf("%d commits", n)
	}
}

func TestStaleLockOfDeadWriterIsRecovered(t *testing.T) {
	r := newRepo(t)
	// What a writer killed between taking and releasing the ref lock leaves.
	ours := filepath.Join(r.MemDir(), "main.new")
	if err := os.WriteFile(ours, []byte(strings.Repeat("0", 40)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(r.Dir(), "refs", "heads"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(ours, filepath.Join(r.Dir(), "refs", "heads", "main.lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Append([]Entry{testEntry("s-1")}, time.Second); err != nil {
		t.Fatalf("stale lock not recovered: %v", err)
	}
	fsck(t, r.Dir())
}

func writer(t *testing.T, dir, prefix string, n, batch int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// A background repack would outlive the test and race its cleanup;
	// TestBackgroundRepack covers it.
	cmd.Env = append(os.Environ(), "GIT_MEM_AUTO_REPACK=0", "GITSTORE_TEST_WRITER="+dir, "GITSTORE_TEST_PREFIX="+prefix,
		"GITSTORE_TEST_N="+strconv.Itoa(n), "GITSTORE_TEST_BATCH="+strconv.Itoa(batch))
	return cmd
}

func TestConcurrentWritersLoseNothing(t *testing.T) {
	r := newRepo(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for p := 0; p < 8; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			if out, err := writer(t, r.Dir(), fmt.Sprintf("p%d", p), 50, 1).CombinedOutput(); err != nil {
				errs <- fmt.Errorf("writer %d: %v: %s", p, err, out)
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ids := countCommits(t, r)
	if len(ids) != 400 {
		t.Fatalf("%d distinct exchanges, want 400", len(ids))
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("%s stored %d times", id, n)
		}
	}
	fsck(t, r.Dir())
}

func TestKilledWriterThenRerunStoresEachOnce(t *testing.T) {
	r := newRepo(t)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		cmd := writer(t, r.Dir(), "k", 200, 1+rng.Intn(40))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(5+rng.Intn(60)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	if out, err := writer(t, r.Dir(), "k", 200, 7).CombinedOutput(); err != nil {
		ls, _ := exec.Command("ls", "-la", filepath.Join(r.Dir(), "objects", "pack")).CombinedOutput()
		head, _ := os.ReadFile(filepath.Join(r.Dir(), "refs", "heads", "main"))
		t.Fatalf("re-run: %v: %s\nmain=%s\n%s", err, out, head, ls)
	}
	ids := countCommits(t, r)
	if len(ids) != 200 {
		t.Fatalf("%d distinct, want 200", len(ids))
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("%s stored %d times", id, n)
		}
	}
	fsck(t, r.Dir())
}

// holdRepacks waits for a background repack to end and keeps the next
// from running until the test's repository is removed, as `git mem check`
// holds the lock while it runs git fsck. An Append may have started a
// detached repack that has not taken the lock yet; released at once, the
// lock let it replace packs under the test's git fsck ("packfile … index
// not opened") or write into the repository while the test's temporary
// folder was removed ("directory not empty"): 2 of 40 runs beside other
// tests' load. With the lock held, such a repack finds it taken and exits.
func holdRepacks(t *testing.T, r *Repo) {
	t.Helper()
	unlock, err := r.HoldPacks(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Cleanups run last-registered first, so this runs before
		// t.TempDir's: a repack started after the unlock finds no
		// repository to lock.
		_ = os.RemoveAll(r.Dir())
		unlock()
	})
}

func TestBackgroundRepack(t *testing.T) {
	t.Setenv("GIT_MEM_AUTO_REPACK", "1")
	r := newRepo(t)
	// Loose objects: one small Append per entry.
	for i := 0; i < 700; i++ {
		if _, err := r.Append([]Entry{testEntry(fmt.Sprintf("r-%d", i))}, 0); err != nil {
			t.Fatal(err)
		}
	}
	loose := func() int {
		n := 0
		dirs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "??"))
		for _, d := range dirs {
			ents, _ := os.ReadDir(d)
			n += len(ents)
		}
		return n
	}
	if loose() < looseLimit/2 {
		t.Skipf("only %d loose objects", loose())
	}
	// Crossing the limit started a detached repack; wait for its pack.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if packs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "pack-*.pack")); len(packs) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	holdRepacks(t, r)
	if n := loose(); n >= looseLimit {
		t.Fatalf("%d loose objects left after the background repack", n)
	}
	fsck(t, r.Dir())
	if n := len(countCommits(t, r)); n != 700 {
		t.Fatalf("%d commits", n)
	}
}

func TestBackgroundRepackConsolidatesPacks(t *testing.T) {
	t.Setenv("GIT_MEM_AUTO_REPACK", "1")
	r := newRepo(t)
	for b := 0; b < packLimit; b++ {
		var es []Entry
		for i := 0; i < 2*packThreshold; i++ {
			es = append(es, testEntry(fmt.Sprintf("c%d-%d", b, i)))
		}
		if _, err := r.Append(es, 0); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for r.countPacks() > 1 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	holdRepacks(t, r)
	if n := r.countPacks(); n != 1 {
		t.Fatalf("%d packs after the consolidating repack", n)
	}
	// Reads after the packs were replaced under this process still work.
	if _, ok, err := r.ReadPath(plumbing.ZeroHash, testEntry("c0-1").Path); err != nil || !ok {
		t.Fatalf("read after repack: %v %v", ok, err)
	}
	if _, err := r.Append([]Entry{testEntry("after")}, 0); err != nil {
		t.Fatalf("append after repack: %v", err)
	}
	fsck(t, r.Dir())
}

// Appends and reads go on while background repacks replace the packs under
// this process: nothing fails, nothing is lost.
func TestAppendDuringBackgroundRepacks(t *testing.T) {
	t.Setenv("GIT_MEM_AUTO_REPACK", "1")
	r := newRepo(t)
	for b := 0; b < 4*packLimit; b++ {
		var es []Entry
		for i := 0; i < 2*packThreshold; i++ {
			es = append(es, testEntry(fmt.Sprintf("d%d-%d", b, i)))
		}
		if _, err := r.Append(es, 0); err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		if _, ok, err := r.ReadPath(plumbing.ZeroHash, es[0].Path); err != nil || !ok {
			t.Fatalf("batch %d: read back: %v %v", b, ok, err)
		}
		// What `git mem add` asks before appending the next batch.
		paths := []string{es[0].Path, es[len(es)-1].Path, "ex/0/0/0/missing.json"}
		for k := 0; k < 5; k++ {
			has, err := r.Has(paths)
			if err != nil || !has[0] || !has[1] || has[2] {
				t.Fatalf("batch %d: Has = %v, %v", b, has, err)
			}
		}
	}
	holdRepacks(t, r)
	if n := len(countCommits(t, r)); n != 4*packLimit*2*packThreshold {
		t.Fatalf("%d commits", n)
	}
	fsck(t, r.Dir())
}

// TestReadsWhilePacksReplaced: another process's `git repack -a -d` writes
// one new pack, then deletes the packs this process listed one by one.
// Reads in between find the head commit in a pack still there and an older
// tree in a pack already gone; they must find it in the new pack (found at
// 96,000 of a 100,000-exchange add: "read tree …: packfile not found").
func TestReadsWhilePacksReplaced(t *testing.T) {
	r := newRepo(t)
	packs := func() map[string]bool {
		ents, err := os.ReadDir(filepath.Join(r.Dir(), "objects", "pack"))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".pack") {
				out[strings.TrimSuffix(e.Name(), ".pack")] = true
			}
		}
		return out
	}
	var paths []string
	var first []string // the first batch's pack
	for b := 0; b < 3; b++ {
		var es []Entry
		for i := 0; i < 2*packThreshold; i++ {
			// One folder per batch: its trees stay in that batch's pack.
			e := testEntry(fmt.Sprintf("p%d-%d", b, i))
			e.Path = fmt.Sprintf("ex/b%d/%d.json", b, i)
			es = append(es, e)
		}
		if _, err := r.Append(es, 0); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, es[0].Path, es[len(es)-1].Path)
		if b == 0 {
			for p := range packs() {
				first = append(first, p)
			}
		}
	}
	if len(first) != 1 {
		t.Fatalf("first batch: %d packs, want 1", len(first))
	}
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	blob := func() plumbing.Hash {
		c, err := r.Commit(head)
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.File(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		return f.Hash
	}()
	// A fresh process lists the packs and reads the head commit only.
	if r, err = Open(r.Dir()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(head); err != nil {
		t.Fatal(err)
	}
	// Half-way through `git repack -a -d`: the new pack is there and the
	// first old pack is gone.
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "repack", "-a", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git repack: %v\n%s", err, out)
	}
	for _, ext := range []string{".pack", ".idx"} {
		if err := os.Remove(filepath.Join(r.Dir(), "objects", "pack", first[0]+ext)); err != nil {
			t.Fatal(err)
		}
	}
	has, err := r.Has(paths)
	if err != nil {
		t.Fatalf("Has: %v", err)
	}
	for i, ok := range has {
		if !ok {
			t.Errorf("Has: %s missing", paths[i])
		}
	}
	if _, err := r.Blob(blob); err != nil {
		t.Errorf("Blob: %v", err)
	}
	if _, ok, err := r.ReadPath(plumbing.ZeroHash, paths[1]); err != nil || !ok {
		t.Errorf("ReadPath: %v %v", ok, err)
	}
	fsck(t, r.Dir()) // the repack kept every object the old packs held
}

// A .pack without its .idx (a writer killed between the two renames)
// would stop go-git from reading anything; Open clears an old one.
func TestOrphanPackIsCleared(t *testing.T) {
	r := newRepo(t)
	if _, err := r.Append([]Entry{testEntry("o-1")}, 0); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(r.Dir(), "objects", "pack", "pack-"+strings.Repeat("ab", 20)+".pack")
	if err := os.MkdirAll(filepath.Dir(orphan), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orphan, []byte("PACK"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(orphan, old, old)
	r2, err := Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatal("the orphan pack is still there")
	}
	if _, err := r2.Append([]Entry{testEntry("o-2")}, 0); err != nil {
		t.Fatal(err)
	}
}

// Reads on all cores go on while the pack list is refreshed (what retries
// do when a background repack replaces the packs): go-git keeps that list
// in a map it rebuilds lazily, and `git mem reindex` at 100,000 exchanges
// once panicked in it. Run with -race to see the data race without the lock.
func TestConcurrentReadsWhilePacksRefresh(t *testing.T) {
	r := newRepo(t)
	var paths []string
	for b := 0; b < 3; b++ {
		var es []Entry
		for i := 0; i < packThreshold; i++ {
			e := testEntry(fmt.Sprintf("c%d-%d", b, i))
			e.Path = fmt.Sprintf("ex/c%d/%d.json", b, i)
			es = append(es, e)
		}
		if _, err := r.Append(es, 0); err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			paths = append(paths, e.Path)
		}
	}
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				r.st.refresh()
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(paths); i += 8 {
				if _, ok, err := r.ReadPath(head, paths[i]); err != nil || !ok {
					errs <- fmt.Errorf("ReadPath %s: %v %v", paths[i], ok, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	<-done
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	fsck(t, r.Dir())
}
