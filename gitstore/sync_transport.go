package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
)

// Credentials, in the order they are tried:
//
//   - http(s): a user and password in the URL; GIT_MEM_TOKEN (sent as the
//     password, user GIT_MEM_USERNAME or "x-access-token"); GIT_MEM_USERNAME
//     with GIT_MEM_PASSWORD; then, when the server asks for them, `git
//     credential fill` (the user's git credential helpers), approved or
//     rejected afterwards like git does.
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
		if tok := os.Getenv("GIT_MEM_TOKEN"); tok != "" && pass == "" {
			user, pass = os.Getenv("GIT_MEM_USERNAME"), tok
			if user == "" {
				user = "x-access-token"
			}
		} else if p := os.Getenv("GIT_MEM_PASSWORD"); p != "" && pass == "" {
			user, pass = os.Getenv("GIT_MEM_USERNAME"), p
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
	Kind        string // "unreachable", "auth", "not-found", "other"
	Err         error
}

func (e *RemoteError) Error() string {
	where := e.Remote
	if e.URL != "" {
		where = fmt.Sprintf("%s (%s)", e.Remote, redactURL(e.URL))
	}
	switch e.Kind {
	case "unreachable":
		return fmt.Sprintf("cannot reach remote %s: %v; nothing was changed, run `git mem sync` again when it is reachable", where, e.Err)
	case "auth":
		return fmt.Sprintf("remote %s refused the credentials (%v): set GIT_MEM_TOKEN (or GIT_MEM_USERNAME and GIT_MEM_PASSWORD), configure a git credential helper, or for ssh load your key with ssh-add; nothing was changed", where, e.Err)
	case "not-found":
		return fmt.Sprintf("remote %s: no git repository there (%v); create it (e.g. `git init --bare -b main` on the server) or fix the URL with `git mem remote add`", where, e.Err)
	}
	return fmt.Sprintf("remote %s: %v", where, e.Err)
}

func (e *RemoteError) Unwrap() error { return e.Err }

// redactURL hides a password in a URL before it is shown.
func redactURL(s string) string {
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
	case isAuthErr(err):
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

// pushMain sends the objects of local (those the remote lacks, given it
// holds remoteTip) and moves the remote's main from remoteTip to local,
// never forced: the remote refuses when its main is no longer remoteTip.
// It writes the pack itself: go-git's Remote.Push walks every tree of the
// remote's whole history to find what to leave out, which took seconds at
// a few thousand commits (docs/bench/sync.md).
func (r *Repo) pushMain(ctx context.Context, a *remoteAuth, remoteTip, local plumbing.Hash, objs []plumbing.Hash) (sent int64, err error) {
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
		cur := plumbing.ZeroHash
		if ar != nil {
			if refs, err := ar.AllReferences(); err == nil {
				if ref, err := refs.Reference(MainRef); err == nil {
					cur = ref.Hash()
				}
			}
		}
		if cur != remoteTip {
			return errPushRejected
		}
		req := packp.NewReferenceUpdateRequest()
		if ar != nil {
			req = packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
		}
		req.Commands = []*packp.Command{{Name: MainRef, Old: remoteTip, New: local}}
		rd, wr := io.Pipe()
		cw := &countingWriter{w: wr}
		done := make(chan error, 1)
		go func() {
			refDeltas := ar == nil || !ar.Capabilities.Supports(capability.OFSDelta)
			_, err := packfile.NewEncoder(cw, r.st, refDeltas).Encode(objs, packWindow)
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

// packWindow is the delta window of pushed packs (0 = no deltas). Trees of
// consecutive memory commits differ by one entry, so deltas shrink a push
// several times over; see docs/bench/sync.md.
var packWindow uint = 0

// missingObjects lists the objects reachable from local that a remote at
// remoteTip lacks: the new commits, and the trees and blobs of their trees
// that are not in the trees of the commits the remote already has at the
// edge (what git's own push sends, without walking the whole history).
func (r *Repo) missingObjects(local, remoteTip plumbing.Hash) (objs, commits []plumbing.Hash, err error) {
	have, err := r.ancestry(remoteTip)
	if err != nil {
		return nil, nil, err
	}
	commits, boundary, err := r.only(local, have)
	if err != nil || len(commits) == 0 {
		return nil, nil, err
	}
	known := map[plumbing.Hash]bool{}
	for _, b := range boundary {
		t, err := r.treeOf(b)
		if err != nil {
			return nil, nil, err
		}
		if err := r.markTree(t, known, nil); err != nil {
			return nil, nil, err
		}
	}
	var out []plumbing.Hash
	for i := len(commits) - 1; i >= 0; i-- { // oldest first
		out = append(out, commits[i])
		t, err := r.treeOf(commits[i])
		if err != nil {
			return nil, nil, err
		}
		if err := r.markTree(t, known, &out); err != nil {
			return nil, nil, err
		}
	}
	return out, commits, nil
}

// markTree adds the tree t and everything under it that is not known yet
// to known (and to out when given), skipping known subtrees.
func (r *Repo) markTree(t plumbing.Hash, known map[plumbing.Hash]bool, out *[]plumbing.Hash) error {
	if t.IsZero() || known[t] {
		return nil
	}
	known[t] = true
	if out != nil {
		*out = append(*out, t)
	}
	tree, err := object.GetTree(r.st, t)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", t, err)
	}
	for _, e := range tree.Entries {
		switch e.Mode {
		case filemode.Dir:
			if err := r.markTree(e.Hash, known, out); err != nil {
				return err
			}
		case filemode.Submodule:
		default:
			if !known[e.Hash] {
				known[e.Hash] = true
				if out != nil {
					*out = append(*out, e.Hash)
				}
			}
		}
	}
	return nil
}
