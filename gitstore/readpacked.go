package gitstore

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/zlib"
)

// ReadPathsPacked is ReadPaths read in this process from the mapped packs
// (packSet) and the loose objects, with no git process: what a search's exact-recall tier reads
// back (ten exchanges). A `git cat-file --batch` started for it cost ~1 ms
// of CPU to start and ~1.3 ms to read the ten (its pack indexes opened
// afresh), on two cores beside the two scoring workers, in every search,
// cold or warm (docs/BENCHMARKS.md, session 16); here the commit, the five
// trees down to the file and the blob are each found in the pack indexes,
// inflated and hashed again (every one must be the id asked for, so the
// bytes are git's).
//
// The packs are the folder's as listed now (currentPackSet): a read never
// uses a set mapped before a repack, a purge or a fetch changed the
// folder. complete is false when any request cannot be read so (an object
// neither in those packs nor loose, or unreadable here, a commit that is not one, a path through
// anything but trees to a plain file, the zero commit): the caller then
// reads them all through ReadPaths, which answers as before. A file that a
// commit's tree, read and hashed here, does not hold is ok[i] false, as
// ReadPath says.
func (r *Repo) ReadPathsPacked(reqs []PathAt) (data [][]byte, ok []bool, complete bool) {
	ps := r.st.currentPackSet()
	defer runtime.KeepAlive(ps)
	data, ok = make([][]byte, len(reqs)), make([]bool, len(reqs))
	// Two goroutines, each reading every other request: a search's ten
	// exchanges took 8–11 ms of wall at 1,000,000 exchanges one after the
	// other on one core while the other idled (docs/BENCHMARKS.md,
	// session 24). Each request's answer is its own; the delta bases they
	// share are behind the set's lock.
	var bad atomic.Bool
	// A process that keeps its packs (the warm search process) reads again
	// what it read: its reads keep their delta bases (object). One that
	// does not reads its batch once: its chains go through two buffers of
	// each goroutine and keep nothing (objectOnce).
	r.st.pmu.Lock()
	once := !r.st.keepPacks
	r.st.pmu.Unlock()
	read := func(first int) {
		var bufs *[2][]byte
		if once {
			bufs = new([2][]byte)
		}
		for i := first; i < len(reqs) && !bad.Load(); i += 2 {
			d, found, good := ps.readPath(reqs[i].Commit, reqs[i].Path, bufs)
			if !good {
				bad.Store(true)
				return
			}
			data[i], ok[i] = d, found
		}
	}
	if len(reqs) < 2 {
		read(0)
	} else {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			read(1)
		}()
		read(0)
		wg.Wait()
	}
	if bad.Load() {
		return nil, nil, false
	}
	return data, ok, true
}

// readPath reads path in the tree of commit at (see ReadPathsPacked);
// good is false when it cannot tell. bufs, when not nil, are objectOnce's.
func (s *packSet) readPath(at plumbing.Hash, path string, bufs *[2][]byte) (data []byte, found, good bool) {
	if at.IsZero() || path == "" {
		return nil, false, false
	}
	typ, c, near, ok := s.pathObject(at, nil, bufs)
	if !ok || typ != plumbing.CommitObject || len(c) < 46 || string(c[:5]) != "tree " || c[45] != '\n' ||
		!plumbing.IsHash(string(c[5:45])) {
		return nil, false, false
	}
	cur := plumbing.NewHash(string(c[5:45]))
	for {
		name, rest, last := path, "", true
		if i := strings.IndexByte(path, '/'); i >= 0 {
			name, rest, last = path[:i], path[i+1:], false
		}
		if name == "" {
			return nil, false, false
		}
		typ, t, p, ok := s.pathObject(cur, near, bufs)
		if !ok || typ != plumbing.TreeObject {
			return nil, false, false
		}
		if p != nil {
			near = p
		}
		mode, h, in, good := treeEntry(t, name)
		switch {
		case !good:
			return nil, false, false
		case !in:
			return nil, false, true // not in a tree read here: absent
		case !last && mode == "40000":
			cur, path = h, rest
		case last && (mode == "100644" || mode == "100755"):
			typ, b, _, ok := s.pathObject(h, near, bufs)
			if !ok || typ != plumbing.BlobObject {
				return nil, false, false
			}
			return b, true, true
		default: // a folder, a link, a submodule, a file on the way
			return nil, false, false
		}
	}
}

// pathObject is object h read and hashed again (see verified): from the
// packs, pack near first, else from its loose file, where an add of a few
// exchanges writes its objects (p is then nil).
func (s *packSet) pathObject(h plumbing.Hash, near *mappedPack, bufs *[2][]byte) (typ plumbing.ObjectType, data []byte, p *mappedPack, ok bool) {
	if typ, data, p, ok = s.verifiedNearOnce(h, near, bufs); ok {
		return typ, data, p, true
	}
	typ, data, ok = readLoose(s.dir, h)
	return typ, data, nil, ok
}

// readLoose reads the loose object h of the repo at dir: ok only when its
// content hashes to h.
func readLoose(dir string, h plumbing.Hash) (typ plumbing.ObjectType, data []byte, ok bool) {
	hex := h.String()
	z, err := os.ReadFile(filepath.Join(dir, "objects", hex[:2], hex[2:]))
	if err != nil {
		return 0, nil, false
	}
	var zr io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(bytes.NewReader(z), nil); err != nil {
			return 0, nil, false
		}
	} else if zr, err = zlib.NewReader(bytes.NewReader(z)); err != nil {
		return 0, nil, false
	}
	defer zlibReaders.Put(zr)
	// As inflate: deflate expands at most ~1,032 times.
	raw, err := io.ReadAll(io.LimitReader(zr, int64(len(z))*1100+1024))
	if err != nil {
		return 0, nil, false
	}
	head, body, found := bytes.Cut(raw, []byte{0})
	name, size, _ := strings.Cut(string(head), " ")
	n, err := strconv.Atoi(size)
	if !found || err != nil || n != len(body) {
		return 0, nil, false
	}
	switch typ, _ = plumbing.ParseObjectType(name); typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return 0, nil, false
	}
	if objectHash(typ, body) != h {
		return 0, nil, false
	}
	return typ, body, true
}

// treeEntry finds name in the encoded tree t (entries "mode name\0id");
// good is false when t does not parse.
func treeEntry(t []byte, name string) (mode string, h plumbing.Hash, in, good bool) {
	for len(t) > 0 {
		sp := bytes.IndexByte(t, ' ')
		if sp <= 0 {
			return "", h, false, false
		}
		nul := bytes.IndexByte(t[sp+1:], 0)
		if nul < 0 || len(t) < sp+1+nul+1+20 {
			return "", h, false, false
		}
		n := t[sp+1 : sp+1+nul]
		id := t[sp+1+nul+1 : sp+1+nul+1+20]
		if string(n) == name {
			copy(h[:], id)
			return string(t[:sp]), h, true, true
		}
		t = t[sp+1+nul+1+20:]
	}
	return "", h, false, true
}

// currentPackSet is the mapped packs when their listing is the pack
// folder's now, else the packs mapped afresh.
func (s *objectStore) currentPackSet() *packSet {
	names := listPacks(s.dir)
	s.pmu.Lock()
	defer s.pmu.Unlock()
	ps := s.packs.Value()
	if ps == nil || !slices.Equal(ps.names, names) {
		ps = openPackSet(s.dir)
		s.packs = weak.Make(ps)
	}
	return s.keptLocked(ps)
}

// KeepPacks makes r hold the packs that ReadPathsPacked mapped between
// reads, rather than let the next garbage collection unmap them: the warm
// search process, whose searches would otherwise map the packs again
// whenever a collection ran in between. The holder must call
// ReleaseStalePacks periodically: nothing else lets go of a set whose packs
// a repack or a purge deleted.
func (r *Repo) KeepPacks() {
	r.st.pmu.Lock()
	r.st.keepPacks = true
	r.st.pmu.Unlock()
}

// ReleasePacks lets go of the mapped packs (kept or not): the next read
// maps them again. The warm search process calls it with an index it lets
// go of, so that nothing read for that index (delta bases included) stays.
func (r *Repo) ReleasePacks() { r.st.dropPacks() }

// ReleaseStalePacks lets go of the mapped packs when the pack folder no
// longer lists the same packs (a repack, a purge, a fetch), and says
// whether it did: the caller collects the garbage then, which unmaps them
// once no read uses them (a purged pack is not kept on disk by a mapping).
func (r *Repo) ReleaseStalePacks() bool {
	s := r.st
	names := listPacks(s.dir)
	s.pmu.Lock()
	defer s.pmu.Unlock()
	ps := s.packs.Value()
	if (ps == nil || slices.Equal(ps.names, names)) && (s.kept == nil || slices.Equal(s.kept.names, names)) {
		return false
	}
	s.packs, s.kept = weak.Pointer[packSet]{}, nil
	return true
}
