package reader

import (
	"errors"

	"github.com/gitmem/git-mem/gitstore"
)

// The classes of error a caller acts on. Every error memory returns that
// belongs to a class wraps its sentinel, so errors.Is decides (the CLI maps
// them to exit codes; nothing matches message text).
var (
	// ErrNoMemory: there is no memory repo at the path (run git mem init).
	ErrNoMemory = gitstore.ErrNotFound
	// ErrLocked: another writer held the memory past the timeout.
	ErrLocked = gitstore.ErrLocked
	// ErrInvalid: the request itself is wrong (a bad query, argument or
	// input path); the caller must change it.
	ErrInvalid = errors.New("invalid request")
	// ErrNotFound: the thing asked for (an exchange, a remote) is not there.
	ErrNotFound = errors.New("not found")
)

// classed is a sentinel with its own message that also belongs to a class.
type classed struct {
	msg   string
	class error
}

func (c *classed) Error() string { return c.msg }
func (c *classed) Unwrap() error { return c.class }

// NewClassed is a sentinel error with its own message in class.
func NewClassed(msg string, class error) error { return &classed{msg, class} }

// Invalid wraps err as a request the caller must change.
func Invalid(err error) error {
	if err == nil || errors.Is(err, ErrInvalid) {
		return err
	}
	return &wrapped{err, ErrInvalid}
}

// wrapped keeps err's message and chain and adds a class.
type wrapped struct {
	err   error
	class error
}

func (w *wrapped) Error() string        { return w.err.Error() }
func (w *wrapped) Unwrap() []error      { return []error{w.err, w.class} }
func (w *wrapped) Is(target error) bool { return target == w.class }

// InClass wraps err, keeping its message and chain, in class.
func InClass(err, class error) error { return &wrapped{err, class} }
