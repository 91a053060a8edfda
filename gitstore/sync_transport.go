package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/klauspost/compress/zlib"
)

// Credentials, in the order they are tried:
//
//   - http(s): a user and password in the URL; GIT_MEM_TOKEN (sent as the
//     password, user GIT_MEM_USERNAME, else the URL's user, else
//     "x-access-token"); GIT_MEM_USERNAME with GIT_MEM_PASSWORD; then, when
//     the server asks for them, `git credential fill` (the user's git
//     credential helpers, never prompting), approved or rejected afterwards
//     like git does.
//   - ssh: the ssh agent (SSH_AUTH_SOCK), else GIT_MEM_SSH_KEY, else the
//     default keys ~/.ssh/id_ed25519, id_ecdsa, id_rsa (passphrase from
//     GIT_MEM_SSH_PASSPHRASE); host keys are checked against
//     ~/.ssh/known_hosts (or SSH_KNOWN_HOSTS).
//   - file paths, file:// and git:// need none.

// remoteAuth holds the credentials of one remote for one sync.
type remoteAuth struct {
	url    string
	ep     *transport.Endpoint
	auth   transport.AuthMethod
	helper map[string]string // what `git credential fill` answered, to approve or reject
	tried  bool              // the credential helper was asked already
}

func newRemoteAuth(rawURL string, given transport.AuthMethod) (*remoteAuth, error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return nil, fmt.Errorf("remote URL %q: %w", rawURL, err)
	}
	a := &remoteAuth{url: rawURL, ep: ep, auth: given}
	if given != nil {
		return a, nil
	}
	switch ep.Protocol {
	case "http", "https":
		user, pass := ep.User, ep.Password
		if u := os.Getenv("GIT_MEM_USERNAME"); u != "" && pass == "" {
			user = u
		}
		if tok := os.Getenv("GIT_MEM_TOKEN"); tok != "" && pass == "" {
			pass = tok
			if user == "" {
				user = "x-access-token"
			}
		} else if p := os.Getenv("GIT_MEM_PASSWORD"); p != "" && pass == "" {
			pass = p
		}
		if user != "" || pass != "" {
			a.auth = &githttp.BasicAuth{Username: user, Password: pass}
		}
	case "ssh":
		a.auth = sshAuth(ep.User)
	}
	return a, nil
}

// sshAuth picks the ssh agent, else a key file; nil leaves go-git's default
// (the agent), which then says what is missing.
func sshAuth(user string) transport.AuthMethod {
	if user == "" {
		user = "git"
	}
	if os.Getenv("SSH_AUTH_SOCK") != "" {
		if a, err := gitssh.NewSSHAgentAuth(user); err == nil {
			return a
		}
	}
	keys := []string{os.Getenv("GIT_MEM_SSH_KEY")}
	if home, err := os.UserHomeDir(); err == nil {
		for _, k := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			keys = append(keys, filepath.Join(home, ".ssh", k))
		}
	}
	for _, k := range keys {
		if k == "" {
			continue
		}
		if a, err := gitssh.NewPublicKeysFromFile(user, k, os.Getenv("GIT_MEM_SSH_PASSPHRASE")); err == nil {
			return a
		}
	}
	return nil
}

// fromHelper asks the user's git credential helpers (once per sync) after
// the server refused anonymous access; ok is false when they know nothing.
func (a *remoteAuth) fromHelper() bool {
	if a.tried || (a.ep.Protocol != "http" && a.ep.Protocol != "https") || gitCLI() == "" {
		return false
	}
	a.tried = true
	in := credentialInput(a.ep)
	cmd := exec.Command("git", "credential", "fill")
	cmd.Stdin = strings.NewReader(in)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	out, err := cmd.Output()
	if err != nil {
		return false
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	if kv["password"] == "" {
		return false
	}
	a.helper = kv
	a.auth = &githttp.BasicAuth{Username: kv["username"], Password: kv["password"]}
	return true
}

func credentialInput(ep *transport.Endpoint) string {
	host := ep.Host
	if ep.Port != 0 && ep.Port != 80 && ep.Port != 443 {
		host = fmt.Sprintf("%s:%d", ep.Host, ep.Port)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "protocol=%s\nhost=%s\npath=%s\n", ep.Protocol, host, strings.TrimPrefix(ep.Path, "/"))
	if ep.User != "" {
		fmt.Fprintf(&b, "username=%s\n", ep.User)
	}
	return b.String() + "\n"
}

// report tells the credential helpers whether their answer worked.
func (a *remoteAuth) report(ok bool) {
	if a.helper == nil {
		return
	}
	verb := "reject"
	if ok {
		verb = "approve"
	}
	var b strings.Builder
	for _, k := range []string{"protocol", "host", "path", "username", "password"} {
		if v, ok := a.helper[k]; ok {
			fmt.Fprintf(&b, "%s=%s\n", k, v)
		}
	}
	cmd := exec.Command("git", "credential", verb)
	cmd.Stdin = strings.NewReader(b.String() + "\n")
	_ = cmd.Run()
	a.helper = nil
}

// retryAuth runs op, and once more with the credential helper's answer
// when the server asked for credentials.
func (a *remoteAuth) retryAuth(op func(transport.AuthMethod) error) error {
	err := op(a.auth)
	if isAuthErr(err) && a.fromHelper() {
		err = op(a.auth)
		a.report(!isAuthErr(err))
	} else if a.helper != nil {
		a.report(err == nil)
	}
	return err
}

func isAuthErr(err error) bool {
	return errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed) ||
		(err != nil && (strings.Contains(err.Error(), "unable to authenticate") || strings.Contains(err.Error(), "no supported methods remain")))
}

// RemoteError is a failure to talk to a remote; nothing was changed.
type RemoteError struct {
	Remote, URL string
	Kind        string // "unreachable", "auth", "hostkey", "not-found", "other"
	Err         error
}

func (e *RemoteError) Error() string {
	where := e.Remote
	if e.URL != "" {
		where = fmt.Sprintf("%s (%s)", e.Remote, RedactURL(e.URL))
	}
	switch e.Kind {
	case "unreachable":
		return fmt.Sprintf("cannot reach remote %s: %v; nothing was changed, run `git mem sync` again when it is reachable", where, e.Err)
	case "auth":
		return fmt.Sprintf("remote %s refused the credentials (%v): set GIT_MEM_TOKEN (or GIT_MEM_USERNAME and GIT_MEM_PASSWORD), configure a git credential helper, or for ssh load your key with ssh-add; nothing was changed", where, e.Err)
	case "hostkey":
		return fmt.Sprintf("remote %s: the server's ssh host key is not known or does not match (%v): check it and add it to ~/.ssh/known_hosts (e.g. connect once with ssh); nothing was changed", where, e.Err)
	case "not-found":
		return fmt.Sprintf("remote %s: no git repository there (%v); create it (e.g. `git init --bare -b main` on the server) or fix the URL with `git mem remote add`", where, e.Err)
	}
	return fmt.Sprintf("remote %s: %v", where, e.Err)
}

func (e *RemoteError) Unwrap() error { return e.Err }

// RedactURL hides a password in a URL before it is shown.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

func classify(remote, rawURL string, err error) error {
	if err == nil {
		return nil
	}
	var re *RemoteError
	if errors.As(err, &re) {
		return err
	}
	kind := "other"
	var ne net.Error
	var oe *net.OpError
	s := err.Error()
	switch {
	case strings.Contains(s, "knownhosts") || strings.Contains(s, "host key"):
		kind = "hostkey"
	case isAuthErr(err) || strings.Contains(s, "SSH_AUTH_SOCK"):
		kind = "auth"
	case errors.Is(err, transport.ErrRepositoryNotFound) || strings.Contains(s, "does not appear to be a git repository") ||
		strings.Contains(s, "not a git repository") || strings.Contains(s, "no such file or directory"):
		kind = "not-found"
	case errors.As(err, &oe) || errors.As(err, &ne) || strings.Contains(s, "connection refused") ||
		strings.Contains(s, "no such host") || strings.Contains(s, "i/o timeout") || strings.Contains(s, "connection reset") ||
		strings.Contains(s, "EOF"):
		kind = "unreachable"
	}
	return &RemoteError{Remote: remote, URL: rawURL, Kind: kind, Err: err}
}

// countingWriter counts what goes through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// errPushRejected means the remote did not take the update (it moved).
var errPushRejected = errors.New("the remote's main moved during the push")

// refUpdate moves one of the remote's refs from Old to New.
type refUpdate struct {
	Name     plumbing.ReferenceName
	Old, New plumbing.Hash
}

// pushRefs sends objs (what the remote lacks) and moves each of the
// remote's refs from its Old value to its New one, with a lease: nothing
// is sent when one of them no longer holds Old, and the remote's
// receive-pack checks Old again as it updates. Whether New may replace Old
// (a fast-forward, or a rewrite the tombstones explain) the caller decided.
// It writes the pack itself: go-git's Remote.Push walks every tree of the
// remote's whole history to find what to leave out, which took seconds at
// a few thousand commits (docs/bench/sync.md).
func (r *Repo) pushRefs(ctx context.Context, a *remoteAuth, updates []refUpdate, objs []plumbing.Hash) (sent int64, err error) {
	cl, err := client.NewClient(a.ep)
	if err != nil {
		return 0, err
	}
	err = a.retryAuth(func(auth transport.AuthMethod) error {
		sess, err := cl.NewReceivePackSession(a.ep, auth)
		if err != nil {
			return err
		}
		defer sess.Close()
		ar, err := sess.AdvertisedReferencesContext(ctx)
		if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return err
		}
		var refs memory.ReferenceStorage
		if ar != nil {
			if all, err := ar.AllReferences(); err == nil {
				refs = all
			}
		}
		req := packp.NewReferenceUpdateRequest()
		if ar != nil {
			req = packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
		}
		req.Commands = nil
		for _, u := range updates {
			cur := plumbing.ZeroHash
			if ref, ok := refs[u.Name]; ok {
				cur = ref.Hash()
			}
			if cur != u.Old {
				return errPushRejected
			}
			req.Commands = append(req.Commands, &packp.Command{Name: u.Name, Old: u.Old, New: u.New})
		}
		rd, wr := io.Pipe()
		cw := &countingWriter{w: wr}
		done := make(chan error, 1)
		go func() {
			_, err := writePack(cw, r.st, objs)
			done <- wr.CloseWithError(err)
		}()
		req.Packfile = rd
		rs, err := sess.ReceivePack(ctx, req)
		_ = rd.Close()
		if perr := <-done; err == nil && perr != nil {
			err = perr
		}
		sent = cw.n
		if err != nil {
			if strings.Contains(err.Error(), "fetch first") || strings.Contains(err.Error(), "non-fast-forward") ||
				strings.Contains(err.Error(), "failed to update ref") || strings.Contains(err.Error(), "failed to lock") {
				return fmt.Errorf("%w: %v", errPushRejected, err)
			}
			return err
		}
		if rs != nil {
			if err := rs.Error(); err != nil {
				if rs.UnpackStatus == "ok" {
					return fmt.Errorf("%w: %v", errPushRejected, err)
				}
				return err
			}
		}
		return nil
	})
	return sent, err
}

// writePack writes objs as a version 2 pack without deltas, each object
// deflated at the fastest level with one reused compressor (klauspost's
// zlib, as the append's pack: the standard library's took 0.28 s of the 3 s
// a sync that merges 1,000 new exchanges each way cost). go-git's
// encoder spent most of a push resetting a default-level compressor per
// object (docs/bench/sync.md); memory objects are small and deltas saved
// little (1.40 MB without against 1.20 MB with a window of 10, at 3x the
// time).
//
// Objects come from the mapped packs, checked against their ids, where
// they can, else from go-git; an object a pack stores undeltified is sent
// as its stored zlib stream (objectStore.stored), not deflated again
// (0.13 s of a push of 1,000 exchanges, 0.3 s of a merge's).
func writePack(w io.Writer, st *objectStore, objs []plumbing.Hash) (int64, error) {
	h := sha1.New()
	cw := &countingWriter{w: io.MultiWriter(w, h)}
	bw := bufio.NewWriterSize(cw, 64<<10)
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(objs)))
	if _, err := bw.Write(hdr[:]); err != nil {
		return 0, err
	}
	zw, _ := zlib.NewWriterLevel(bw, zlib.BestSpeed)
	for _, oh := range objs {
		var rd io.ReadCloser
		var typ plumbing.ObjectType
		var size int64
		var z []byte // the stored stream, when there is one
		if so, ok := st.memoStored(oh); ok {
			typ, size, z = so.typ, so.size, so.z
		} else if t, n, zs, ok := st.stored(oh); ok {
			typ, size, z = t, n, zs
		} else if t, data, ok := st.verified(oh); ok {
			typ, size, rd = t, int64(len(data)), io.NopCloser(bytes.NewReader(data))
		} else {
			o, err := st.EncodedObject(plumbing.AnyObject, oh)
			if err != nil {
				return 0, fmt.Errorf("read object %s: %w", oh, err)
			}
			if rd, err = o.Reader(); err != nil {
				return 0, err
			}
			typ, size = o.Type(), o.Size()
		}
		b := byte(typ)<<4 | byte(size&0x0f)
		size >>= 4
		var eh []byte
		for size > 0 {
			eh = append(eh, b|0x80)
			b = byte(size & 0x7f)
			size >>= 7
		}
		eh = append(eh, b)
		if z != nil {
			if _, err := bw.Write(eh); err != nil {
				return 0, err
			}
			if _, err := bw.Write(z); err != nil {
				return 0, err
			}
			continue
		}
		if _, err := bw.Write(eh); err != nil {
			rd.Close()
			return 0, err
		}
		zw.Reset(bw)
		_, err := io.Copy(zw, rd)
		rd.Close()
		if err != nil {
			return 0, err
		}
		if err := zw.Close(); err != nil {
			return 0, err
		}
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	if _, err := w.Write(h.Sum(nil)); err != nil {
		return 0, err
	}
	return cw.n + sha1.Size, nil
}

// missingObjects lists the objects reachable from local that a remote at
// remoteTip lacks: the new commits, and of their trees what is in neither
// the remote tip's tree nor the tree of a boundary commit (a commit the
// remote holds that a new one descends from directly). Trees are compared
// path by path with those, so only the folders on changed paths are read,
// never the whole history; anything else of an older tree of the remote is
// sent again, which git accepts. The boundary's trees matter after a
// merge: our first new commit holds the base's version of every leaf the
// remote changed since, which the remote has but its tip no longer names
// (at 1,000,000 exchanges ~1,000 leaf trees of ~23 KB, half the pack the
// merge side pushed, each indexed and checked again by the remote:
// docs/BENCHMARKS.md, session 22). have is the ancestry of remoteTip.
func (r *Repo) missingObjects(local, remoteTip plumbing.Hash, have commitSet) (objs, commits []plumbing.Hash, err error) {
	_, objs, commits, err = r.walkMissing(local, remoteTip, have)
	return objs, commits, err
}

// walkMissing is missingObjects, also returning its walker (nil when
// nothing is missing) for missingAfterMerge.
func (r *Repo) walkMissing(local, remoteTip plumbing.Hash, have commitSet) (w *treeWalker, objs, commits []plumbing.Hash, err error) {
	commits, boundary, err := r.only(local, have)
	if err != nil || len(commits) == 0 {
		return nil, nil, nil, err
	}
	bases, err := r.baseTrees(nil, append([]plumbing.Hash{remoteTip}, boundary...))
	if err != nil {
		return nil, nil, nil, err
	}
	w = r.newTreeWalker()
	w.roots = bases
	for i := len(commits) - 1; i >= 0; i-- { // oldest first
		w.out = append(w.out, commits[i])
		t, err := r.treeOf(commits[i])
		if err != nil {
			return nil, nil, nil, err
		}
		if err := w.markNew(t, bases); err != nil {
			return nil, nil, nil, err
		}
	}
	return w, w.out, commits, nil
}

// maxBaseTrees bounds the trees a walk compares each new tree with: the
// remote tip's and the boundary's, usually one or two. Past it, what the
// others would have spared is sent again (git accepts it).
const maxBaseTrees = 8

// baseTrees adds the trees of commits (zero ones left out) to bases,
// each once, up to maxBaseTrees.
func (r *Repo) baseTrees(bases []plumbing.Hash, commits []plumbing.Hash) ([]plumbing.Hash, error) {
	for _, c := range commits {
		if len(bases) >= maxBaseTrees {
			break
		}
		t, err := r.treeOf(c)
		if err != nil {
			return nil, err
		}
		if !t.IsZero() && !slices.Contains(bases, t) {
			bases = append(bases, t)
		}
	}
	return bases, nil
}

// earlyWalk is the push's walk of ours (what a remote at remoteTip lacks
// of it), run beside the union merge of ours and theirs: at 1,000,000
// exchanges the walk of a side's 1,000 new commits is ~0.25 s of CPU that
// otherwise runs between the merge and the push, while the other core is
// idle. missingAfterMerge then walks only the merge commit's tree.
type earlyWalk struct {
	ours, remoteTip plumbing.Hash
	have            commitSet
	done            chan struct{}
	w               *treeWalker
	objs, commits   []plumbing.Hash
	err             error
}

func (r *Repo) startWalk(ours, remoteTip plumbing.Hash, have commitSet) *earlyWalk {
	e := &earlyWalk{ours: ours, remoteTip: remoteTip, have: have, done: make(chan struct{})}
	go func() {
		defer close(e.done)
		e.w, e.objs, e.commits, e.err = r.walkMissing(ours, remoteTip, have)
	}()
	return e
}

// wait returns once the walk is over (a sync does not return, and close
// its store, while the walk reads it).
func (e *earlyWalk) wait() {
	if e != nil {
		<-e.done
	}
}

// missingAfterMerge gives missingObjects(head, e.remoteTip, e.have) when
// head is a merge of e.ours and a commit the remote holds: the same
// objects in the same order, as missingObjects lists a commit's parents'
// objects before its own (only(head) is head, then only(e.ours): the
// second parent is in have). ok is false when head is not such a merge
// (main moved on since, or theirs is not the remote's), or when the walk
// of ours did not compare with theirs's tree: the caller walks as before.
func (r *Repo) missingAfterMerge(e *earlyWalk, head plumbing.Hash) (objs, commits []plumbing.Hash, ok bool, err error) {
	if e == nil {
		return nil, nil, false, nil
	}
	e.wait()
	if e.err != nil {
		return nil, nil, false, nil // walk again, as before, and report what that finds
	}
	if e.have.has(head) {
		return nil, nil, false, nil
	}
	c, err := r.Commit(head)
	if err != nil {
		return nil, nil, false, err
	}
	if len(c.ParentHashes) != 2 || c.ParentHashes[0] != e.ours || !e.have.has(c.ParentHashes[1]) {
		return nil, nil, false, nil
	}
	theirs, err := r.treeOf(c.ParentHashes[1])
	if err != nil {
		return nil, nil, false, err
	}
	w, bases := e.w, []plumbing.Hash(nil)
	if w == nil { // the remote held ours
		w = r.newTreeWalker()
		if bases, err = r.baseTrees(nil, []plumbing.Hash{e.remoteTip, c.ParentHashes[1], e.ours}); err != nil {
			return nil, nil, false, err
		}
	} else {
		// walkMissing(head) compares ours's commits with theirs's tree as
		// well (theirs is on its boundary): the same walk only when ours's
		// had it already (the remote tip's tree, or a boundary commit's).
		if !slices.Contains(w.roots, theirs) || len(w.roots) >= maxBaseTrees {
			return nil, nil, false, nil
		}
		bases = w.roots
	}
	w.out = append(w.out[:0:0], e.objs...)
	w.out = append(w.out, head)
	if err := w.markNew(c.TreeHash, bases); err != nil {
		return nil, nil, false, err
	}
	return w.out, append([]plumbing.Hash{head}, e.commits...), true, nil
}

// newTreeWalker is an empty walk of r's trees.
func (r *Repo) newTreeWalker() *treeWalker {
	return &treeWalker{r: r, known: map[plumbing.Hash]bool{}, bases: map[plumbing.Hash]map[string]object.TreeEntry{}}
}

type treeWalker struct {
	r     *Repo
	known map[plumbing.Hash]bool
	// roots: the trees the walk compares each new commit's tree with
	// (walkMissing's bases), for missingAfterMerge.
	roots []plumbing.Hash
	// bases: the entries of the remote tip's trees by name, each made once
	// (the leaf folder a commit adds to is compared with one base per
	// commit: building its map each time was most of the walk's
	// comparing).
	bases map[plumbing.Hash]map[string]object.TreeEntry
	out   []plumbing.Hash
	// stop, when set, ends the walk with errWarmStopped once it says so,
	// and the walk reads trees without claiming them (readUnclaimed): the
	// warm-up during a fetch, which no other read is to wait for.
	stop func() bool
}

func (w *treeWalker) getTree(h plumbing.Hash) (*object.Tree, error) {
	if w.stop != nil {
		return w.r.st.readUnclaimed(h)
	}
	return w.r.st.getTree(h)
}

func (w *treeWalker) baseEntries(h plumbing.Hash) (map[string]object.TreeEntry, error) {
	if m, ok := w.bases[h]; ok {
		return m, nil
	}
	t, err := w.getTree(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	m := make(map[string]object.TreeEntry, len(t.Entries))
	for _, e := range t.Entries {
		m[e.Name] = e
	}
	w.bases[h] = m
	return m, nil
}

// markNew adds tree t and what under it differs from every one of bases
// (trees the remote holds at the same path; none: every entry is new).
// An entry equal to a base's is the remote's, with all under it.
func (w *treeWalker) markNew(t plumbing.Hash, bases []plumbing.Hash) error {
	if w.known[t] || slices.Contains(bases, t) {
		return nil
	}
	if w.stop != nil && w.stop() {
		return errWarmStopped
	}
	w.known[t] = true
	w.out = append(w.out, t)
	tree, err := w.getTree(t)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", t, err)
	}
	olds := make([]map[string]object.TreeEntry, 0, len(bases))
	for _, b := range bases {
		m, err := w.baseEntries(b)
		if err != nil {
			return err
		}
		olds = append(olds, m)
	}
	var subs []plumbing.Hash
	for _, e := range tree.Entries {
		same := false
		subs = subs[:0]
		for _, old := range olds {
			o, ok := old[e.Name]
			if ok && o.Hash == e.Hash {
				same = true
				break
			}
			if ok && o.Mode == filemode.Dir && !slices.Contains(subs, o.Hash) {
				subs = append(subs, o.Hash)
			}
		}
		switch {
		case same:
		case e.Mode == filemode.Dir:
			// (subs is reused: markNew keeps no reference to it.)
			if err := w.markNew(e.Hash, subs); err != nil {
				return err
			}
		case e.Mode == filemode.Submodule:
		default:
			if !w.known[e.Hash] {
				w.known[e.Hash] = true
				w.out = append(w.out, e.Hash)
			}
		}
	}
	return nil
}
