package warm

import (
	"fmt"
	"os"
	"syscall"
)

// dialUnix connects to the unix socket at path without package net: a
// non-blocking socket, so that the file's deadlines work (os.NewFile
// makes it pollable). A connect that would wait (the listener's backlog
// is full) fails at once.
func dialUnix(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("socket: %w", err)
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("connect %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}
