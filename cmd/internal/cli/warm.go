package cli

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/gitmem/git-mem/cmd/internal/front"
	"github.com/gitmem/git-mem/cmd/internal/warm"
	"github.com/gitmem/git-mem/memory/queue"
	"github.com/gitmem/git-mem/memory/reader"
)

// StartSearchServer starts a warm search process (core: the git-mem-core
// binary) for r, detached, unless one is up or it is turned off. A cold
// `git mem search` calls it after it printed its answer.
func StartSearchServer(r *reader.Reader, core string) {
	if warm.Disabled(os.Getenv) || !r.Config.Search.ServerOn() {
		return
	}
	for _, k := range warm.ColdEnvNames {
		if os.Getenv(k) != "" {
			return
		}
	}
	sock := warm.SockPath(r.Repo.Dir())
	if len(sock) > warm.MaxSockPath {
		return
	}
	if c, err := net.DialTimeout("unix", sock, 100*time.Millisecond); err == nil {
		c.Close()
		return
	}
	// One that could not make its folder (a read-only memory) is not
	// started again and again.
	if err := PrivateDir(warm.RunDir(r.Repo.Dir())); err != nil {
		return
	}
	if err := queue.StartDetached(core, front.CoreName, r.Repo.Dir(), r.LogDir(), "search.log", warm.Command); err != nil {
		queue.Logger(r.LogDir(), "search.log")("error: start the warm search process: %v", err)
	}
}

// PrivateDir makes dir (mode 0700, this user's, not a link).
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to another user", dir)
	}
	if fi.Mode().Perm() != 0o700 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}
