package gitstore

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshServer is a minimal ssh server on 127.0.0.1 that runs git-upload-pack
// and git-receive-pack on repos under base for one authorised key, like
// a git host does. It returns the port, the client key file and a
// known_hosts file.
func sshServer(t *testing.T, base string) (port int, keyFile, knownHosts string) {
	t.Helper()
	_, hostPriv, _ := ed25519.GenerateKey(rand.Reader)
	hostSigner, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	clientPub, clientPriv, _ := ed25519.GenerateKey(rand.Reader)
	authorised, _ := ssh.NewPublicKey(clientPub)
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if string(k.Marshal()) == string(authorised.Marshal()) {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	cfg.AddHostKey(hostSigner)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveSSH(c, cfg, base)
		}
	}()
	port = l.Addr().(*net.TCPAddr).Port

	dir := t.TempDir()
	block, err := ssh.MarshalPrivateKey(clientPriv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	knownHosts = filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize("127.0.0.1:" + strconv.Itoa(port))}, hostSigner.PublicKey())
	if err := os.WriteFile(knownHosts, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return port, keyFile, knownHosts
}

func serveSSH(c net.Conn, cfg *ssh.ServerConfig, base string) {
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		c.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		go func() {
			defer ch.Close()
			for req := range creqs {
				if req.Type != "exec" || len(req.Payload) < 4 {
					_ = req.Reply(req.Type == "env", nil)
					continue
				}
				n := binary.BigEndian.Uint32(req.Payload)
				line := string(req.Payload[4 : 4+n])
				verb, arg, _ := strings.Cut(line, " ")
				if verb != "git-upload-pack" && verb != "git-receive-pack" {
					_ = req.Reply(false, nil)
					return
				}
				_ = req.Reply(true, nil)
				path := filepath.Join(base, filepath.Clean("/"+strings.Trim(arg, "'")))
				cmd := exec.Command("git", strings.TrimPrefix(verb, "git-"), path)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				code := 0
				if err := cmd.Run(); err != nil {
					code = 1
				}
				_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, uint32(code)))
				return
			}
		}()
	}
}

func TestSyncOverSSHWithKeyAndKnownHosts(t *testing.T) {
	base := t.TempDir()
	bareRemote(t, base, "remote.git")
	port, key, known := sshServer(t, base)
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("GIT_MEM_SSH_KEY", key)
	t.Setenv("SSH_KNOWN_HOSTS", known)
	url := "ssh://git@127.0.0.1:" + strconv.Itoa(port) + "/remote.git"
	a := memWith(t, url, ids("a", 4)...)
	b := memWith(t, url, ids("b", 3)...)
	mustSync(t, a)
	if res := mustSync(t, b); res.Fetched != 4 || res.Pushed != 3 || res.MergeCommit.IsZero() {
		t.Fatalf("b: %+v", res)
	}
	if res := mustSync(t, a); !res.FastForward {
		t.Fatalf("a: %+v", res)
	}
	if got := exchangeSet(t, filepath.Join(base, "remote.git")); len(got) != 7 {
		t.Fatalf("remote holds %v", got)
	}
	fsck(t, filepath.Join(base, "remote.git"))

	// A key the server does not know is refused as an authentication error.
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKey(other, "")
	otherKey := filepath.Join(t.TempDir(), "id_other")
	if err := os.WriteFile(otherKey, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_MEM_SSH_KEY", otherKey)
	var re *RemoteError
	if _, err := a.Sync(context.Background(), "origin", SyncOptions{}); !errors.As(err, &re) || re.Kind != "auth" {
		t.Fatalf("want an auth error, got %v", err)
	}
	t.Setenv("GIT_MEM_SSH_KEY", key)

	// An unknown host key is refused, clearly, and nothing changes.
	if err := os.WriteFile(known, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	appendIDs(t, a, "a-late")
	_, err := a.Sync(context.Background(), "origin", SyncOptions{})
	if !errors.As(err, &re) || re.Kind != "hostkey" || !strings.Contains(err.Error(), "known_hosts") {
		t.Fatalf("want a host key error, got %v", err)
	}
}

func TestSyncOverSSHWithAgent(t *testing.T) {
	base := t.TempDir()
	bareRemote(t, base, "remote.git")
	port, key, known := sshServer(t, base)
	pemBytes, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := ssh.ParseRawPrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _ = agent.ServeAgent(keyring, c); c.Close() }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	t.Setenv("GIT_MEM_SSH_KEY", "")
	t.Setenv("HOME", t.TempDir()) // no default key files: the agent alone
	t.Setenv("SSH_KNOWN_HOSTS", known)
	a := memWith(t, "ssh://git@127.0.0.1:"+strconv.Itoa(port)+"/remote.git", ids("g", 3)...)
	if res := mustSync(t, a); res.Pushed != 3 {
		t.Fatalf("push over ssh with the agent: %+v", res)
	}
}
