package gitstore

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// batch collects new objects in memory, in the order written, so that they
// reach the repo together (Repo.flush: loose or one pack) before any ref
// names them.
type batch struct {
	mem   *memory.Storage
	order []plumbing.Hash
}

func newBatch() *batch { return &batch{mem: memory.NewStorage()} }

// put adds o to the batch, once: an object put again (a rewrite can make the
// same tree from two old ones) is not listed again, since a pack that lists
// an object twice is refused by git (TestForgetWritesEachObjectOnce).
func (b *batch) put(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if h := o.Hash(); b.mem.HasEncodedObject(h) == nil {
		return h, nil
	}
	h, err := b.mem.SetEncodedObject(o)
	if err == nil {
		b.order = append(b.order, h)
	}
	return h, err
}

// commit encodes c into the batch.
func (b *batch) commit(c *object.Commit) (plumbing.Hash, error) {
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return b.put(obj)
}

// writeTo writes the batch's objects into r.
func (b *batch) writeTo(r *Repo) error { return r.flush(b.mem, b.order) }
