// Package gitstore is the memory repo: a bare git repository whose main
// branch holds one commit per stored record. It is the source of truth and
// knows nothing of cards, agents or indexes: it stores messages, trailers and
// blobs, written with go-git plumbing and moved with a git-compatible ref lock.
package gitstore

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Branch is the one branch a memory lives on.
const Branch = "main"

// MainRef is the full name of the memory branch.
const MainRef = plumbing.ReferenceName("refs/heads/" + Branch)

// ErrNotFound means there is no memory repo at the given path.
var ErrNotFound = errors.New("no memory repo")

// ErrLocked means another writer held the memory for longer than the timeout.
var ErrLocked = errors.New("memory repo is locked by another writer")

// NotFoundError names the missing repo and the command that creates it.
type NotFoundError struct{ Dir string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no memory repo at %s: run `git mem init` (or pass --mem-dir)", e.Dir)
}

func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Repo is an open memory repo.
type Repo struct {
	dir  string
	st   *objectStore
	repo *git.Repository
	// MetaPaths, when set, names the record paths that a commit which is
	// not a record (a pin, a link) refers to, from its message; a rewrite
	// that drops one of them drops that commit too, so nothing dangles.
	MetaPaths func(msg string) []string
	// RecordKey, when set, orders two different blobs a sync's union finds
	// at one record path: the smaller key wins, then the smaller blob id
	// (the rule alone when nil). A function of the blob alone, so every
	// machine computes the same union whatever the order of syncs.
	RecordKey func(blob []byte) []byte
	// objects is go-git's cache of decoded objects (DropCaches).
	objects *cache.ObjectLRU
}

// objectStore is the repo's storage with its list of packs guarded. go-git
// loads that list lazily into a map and Reindex drops it, neither safe while
// other goroutines read: `git mem reindex` of 100,000 exchanges, reading on
// all cores while a background repack replaced the packs, panicked inside
// go-git ("assignment to entry in nil map"). Object reads take the read
// lock; the list is loaded, first and on refresh, under the write lock.
// It is loaded on the first read, not on open: a search reads no object,
// and loading a large memory's pack indexes costs a CLI call ~30 ms.
type objectStore struct {
	*filesystem.Storage
	mu     sync.RWMutex
	listed atomic.Bool
	// stale: refresh was called; go-git lists the packs again on its next
	// read through s (read), not at once: most reads are served by the
	// mapped packs, and go-git's listing decodes every pack index (20 MB
	// at 100,000 exchanges, 30–50 ms, up to seven times in one sync).
	stale atomic.Bool
	dir   string // the git dir, for packSet
	// packs are the mapped packs: mapped on first use, dropped on refresh,
	// and held weakly, so that the first garbage collection after the last
	// read unmaps them (a pack that a repack or a purge deleted is not kept
	// on disk by an idle process, such as the MCP server, that mapped it).
	pmu   sync.Mutex
	packs weak.Pointer[packSet]
	// kept holds packs strongly when keepPacks is set (KeepPacks).
	kept      *packSet
	keepPacks bool
	// memo, set on a sync's store only, keeps what the sync read once for
	// the rest of it (readMemo).
	memo *readMemo
}

// readMemo keeps, for the length of one sync, the trees it decoded and the
// stored zlib streams of the objects it read from the packs. A sync reads
// the same trees up to three times — the union merge, the push's walk of
// what the remote lacks, then the push's pack, which sends each object's
// stored stream — and every read of the packs inflates and hashes the
// object again (0.4–0.5 s of the ~3 s CPU of a merge of 1,000 new
// exchanges on each side at 100,000). Objects are immutable by id, so
// nothing kept can go stale; the memo stops keeping at readMemoMax bytes
// (a first sync of a large memory walks every tree once: then each read
// is as before). 256 MB, not 64: at 1,000,000 exchanges a folder of the
// last level holds ~250 files (a 23 KB tree), and the ~3,000 such trees a
// merge of 1,000 on each side reads and writes passed 64 MB, so the push
// read them all again (1.2 s of CPU; docs/BENCHMARKS.md, session 17).
// 384 MB, not 256: since the merge and the push's walk share the memo
// (session 19) that merge keeps ~276 MB by this count, and past 256 MB
// ~3,200 trees were not kept and read again, most by the push's pack
// (inflated and hashed; session 20). The count is an estimate: a
// decoded leaf is its names in one string and its entries (~1.5× its
// encoding, treeFromEntries).
type readMemo struct {
	mu    sync.Mutex
	trees map[plumbing.Hash]*object.Tree
	z     map[plumbing.Hash]storedObject
	// raw holds the commits and trees of the pack the sync fetched, as
	// indexPack inflated and named them: the merge and the ancestry walks
	// read them without inflating or hashing them again.
	raw  map[plumbing.Hash]rawObject
	size int
	// reading: trees one goroutine is reading from the packs now (the
	// merge's and the push walk's run side by side and meet on our side's
	// newest trees); another wants one waits for it instead of
	// inflating it too.
	reading map[plumbing.Hash]chan struct{}
}

// claim returns nil when the caller is to read tree h (it calls done once
// h is kept or not), else a channel closed when the goroutine reading h
// is done.
func (m *readMemo) claim(h plumbing.Hash) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.reading[h]; ok {
		return c
	}
	if m.reading == nil {
		m.reading = map[plumbing.Hash]chan struct{}{}
	}
	m.reading[h] = make(chan struct{})
	return nil
}

func (m *readMemo) done(h plumbing.Hash) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.reading[h]; ok {
		close(c)
		delete(m.reading, h)
	}
}

type rawObject struct {
	typ  plumbing.ObjectType
	data []byte
}

type storedObject struct {
	typ  plumbing.ObjectType
	size int64
	z    []byte
}

const readMemoMax = 384 << 20

func newReadMemo() *readMemo {
	return &readMemo{trees: map[plumbing.Hash]*object.Tree{}, z: map[plumbing.Hash]storedObject{}, raw: map[plumbing.Hash]rawObject{}}
}

// keepRaw records object h's content, named by indexPack.
func (m *readMemo) keepRaw(h plumbing.Hash, typ plumbing.ObjectType, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.size+len(data) > readMemoMax {
		return
	}
	m.size += len(data)
	m.raw[h] = rawObject{typ, data}
}

func (m *readMemo) rawObject(h plumbing.Hash) (rawObject, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.raw[h]
	return o, ok
}

// used is what the memo keeps, by its count.
func (m *readMemo) used() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.size
}

func (m *readMemo) tree(h plumbing.Hash) *object.Tree {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.trees[h]
}

func (m *readMemo) stored(h plumbing.Hash) (storedObject, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.z[h]
	return o, ok
}

// keep records tree t (its encoded size n) and, when z is set, its stored
// stream.
func (m *readMemo) keep(t *object.Tree, n int, z []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Decoded, a tree costs about twice its encoding (names as strings,
	// entries as structs).
	cost := 2*n + len(z)
	if m.size+cost > readMemoMax {
		return
	}
	m.size += cost
	m.trees[t.Hash] = t
	if z != nil {
		m.z[t.Hash] = storedObject{typ: plumbing.TreeObject, size: int64(n), z: z}
	}
}

func newObjectStore(st *filesystem.Storage, dir string) *objectStore {
	return &objectStore{Storage: st, dir: dir}
}

// packSet returns the mapped packs, mapping them on first use; stale, it
// lists them again when the pack folder changed since they were listed.
func (s *objectStore) packSet(stale *packSet) *packSet {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	ps := s.packs.Value()
	if ps != nil && ps == stale {
		st, err := os.Stat(filepath.Join(s.dir, "objects", "pack"))
		if err != nil || st.ModTime().Equal(ps.dirTime) {
			return nil
		}
		ps = nil
	}
	if ps == nil {
		ps = openPackSet(s.dir)
		s.packs = weak.Make(ps)
	}
	return s.keptLocked(ps)
}

// keptLocked is ps, held between reads when KeepPacks asked for it (s.pmu
// held).
func (s *objectStore) keptLocked(ps *packSet) *packSet {
	if s.keepPacks {
		s.kept = ps
	}
	return ps
}

// dropPacks makes the next read map the packs again.
func (s *objectStore) dropPacks() {
	s.pmu.Lock()
	s.packs, s.kept = weak.Pointer[packSet]{}, nil
	s.pmu.Unlock()
}

// verified is packSet.verified, listing the packs again once when the
// object is not in those listed and the folder changed (a fetch, another
// writer).
func (s *objectStore) verified(h plumbing.Hash) (plumbing.ObjectType, []byte, bool) {
	ps := s.packSet(nil)
	if typ, data, ok := ps.verified(h); ok {
		return typ, data, true
	}
	if _, _, found := ps.find(h); found {
		return 0, nil, false // there, but not readable here: go-git's turn
	}
	if ps = s.packSet(ps); ps == nil {
		return 0, nil, false
	}
	return ps.verified(h)
}

// stored is packSet.stored over the listed packs (no second listing: a
// miss is deflated again by the caller).
func (s *objectStore) stored(h plumbing.Hash) (plumbing.ObjectType, int64, []byte, bool) {
	return s.packSet(nil).stored(h)
}

// memoStored is the stored stream of h kept by the sync's memo.
func (s *objectStore) memoStored(h plumbing.Hash) (storedObject, bool) {
	if s.memo == nil {
		return storedObject{}, false
	}
	return s.memo.stored(h)
}

// tree returns the entries of tree h as read from the mapped packs (see
// packSet); ok is false when they cannot give it, and the caller reads it
// through go-git.
// The entries are decoded by decodeTreeEntries (no go-git Tree, one string
// for all the names): an add of 1,000 at 1,000,000 exchanges reads ~1,000
// leaf trees of ~244 entries, and go-git's decoding of them was about a
// third of that read (docs/BENCHMARKS.md, session 23).
func (s *objectStore) tree(h plumbing.Hash) ([]object.TreeEntry, bool) {
	typ, data, ok := s.verified(h)
	if !ok || typ != plumbing.TreeObject {
		return nil, false
	}
	if es, fast := decodeTreeEntries(data); fast {
		return es, true
	}
	mo, _ := treeObject(typ, data, true)
	t, ok := s.decodeTree(h, mo)
	if !ok {
		return nil, false
	}
	return t.Entries, true
}

// fastTree is tree h decoded from the mapped packs' bytes; it reads its
// subtrees from s, as GetTree's does.
func (s *objectStore) fastTree(h plumbing.Hash) (*object.Tree, bool) {
	mo, ok := treeObject(s.verified(h))
	if !ok {
		return nil, false
	}
	return s.decodeTree(h, mo)
}

// decodeTree is tree h from its object mo, its subtrees read from s.
func (s *objectStore) decodeTree(h plumbing.Hash, mo plumbing.EncodedObject) (*object.Tree, bool) {
	t, err := object.DecodeTree(s, mo)
	if err != nil {
		return nil, false
	}
	t.Hash = h
	return t, true
}

// memoTree is fastTree for a sync's store: the tree is read with its
// stored stream (packSet.readStored) and both are kept in the memo.
func (s *objectStore) memoTree(h plumbing.Hash) (*object.Tree, bool) {
	var typ plumbing.ObjectType
	var data, z []byte
	var ok bool
	if o, found := s.memo.rawObject(h); found {
		typ, data, ok = o.typ, o.data, true
	} else if typ, data, z, ok = s.packSet(nil).readStored(h); !ok {
		return nil, false // fastTree, which lists the packs again if need be
	}
	if typ != plumbing.TreeObject {
		return nil, false
	}
	var t *object.Tree
	if es, fast := decodeTreeEntries(data); fast {
		t, ok = treeFromEntries(s, h, es)
	} else {
		mo, _ := treeObject(typ, data, true)
		t, ok = s.decodeTree(h, mo)
	}
	if ok {
		s.memo.keep(t, len(data), z)
	}
	return t, ok
}

// keepTree puts tree h, just written by the sync (the union merge's) with
// entries (sorted, as written) in size bytes, in the memo, so that the
// push's walk does not read it back; a no-op on any other store.
func (s *objectStore) keepTree(h plumbing.Hash, entries []object.TreeEntry, size int) {
	if s.memo == nil {
		return
	}
	if t, ok := treeFromEntries(s, h, entries); ok {
		s.memo.keep(t, size, nil)
	}
}

// getTree is object.GetTree, reading the tree from the mapped packs when
// they can give it.
func (s *objectStore) getTree(h plumbing.Hash) (*object.Tree, error) { return s.readTree(h, true) }

// readUnclaimed is getTree without the memo's claim: no other reader
// waits for this one (the warm-up's, which the sync stops without waiting
// for it); at worst a tree is read by both.
func (s *objectStore) readUnclaimed(h plumbing.Hash) (*object.Tree, error) {
	return s.readTree(h, false)
}

// readTree reads tree h from the memo, the mapped packs or go-git. With
// claim, a reader that finds h being read by another waits for it, and
// others wait for this one.
func (s *objectStore) readTree(h plumbing.Hash, claim bool) (*object.Tree, error) {
	if s.memo != nil {
		if t := s.memo.tree(h); t != nil {
			return t, nil
		}
		if !claim {
			if t, ok := s.memoTree(h); ok {
				return t, nil
			}
		} else if wait := s.memo.claim(h); wait != nil {
			<-wait
			if t := s.memo.tree(h); t != nil {
				return t, nil
			}
		} else {
			t, ok := s.memoTree(h)
			s.memo.done(h)
			if ok {
				return t, nil
			}
		}
	}
	if t, ok := s.fastTree(h); ok {
		return t, nil
	}
	return object.GetTree(s, h)
}

// read takes the read lock, loading the pack list first if need be.
func (s *objectStore) read() (unlock func()) {
	if !s.listed.Load() || s.stale.Load() {
		s.mu.Lock()
		if !s.listed.Load() || s.stale.Load() {
			s.load()
		}
		s.mu.Unlock()
	}
	s.mu.RLock()
	return s.mu.RUnlock
}

// load lists the packs on disk now; the caller holds the write lock. A
// pack deleted between listing and reading its index (a repack finishing)
// leaves the list partial: it is read again, a few times, so the objects of
// the packs after it are not missed. Whatever the outcome the list stays
// set, so readers never load it themselves, unguarded; a read that still
// misses is retried (Repo.retry) with a fresh list.
func (s *objectStore) load() {
	s.dropPacks() // listed again on next use
	s.stale.Store(false)
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(5 * time.Millisecond)
		}
		s.Storage.ObjectStorage.Reindex()
		// Any packed lookup loads the list; the zero id is never found.
		err := s.Storage.ObjectStorage.HasEncodedObject(plumbing.ZeroHash)
		if err == nil || errors.Is(err, plumbing.ErrObjectNotFound) {
			break
		}
	}
	s.listed.Store(true)
}

// refresh makes the storage list the packs on disk now.
// (The mapped packs at once, go-git's list on its next read through s.)
func (s *objectStore) refresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropPacks()
	s.stale.Store(true)
}

// EncodedObject reads h from the mapped packs (checked against its id,
// see packSet), else through go-git (a loose object, a pack listed
// since).
func (s *objectStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if s.memo != nil {
		if o, ok := s.memo.rawObject(h); ok && (t == plumbing.AnyObject || t == o.typ) {
			mo := &plumbing.MemoryObject{}
			mo.SetType(o.typ)
			if _, err := mo.Write(o.data); err == nil {
				return mo, nil
			}
		}
	}
	if typ, data, ok := s.verified(h); ok && (t == plumbing.AnyObject || t == typ) {
		mo := &plumbing.MemoryObject{}
		mo.SetType(typ)
		if _, err := mo.Write(data); err == nil {
			return mo, nil
		}
	}
	if s.absent(h) {
		return nil, plumbing.ErrObjectNotFound
	}
	defer s.read()()
	return s.Storage.EncodedObject(t, h)
}

func (s *objectStore) HasEncodedObject(h plumbing.Hash) error {
	if _, _, found := s.packSet(nil).find(h); found {
		return nil
	}
	if s.absent(h) {
		return plumbing.ErrObjectNotFound
	}
	defer s.read()()
	return s.Storage.HasEncodedObject(h)
}

// absent reports that h is in no pack the folder holds now (every one
// mapped) and not loose, in a
// memory without alternates: go-git would say it is not found, but only
// after decoding every pack index into its own tables, the first time a
// store asks it anything — 0.4 s of CPU at 1,000,000 exchanges (29 packs)
// for the one question a fetch asks it: whether the remote's new tip is
// here (go-git's getWants; docs/BENCHMARKS.md, session 17). false means
// go-git answers, as before.
func (s *objectStore) absent(h plumbing.Hash) bool {
	ps := s.packSet(nil)
	if _, _, found := ps.find(h); found || len(ps.packs) != len(ps.names) {
		return false // there, or a pack not mapped here (go-git reads it)
	}
	// Loose (most reads that get here: an add of a few exchanges writes
	// loose objects), or alternates: asked first, a stat each, before the
	// listing of the pack folder.
	hex := h.String()
	for _, p := range []string{filepath.Join(s.dir, "objects", hex[:2], hex[2:]), filepath.Join(s.dir, "objects", "info", "alternates")} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	// Every pack index in the folder now is one of the set's (not a pack
	// come since, nor one under git's temporary name, which go-git reads).
	ents, err := os.ReadDir(filepath.Join(s.dir, "objects", "pack"))
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".idx") && !slices.Contains(ps.names, filepath.Join(s.dir, "objects", "pack", e.Name())) {
			return false
		}
	}
	return true
}

func (s *objectStore) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	defer s.read()()
	return s.Storage.EncodedObjectSize(h)
}

// Dir is the git dir of the memory.
func (r *Repo) Dir() string { return r.dir }

// MemDir is git mem's own folder under the git dir (config, indexes, caches,
// logs, queue, locks). Nothing in it is ever committed or pushed.
func (r *Repo) MemDir() string { return filepath.Join(r.dir, "mem") }

// Git gives read access to the underlying go-git repository.
func (r *Repo) Git() *git.Repository { return r.repo }

// Storage gives access to the object storage (for packages like sync).
func (r *Repo) Storage() *filesystem.Storage { return r.st.Storage }

// Init creates a bare memory repo at dir with HEAD → main. Running it on an
// existing memory repo is harmless: created reports whether anything was made.
func Init(dir string) (r *Repo, created bool, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, false, err
	}
	if r, err := Open(dir); err == nil {
		return r, false, nil
	} else if !errors.Is(err, ErrNotFound) {
		return nil, false, err
	}
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return nil, false, fmt.Errorf("init memory at %s: a file is in the way", dir)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) > 0 {
			return nil, false, fmt.Errorf("init memory at %s: the folder is not empty and not a git repo; choose another --mem-dir", dir)
		}
	}
	_, err = git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		Bare:        true,
		InitOptions: git.InitOptions{DefaultBranch: MainRef},
	})
	if err != nil {
		return nil, false, fmt.Errorf("init memory at %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "mem"), 0o755); err != nil {
		return nil, false, err
	}
	// Memory commits are written by git mem, which packs them itself; a user's
	// git command must not start a surprise `gc --auto` in the memory.
	if gitCLI() != "" {
		_ = exec.Command("git", "--git-dir", dir, "config", "gc.auto", "0").Run()
		_ = exec.Command("git", "--git-dir", dir, "config", "core.logAllRefUpdates", "false").Run()
	}
	r, err = Open(dir)
	return r, err == nil, err
}

func gitCLI() string {
	p, _ := exec.LookPath("git")
	return p
}

// Open opens the memory repo at dir (a bare repo, or a clone made with
// `git clone --bare`).
func Open(dir string) (*Repo, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "objects")); err != nil {
		if _, err2 := os.Stat(filepath.Join(dir, ".git", "objects")); err2 == nil {
			return nil, fmt.Errorf("%s is a work tree, not a memory repo: point --mem-dir at a bare memory repo made by `git mem init`", dir)
		}
		return nil, &NotFoundError{Dir: dir}
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return nil, &NotFoundError{Dir: dir}
	}
	removeOrphanPacks(dir)
	objects := cache.NewObjectLRU(32 << 20)
	st := newObjectStore(filesystem.NewStorageWithOptions(newPackFS(dir), objects, filesystem.Options{}), dir)
	repo, err := git.Open(st, nil)
	if err != nil {
		if errors.Is(err, git.ErrRepositoryNotExists) {
			return nil, &NotFoundError{Dir: dir}
		}
		return nil, fmt.Errorf("open memory at %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "mem"), 0o755); err != nil {
		return nil, fmt.Errorf("open memory at %s: %w", dir, err)
	}
	return &Repo{dir: dir, st: st, repo: repo, objects: objects}, nil
}

// DropCaches empties the cache of decoded objects: a long-lived process
// calls it after a forget, whose commits and blobs it may hold.
func (r *Repo) DropCaches() { r.objects.Clear() }

// Head returns the commit main points at, or the zero hash for an empty memory.
func (r *Repo) Head() (plumbing.Hash, error) {
	return readRef(r.dir, MainRef)
}

// readRef reads a ref the way git does: the loose file first, then packed-refs.
func readRef(dir string, name plumbing.ReferenceName) (plumbing.Hash, error) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(string(name))))
	if err == nil {
		s := strings.TrimSpace(string(b))
		if plumbing.IsHash(s) {
			return plumbing.NewHash(s), nil
		}
		return plumbing.ZeroHash, fmt.Errorf("ref %s holds %q, not a commit id", name, s)
	}
	if !os.IsNotExist(err) {
		return plumbing.ZeroHash, err
	}
	pb, err := os.ReadFile(filepath.Join(dir, "packed-refs"))
	if os.IsNotExist(err) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for _, line := range strings.Split(string(pb), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[1] == string(name) && plumbing.IsHash(f[0]) {
			return plumbing.NewHash(f[0]), nil
		}
	}
	return plumbing.ZeroHash, nil
}

// Commit reads one commit.
func (r *Repo) Commit(h plumbing.Hash) (*object.Commit, error) {
	var c *object.Commit
	err := r.retry(func() (err error) {
		c, err = object.GetCommit(r.st, h)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	return c, nil
}

// ResolveCommit turns a full or abbreviated commit id into a hash.
func (r *Repo) ResolveCommit(rev string) (plumbing.Hash, error) {
	if plumbing.IsHash(rev) {
		return plumbing.NewHash(rev), nil
	}
	h, err := r.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("no commit %q in the memory", rev)
	}
	return *h, nil
}

// ReadPath reads the blob at path in the tree of commit at (zero = main).
// ok is false when the path does not exist.
func (r *Repo) ReadPath(at plumbing.Hash, path string) (data []byte, ok bool, err error) {
	err = r.retry(func() (err error) {
		data, ok, err = r.readPath(at, path)
		return err
	})
	return data, ok, err
}

// retryBudget bounds the retries of one read.
const retryBudget = 2 * time.Second

// retry runs fn again with a fresh list of packs while it fails, for up to
// retryBudget in all: a background repack or a purge replaces the packs this
// process listed, deleting them one by one (git's own readers re-scan the
// pack folder the same way). A real error costs that wait once. It is the
// one retry layer of a read: functions called inside fn do not retry.
func (r *Repo) retry(fn func() error) error {
	err := fn()
	deadline := time.Now().Add(retryBudget)
	for i := 0; err != nil && time.Now().Before(deadline); i++ {
		time.Sleep(min(time.Duration(10+10*i)*time.Millisecond, time.Until(deadline)))
		r.st.refresh()
		err = fn()
	}
	return err
}

func (r *Repo) readPath(at plumbing.Hash, path string) (data []byte, ok bool, err error) {
	if at.IsZero() {
		if at, err = r.Head(); err != nil || at.IsZero() {
			return nil, false, err
		}
	}
	// Commit's own retry would nest inside ReadPath's (48 s to fail with
	// the head object missing): read it plainly here.
	c, err := object.GetCommit(r.st, at)
	if err != nil {
		return nil, false, fmt.Errorf("read commit %s: %w", at, err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, false, fmt.Errorf("read tree of %s: %w", at, err)
	}
	f, err := t.File(path)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s at %s: %w", path, at, err)
	}
	s, err := f.Contents()
	if err != nil {
		return nil, false, fmt.Errorf("read %s at %s: %w", path, at, err)
	}
	return []byte(s), true, nil
}

// packFS shows go-git the packs git reads, no more, no less:
//
//   - a .pack whose .idx is not there yet is hidden: git renames a new
//     pack's .pack before its .idx, and go-git refuses to read any object
//     while one .pack lacks its .idx ("object not found" for the whole
//     history, seen after a `git repack` was killed between the renames);
//   - a `.tmp-<pid>-pack-<hash>.pack` with its .idx, left by a `git
//     repack` killed before it renamed them, is a pack to git (it lists
//     packs by their .idx), whose next `repack -d` then deletes the loose
//     copies of its objects: go-git sees it as pack-<hash> too, or those
//     objects would be unreadable here (found by the kill loop).
type packFS struct{ billy.Filesystem }

func newPackFS(dir string) billy.Filesystem { return packFS{osfs.New(dir)} }

var packDir = filepath.Join("objects", "pack")

// tmpPackHash parses git's temporary pack names (.tmp-<pid>-pack-<hash>.<ext>).
func tmpPackHash(name string) (hash, ext string, ok bool) {
	if !strings.HasPrefix(name, ".tmp-") {
		return "", "", false
	}
	i := strings.Index(name, "-pack-")
	if i < 0 {
		return "", "", false
	}
	rest := name[i+len("-pack-"):]
	dot := strings.IndexByte(rest, '.')
	if dot != 40 || !plumbing.IsHash(rest[:40]) {
		return "", "", false
	}
	return rest[:40], rest[dot:], true
}

type renamedInfo struct {
	os.FileInfo
	name string
}

func (r renamedInfo) Name() string { return r.name }

func (p packFS) ReadDir(dir string) ([]os.FileInfo, error) {
	ents, err := p.Filesystem.ReadDir(dir)
	if err != nil || filepath.Clean(dir) != packDir {
		return ents, err
	}
	have := map[string]bool{}
	for _, e := range ents {
		have[e.Name()] = true
	}
	var out []os.FileInfo
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".pack") && !have[strings.TrimSuffix(n, ".pack")+".idx"] {
			continue
		}
		if h, ext, ok := tmpPackHash(n); ok && (ext == ".pack" || ext == ".idx") {
			base := strings.TrimSuffix(n, ext)
			if have[base+".pack"] && have[base+".idx"] && !have["pack-"+h+ext] {
				out = append(out, renamedInfo{e, "pack-" + h + ext})
			}
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// tmpTwin is the temporary file standing for objects/pack/pack-<hash>.ext
// when only git's temporary copy exists.
func (p packFS) tmpTwin(name string) (string, bool) {
	dir, base := filepath.Split(filepath.Clean(name))
	if filepath.Clean(dir) != packDir || !strings.HasPrefix(base, "pack-") {
		return "", false
	}
	if _, err := p.Filesystem.Stat(name); err == nil {
		return "", false
	}
	ents, err := p.Filesystem.ReadDir(packDir)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		if h, ext, ok := tmpPackHash(e.Name()); ok && "pack-"+h+ext == base {
			return filepath.Join(packDir, e.Name()), true
		}
	}
	return "", false
}

func (p packFS) Open(name string) (billy.File, error) {
	if t, ok := p.tmpTwin(name); ok {
		return p.Filesystem.Open(t)
	}
	return p.Filesystem.Open(name)
}

func (p packFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag == os.O_RDONLY {
		if t, ok := p.tmpTwin(name); ok {
			return p.Filesystem.OpenFile(t, flag, perm)
		}
	}
	return p.Filesystem.OpenFile(name, flag, perm)
}

func (p packFS) Stat(name string) (os.FileInfo, error) {
	if t, ok := p.tmpTwin(name); ok {
		fi, err := p.Filesystem.Stat(t)
		if err == nil {
			return renamedInfo{fi, filepath.Base(name)}, nil
		}
		return fi, err
	}
	return p.Filesystem.Stat(name)
}
