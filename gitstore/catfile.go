package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// PathAt names a file in the tree of a commit.
type PathAt struct {
	Commit plumbing.Hash
	Path   string
}

// useCatFile lets tests compare ReadPaths with and without git.
var useCatFile = true

// ReadPaths reads many files at once, each as ReadPath would: data[i] is
// the blob at reqs[i].Path in the tree of reqs[i].Commit, ok[i] false when
// there is none.
//
// Read one by one through go-git, a path costs a walk down five trees and
// a reopen of the pack for each object (KeepDescriptors is off: go-git's
// open packs are not safe to share between goroutines), which was 82 s of
// a 185 s reindex of 100,000 exchanges. Here one `git cat-file --batch`
// process resolves every path with its packs open, requests written while
// the answers are read. Without git, or when the process fails, the rest is
// read through ReadPath; so is a path git reports missing, so that a
// missing commit stays an error and a missing file a plain not-found.
func (r *Repo) ReadPaths(reqs []PathAt) (data [][]byte, ok []bool, err error) {
	data, ok = make([][]byte, len(reqs)), make([]bool, len(reqs))
	var ans []answer
	if useCatFile && len(reqs) > 1 && gitCLI() != "" {
		var raw [][]byte
		if raw, ans, err = r.batchObjects(reqs); err == nil {
			data = raw
		} else {
			ans = nil // read them all below, as go-git reads them
		}
	}
	for i, q := range reqs {
		switch {
		case ans != nil && ans[i].found:
			ok[i] = ans[i].typ == "blob"
			if !ok[i] {
				data[i] = nil
			}
		default:
			if data[i], ok[i], err = r.ReadPath(q.Commit, q.Path); err != nil {
				return nil, nil, err
			}
		}
	}
	return data, ok, nil
}

// catFile is a `git cat-file --batch` process: one use (batchObjects).
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out io.ReadCloser
}

func (r *Repo) newCatFile() (*catFile, error) {
	c := &catFile{cmd: exec.Command("git", "--git-dir", r.dir, "cat-file", "--batch", "--buffer")}
	c.cmd.Env = readerEnv()
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if c.out, err = c.cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	return c, nil
}

// batchObjects reads reqs through a git process of its own.
func (r *Repo) batchObjects(reqs []PathAt) ([][]byte, []answer, error) {
	c, err := r.newCatFile()
	if err != nil {
		return nil, nil, err
	}
	return c.batchObjects(reqs)
}

// answer is what git cat-file said of one object.
type answer struct {
	found bool
	typ   string
}

// batchObjects reads each reqs[i] (the commit itself when Path is "")
// through c, the requests written while the answers are read, and ends c.
func (c *catFile) batchObjects(reqs []PathAt) (data [][]byte, ans []answer, err error) {
	cmd, in, out := c.cmd, c.in, c.out
	go func() {
		bw := bufio.NewWriterSize(in, 64<<10)
		for _, q := range reqs {
			bw.WriteString(q.Commit.String())
			if q.Path != "" {
				bw.WriteByte(':')
				bw.WriteString(q.Path)
			}
			bw.WriteByte('\n')
		}
		bw.Flush()
		in.Close()
	}()
	defer func() {
		// Unblock and reap the process whatever happened.
		_, _ = io.Copy(io.Discard, out)
		if werr := cmd.Wait(); err == nil && werr != nil {
			err = fmt.Errorf("git cat-file: %w", werr)
		}
	}()
	data, ans = make([][]byte, len(reqs)), make([]answer, len(reqs))
	br := bufio.NewReaderSize(out, 256<<10)
	for i := range reqs {
		// line points into br's buffer: parse it before reading on.
		line, err := br.ReadSlice('\n')
		if err != nil {
			return nil, nil, fmt.Errorf("git cat-file: %w", err)
		}
		f := bytes.Fields(line)
		if len(f) == 2 && (string(f[1]) == "missing" || string(f[1]) == "ambiguous") {
			continue
		}
		if len(f) != 3 {
			return nil, nil, fmt.Errorf("git cat-file: unexpected answer %q", line)
		}
		size, err := strconv.ParseInt(string(f[2]), 10, 64)
		if err != nil || size < 0 {
			return nil, nil, fmt.Errorf("git cat-file: unexpected answer %q", line)
		}
		ans[i] = answer{found: true, typ: string(f[1])}
		buf := make([]byte, size+1)
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, nil, fmt.Errorf("git cat-file: %w", err)
		}
		if buf[size] != '\n' {
			return nil, nil, errors.New("git cat-file: answer not ended by a newline")
		}
		data[i] = buf[:size:size]
	}
	return data, ans, nil
}

// readerEnv is the environment of the batch readers' git: the memory's
// objects alone (a git hook that runs git mem may have set another object
// folder), and no replace refs, since the index is a function of the
// commits.
func readerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_REPLACE_REF_BASE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_NO_REPLACE_OBJECTS=1")
}

// walkConfig caps the pack memory a git process that walks the whole
// history keeps mapped. git maps packs in 1 GiB windows and, on 64-bit,
// unmaps none below 32 TiB, so a rev-list over 1,000,000 commits spread
// through 111 packs held 5.4 GB of pack pages resident: the reindex's peak
// RSS (docs/BENCHMARKS.md, session 27). With 32 MiB windows and a 256 MiB
// limit it held 0.54 GB, in the same CPU and wall.
func walkConfig() []string {
	return []string{"-c", "core.packedGitWindowSize=32m", "-c", "core.packedGitLimit=256m"}
}

// ErrNoGit says that a batch read needs the git command, which is not
// there or failed; the caller reads through go-git instead.
var ErrNoGit = errors.New("git command not available")

// CommitsSince lists the commits reachable from start and not from last
// (zero: all of start's history), in Walk's order, with reached telling
// whether last is start or one of its ancestors. It is Walk from start
// that skips last, less the ancestors of last that a merge brings in
// (memory's pendingCommits), computed by one `git rev-list` and one `git
// cat-file --batch` instead of a go-git read with a pack reopen per
// commit. ErrNoGit when git cannot do it.
func (r *Repo) CommitsSince(start, last plumbing.Hash) (commits []*object.Commit, reached bool, err error) {
	order, reached, err := r.CommitHashesSince(start, last)
	if err != nil || len(order) == 0 {
		return nil, reached, err
	}
	commits, err = r.ReadCommits(order)
	return commits, reached, err
}

// CommitHashesSince is CommitsSince without reading the commits: a rebuild
// reads them a batch at a time (ReadCommits), since a million decoded
// commits held at once were gigabytes.
func (r *Repo) CommitHashesSince(start, last plumbing.Hash) (order []plumbing.Hash, reached bool, err error) {
	if !useCatFile || gitCLI() == "" {
		return nil, false, ErrNoGit
	}
	if start == last {
		return nil, true, nil
	}
	args := append(walkConfig(), "--git-dir", r.dir, "rev-list", "--parents", "--boundary", start.String())
	if !last.IsZero() {
		args = append(args, "^"+last.String())
	}
	cmd := exec.Command("git", args...)
	cmd.Env = readerEnv()
	out, err := cmd.Output()
	if err != nil {
		return nil, false, fmt.Errorf("%w: git rev-list: %v", ErrNoGit, err)
	}
	parents := map[plumbing.Hash][]plumbing.Hash{}
	reached = last.IsZero()
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		if len(line) > 0 && line[0] == '-' { // a boundary: reachable from last
			if f := bytes.Fields(line[1:]); len(f) > 0 && string(f[0]) == last.String() {
				reached = true
			}
			continue
		}
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		hs := make([]plumbing.Hash, len(f))
		for i, x := range f {
			if !plumbing.IsHash(string(x)) {
				return nil, false, fmt.Errorf("%w: git rev-list: unexpected line %q", ErrNoGit, line)
			}
			hs[i] = plumbing.NewHash(string(x))
		}
		parents[hs[0]] = hs[1:]
	}
	if _, ok := parents[start]; !ok {
		return nil, reached, nil
	}
	// Walk's depth-first order over the commits listed: a parent not
	// listed is an ancestor of last, whose own ancestors are too, so
	// leaving it out changes neither the order nor the set of the others.
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{start}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		order = append(order, h)
		ps := parents[h]
		for i := len(ps) - 1; i >= 0; i-- {
			if _, listed := parents[ps[i]]; listed && !seen[ps[i]] {
				stack = append(stack, ps[i])
			}
		}
	}
	return order, reached, nil
}

// HasPaths reports whether git finds each request, through one `git
// cat-file` and nothing else: unlike ReadPaths it does not look a missing
// one up again through go-git (which decodes every pack index first: 0.7 s
// at 1,000,000 exchanges). ErrNoGit when git cannot.
func (r *Repo) HasPaths(reqs []PathAt) ([]bool, error) {
	if !useCatFile || gitCLI() == "" {
		return nil, ErrNoGit
	}
	_, ans, err := r.batchObjects(reqs)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(reqs))
	for i, a := range ans {
		out[i] = a.found
	}
	return out, nil
}

// EachCommitBatch reads the commits hs a batch of size at a time
// (ReadCommits) and gives fn each batch in order, so that a caller going
// through a million commits holds a batch, not gigabytes of decoded commits.
func (r *Repo) EachCommitBatch(hs []plumbing.Hash, size int, fn func([]*object.Commit) error) error {
	for start := 0; start < len(hs); start += size {
		cs, err := r.ReadCommits(hs[start:min(start+size, len(hs))])
		if err != nil {
			return err
		}
		if err := fn(cs); err != nil {
			return err
		}
	}
	return nil
}

// ReadCommits reads and decodes the commits hs through one `git cat-file
// --batch`. ErrNoGit when git cannot.
func (r *Repo) ReadCommits(hs []plumbing.Hash) ([]*object.Commit, error) {
	if !useCatFile || gitCLI() == "" {
		return nil, ErrNoGit
	}
	reqs := make([]PathAt, len(hs))
	for i, h := range hs {
		reqs[i] = PathAt{Commit: h}
	}
	raw, ans, err := r.batchObjects(reqs)
	if err != nil {
		return nil, err
	}
	commits := make([]*object.Commit, len(hs))
	for i, h := range hs {
		if !ans[i].found || ans[i].typ != "commit" {
			return nil, fmt.Errorf("%w: git cat-file: no commit %s", ErrNoGit, h)
		}
		c, err := decodeCommit(raw[i], h)
		if err != nil {
			return nil, err
		}
		commits[i] = c
		raw[i] = nil
	}
	return commits, nil
}

// decodeCommit parses a commit git cat-file gave for h, checking that its
// content hashes to h.
func decodeCommit(raw []byte, h plumbing.Hash) (*object.Commit, error) {
	o := &plumbing.MemoryObject{}
	o.SetType(plumbing.CommitObject)
	o.Write(raw)
	c := &object.Commit{}
	if err := c.Decode(o); err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	if c.Hash != h {
		return nil, fmt.Errorf("read commit %s: git cat-file gave %s", h, c.Hash)
	}
	return c, nil
}
