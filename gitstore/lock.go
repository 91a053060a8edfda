package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// DefaultLockTimeout is how long a writer waits for another one.
var DefaultLockTimeout = 30 * time.Second

// FileLock is an exclusive flock on a file. The kernel drops it when its
// process dies, so a killed git mem never leaves it stale.
type FileLock struct {
	f    *os.File
	also *FileLock // released with this one (writeLock's objects level)
}

// LockFile takes an exclusive lock on path, waiting up to timeout.
func LockFile(path string, timeout time.Duration) (*FileLock, error) {
	return lockFile(path, syscall.LOCK_EX, timeout)
}

// LockFileShared takes a shared lock on path, waiting up to timeout: any
// number of shared holders, none while an exclusive one holds it.
func LockFileShared(path string, timeout time.Duration) (*FileLock, error) {
	return lockFile(path, syscall.LOCK_SH, timeout)
}

func lockFile(path string, how int, timeout time.Duration) (*FileLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	deadline := time.Now().Add(timeout)
	delay := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return &FileLock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w (waited %s for %s)", ErrLocked, timeout, path)
		}
		time.Sleep(delay)
		if delay < 20*time.Millisecond {
			delay *= 2
		}
	}
}

// TryLockFile takes the lock only if it is free; ok is false otherwise.
func TryLockFile(path string) (l *FileLock, ok bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &FileLock{f: f}, true, nil
}

// With makes other released together with l.
func (l *FileLock) With(other *FileLock) *FileLock {
	l.also = other
	return l
}

// Unlock releases the lock.
func (l *FileLock) Unlock() {
	if l != nil && l.f != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
		l.f = nil
		l.also.Unlock()
	}
}

// Lock levels of a memory's objects and refs (restic's lock levels; the
// contract's "Writers and locks" says who takes what):
//
//   - mem/write.lock, exclusive: one writer at a time builds on main and
//     moves it (append, a sync's merge, forget's switch);
//   - mem/objects.lock, shared: held by whoever writes objects that main does
//     not reference yet (append, sync from fetch to push), so that nothing
//     deletes them before they are referenced;
//   - mem/objects.lock, exclusive: held by the one operation that deletes
//     unreachable objects (Purge), only for two short moments: to take its
//     snapshot and to delete what the snapshot proved unreachable.
//
// The background repack deletes nothing it has not copied (geometric
// roll-up of whole packs, loose objects included), so it takes no level.
const (
	writeLockFile   = "write.lock"
	objectsLockFile = "objects.lock"
)

// writeLock serialises git mem writers of one memory. It also holds the
// objects lock shared, since every writer writes objects main does not
// reference yet.
func (r *Repo) writeLock(timeout time.Duration) (*FileLock, error) {
	obj, err := r.ObjectsShared(timeout)
	if err != nil {
		return nil, err
	}
	l, err := LockFile(filepath.Join(r.MemDir(), writeLockFile), timeout)
	if err != nil {
		obj.Unlock()
		return nil, err
	}
	return l.With(obj), nil
}

// ObjectsShared takes the objects lock shared, for work that writes objects
// and references them later (a sync between its fetch and its merge).
func (r *Repo) ObjectsShared(timeout time.Duration) (*FileLock, error) {
	return LockFileShared(filepath.Join(r.MemDir(), objectsLockFile), timeout)
}

// objectsExclusive takes the objects lock exclusively (Purge only).
func (r *Repo) objectsExclusive(timeout time.Duration) (*FileLock, error) {
	return LockFile(filepath.Join(r.MemDir(), objectsLockFile), timeout)
}

// errRefMoved means main moved under us (e.g. plain git); the caller rebuilds.
var errRefMoved = errors.New("main moved during the update")

// casMain moves main from old to new the way git does: create
// refs/heads/main.lock exclusively, check the old value, rename. The lock
// file is a hard link of mem/main.new, so a lock left by a killed git mem can
// be told apart from git's own (which is never broken). The caller holds the
// write lock, so no other git mem is inside this function.
func (r *Repo) casMain(old, new plumbing.Hash, timeout time.Duration) error {
	refPath := filepath.Join(r.dir, "refs", "heads", Branch)
	lockPath := refPath + ".lock"
	ours := filepath.Join(r.MemDir(), "main.new")
	if err := os.MkdirAll(filepath.Dir(refPath), 0o755); err != nil {
		return err
	}
	r.recoverStaleRefLock()
	_ = os.Remove(ours)
	f, err := os.OpenFile(ours, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("prepare ref update: %w", err)
	}
	if _, err := f.WriteString(new.String() + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("prepare ref update: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("prepare ref update: %w", err)
	}
	f.Close()
	defer os.Remove(ours)

	deadline := time.Now().Add(timeout)
	for {
		err := os.Link(ours, lockPath)
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			return fmt.Errorf("lock %s: %w", lockPath, err)
		}
		// git's own lock (a user's git command): wait, never break it.
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s is held by another git process; if none is running, remove that file", ErrLocked, lockPath)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cur, err := readRef(r.dir, MainRef)
	if err != nil {
		os.Remove(lockPath)
		return err
	}
	if cur != old {
		os.Remove(lockPath)
		return errRefMoved
	}
	if err := os.Rename(lockPath, refPath); err != nil {
		os.Remove(lockPath)
		return fmt.Errorf("update %s: %w", MainRef, err)
	}
	syncDir(filepath.Dir(refPath))
	return nil
}

// recoverStaleRefLock removes refs/heads/main.lock when it is the hard link
// of our own mem/main.new: a git mem writer died between taking and
// releasing it. Only called with the write lock held.
func (r *Repo) recoverStaleRefLock() {
	lockPath := filepath.Join(r.dir, "refs", "heads", Branch+".lock")
	ours := filepath.Join(r.MemDir(), "main.new")
	li, err1 := os.Stat(lockPath)
	oi, err2 := os.Stat(ours)
	if err1 == nil && err2 == nil && os.SameFile(li, oi) {
		_ = os.Remove(lockPath)
	}
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// UpdateMain moves main from old to new under the write lock (used by sync
// after writing a merge). It fails with a clear error when main moved.
func (r *Repo) UpdateMain(old, new plumbing.Hash, timeout time.Duration) error {
	l, err := r.writeLock(timeout)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if err := r.casMain(old, new, timeout); err != nil {
		if errors.Is(err, errRefMoved) {
			return fmt.Errorf("main moved during the update: run the command again")
		}
		return err
	}
	return nil
}

// WithWriteLock runs fn while holding the memory's write lock, for callers
// that read main, build on it and move it (sync).
func (r *Repo) WithWriteLock(timeout time.Duration, fn func(cas func(old, new plumbing.Hash) error) error) error {
	l, err := r.writeLock(timeout)
	if err != nil {
		return err
	}
	defer l.Unlock()
	return fn(func(old, new plumbing.Hash) error { return r.casMain(old, new, timeout) })
}

// StaleRefLock reports whether refs/heads/main.lock is one a killed git mem
// left (the next writer removes it anyway).
func (r *Repo) StaleRefLock() bool {
	li, err1 := os.Stat(filepath.Join(r.dir, "refs", "heads", Branch+".lock"))
	oi, err2 := os.Stat(filepath.Join(r.MemDir(), "main.new"))
	return err1 == nil && err2 == nil && os.SameFile(li, oi)
}

// RecoverStaleRefLock removes such a lock now, under the write lock.
func (r *Repo) RecoverStaleRefLock() bool {
	if !r.StaleRefLock() {
		return false
	}
	l, err := r.writeLock(time.Second)
	if err != nil {
		return false
	}
	defer l.Unlock()
	r.recoverStaleRefLock()
	return !r.StaleRefLock()
}
