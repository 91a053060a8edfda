package search

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// storeLock takes (shared, without waiting) or lets go of the flock on
// every descriptor of this process open on path: bolt keeps its lock on
// the descriptor it opened the file with, which only /proc names.
func storeLock(path string, take bool) error {
	want, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStoreLock, err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStoreLock, err)
	}
	found := 0
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil {
			continue
		}
		ws, ok := want.Sys().(*syscall.Stat_t)
		if !ok || st.Dev != ws.Dev || st.Ino != ws.Ino {
			continue
		}
		found++
		how := syscall.LOCK_UN
		if take {
			how = syscall.LOCK_SH | syscall.LOCK_NB
		}
		if err := syscall.Flock(fd, how); err != nil {
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return fmt.Errorf("%s: %w", path, ErrBusy)
			}
			return fmt.Errorf("%w: %v", ErrStoreLock, err)
		}
	}
	if found == 0 {
		return fmt.Errorf("%w: no descriptor open on %s", ErrStoreLock, path)
	}
	return nil
}
