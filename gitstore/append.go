package gitstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Entry is one record to append: a blob at a tree path and the commit
// message that describes it. An entry with no Path (and no Blob) is a
// commit that adds nothing: its tree is the parent's (a pin or a link,
// whose meaning its trailers carry).
type Entry struct {
	Path    string    // tree path of the blob; an entry whose path holds this blob is already stored
	Blob    []byte    // the blob's bytes
	Message string    // the commit message
	When    time.Time // author date (the record's own time)
	// Needs, when set, is a path that must hold the blob NeedsBlob (in
	// main, or put there by an earlier entry of the same append) for the
	// entry to be stored: a record named after another one (memory: an
	// exchange's completed id names its prompt stored alone). Otherwise
	// the entry is not stored and is listed in Taken, for the caller to
	// classify again.
	Needs     string
	NeedsBlob plumbing.Hash
}

// Author is the identity of memory commits; fixed so that two machines write
// the same author for the same record.
var Author = object.Signature{Name: "git-mem", Email: "git-mem@localhost"}

// AppendResult says, per entry (same order as the input), what happened.
type AppendResult struct {
	Commits []plumbing.Hash // zero for an entry that was not stored
	Added   int
	// Present counts entries whose path holds their blob.
	Present int
	// Taken lists the entries (indexes into the input) whose path holds
	// another blob, or whose Needs path does not hold NeedsBlob: not
	// stored, not counted. Something stored under the name after the
	// caller looked (a concurrent add); only the caller knows whether it
	// is this record (memory: classify).
	Taken []int
	// Forgotten counts entries a tombstone names (a forget that ended
	// after the caller looked, before this append took the write lock).
	Forgotten int
}

// packThreshold is the batch size from which objects are written as one
// pack instead of loose files: fewer files, no `gc --auto` later.
const packThreshold = 16

// Append commits each entry whose path is not yet in main, one commit per
// entry, in order, and moves main compare-and-swap. It is idempotent:
// entries already present (their path holds their blob) are skipped, also
// within the batch; an entry whose path holds another blob is skipped and
// listed in Taken. A crash at any point leaves main at the old or the new
// tip.
func (r *Repo) Append(entries []Entry, timeout time.Duration) (AppendResult, error) {
	return r.AppendLooked(entries, timeout, nil)
}

// AppendLooked is Append taking the trees it needs from looked (a
// HasLooked's, may be nil) before it reads them from the packs.
func (r *Repo) AppendLooked(entries []Entry, timeout time.Duration, looked *Looked) (AppendResult, error) {
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	l, err := r.writeLock(timeout)
	if err != nil {
		return AppendResult{}, err
	}
	defer l.Unlock()
	for attempt := 0; ; attempt++ {
		res, err := r.appendLocked(entries, timeout, looked)
		if errors.Is(err, errRefMoved) && attempt < 5 {
			continue // plain git moved main: rebuild on the new tip
		}
		if err != nil && !errors.Is(err, ErrLocked) && !errors.Is(err, errRefMoved) && attempt < 2 {
			// Perhaps a background repack is replacing the packs we listed.
			time.Sleep(time.Duration(50*(attempt+1)) * time.Millisecond)
			r.st.refresh()
			continue
		}
		if err == nil && res.Added > 0 {
			r.maybeRepack()
		}
		return res, err
	}
}

func (r *Repo) appendLocked(entries []Entry, timeout time.Duration, looked *Looked) (AppendResult, error) {
	res := AppendResult{Commits: make([]plumbing.Hash, len(entries))}
	head, err := r.Head()
	if err != nil {
		return res, err
	}
	var rootTree plumbing.Hash
	if !head.IsZero() {
		// No retry here: Append's own loop retries with a fresh pack list.
		c, err := object.GetCommit(r.st, head)
		if err != nil {
			return res, fmt.Errorf("read commit %s: %w", head, err)
		}
		rootTree = c.TreeHash
	}

	// A forget moves the tombstone ref and main under the write lock, so
	// what is tombstoned now is final for this append: an exchange a forget
	// named after the caller looked (memory.lookupItems) is not stored
	// again (docs/CONTRACT.md, Forget, rule 5).
	tomb, err := r.tombstoneTree()
	if err != nil {
		return res, err
	}

	// Objects go to memory first; they reach the repo only once all are
	// built, as loose objects or one pack, before main moves.
	b := newBatch()
	put := b.put
	ed := newTreeEditor(overlay{mem: b.mem, disk: r}, put, rootTree)
	ed.fast = func(h plumbing.Hash) ([]object.TreeEntry, bool) {
		if es, ok := looked.tree(h); ok {
			return es, true
		}
		return r.st.tree(h)
	}
	parent := head
	now := time.Now()
	for i, e := range entries {
		var tree plumbing.Hash
		if e.Path == "" {
			if tree, err = ed.current(); err != nil {
				return res, err
			}
		} else {
			have, exists, err := ed.hash(e.Path)
			if err != nil {
				return res, err
			}
			if exists {
				if have == BlobID(e.Blob) {
					res.Present++
				} else {
					res.Taken = append(res.Taken, i)
				}
				continue
			}
			if tomb != nil {
				dead, err := tomb.has(TombstonePath(e.Path))
				if err != nil {
					return res, err
				}
				if dead {
					res.Forgotten++
					continue
				}
			}
			if e.Needs != "" {
				have, exists, err := ed.hash(e.Needs)
				if err != nil {
					return res, err
				}
				if !exists || have != e.NeedsBlob {
					res.Taken = append(res.Taken, i)
					continue
				}
			}
			blob, err := put(blobObject(e.Blob))
			if err != nil {
				return res, err
			}
			if tree, err = ed.put(e.Path, blob); err != nil {
				return res, fmt.Errorf("append %s: %w", e.Path, err)
			}
		}
		when := e.When
		if when.IsZero() {
			when = now
		}
		author := Author
		author.When = when
		committer := Author
		committer.When = now
		c := &object.Commit{Author: author, Committer: committer, Message: e.Message, TreeHash: tree}
		if !parent.IsZero() {
			c.ParentHashes = []plumbing.Hash{parent}
		}
		ch, err := b.commit(c)
		if err != nil {
			return res, err
		}
		res.Commits[i] = ch
		res.Added++
		parent = ch
	}
	if res.Added == 0 {
		return res, nil
	}
	if err := b.writeTo(r); err != nil {
		return res, err
	}
	if testHookBeforeCAS != nil {
		testHookBeforeCAS(r)
	}
	// Main must never name a commit that is not there (a repack that deleted
	// a pack before main referenced it lost history once): check the new tip
	// and its tree, with a fresh pack list, before moving main.
	if err := r.present(parent); err != nil {
		return res, err
	}
	if err := r.casMain(head, parent, timeout); err != nil {
		return res, err
	}
	return res, nil
}

// testHookBeforeCAS runs between writing a batch's objects and moving main
// (tests put a repack there).
var testHookBeforeCAS func(*Repo)

// present checks that commit h and its tree can be read, refreshing the
// pack list once if need be.
func (r *Repo) present(h plumbing.Hash) error {
	check := func() error {
		c, err := object.GetCommit(r.st, h)
		if err != nil {
			return err
		}
		return r.st.HasEncodedObject(c.TreeHash)
	}
	if err := check(); err != nil {
		r.st.refresh()
		if err := check(); err != nil {
			return fmt.Errorf("commit %s is not in the memory after writing it: %w", h, err)
		}
	}
	return nil
}

// smallTree is the size below which an add's pack stores a tree
// uncompressed. Most of an add's trees are small (~5 per exchange: the
// root and the folders down to the exchange's file) and mostly hashes:
// deflating one cost about as much as a commit for a few per cent of its
// size (the coding corpus's 15,495 trees, all < 1 KiB: 3.85 MB stored,
// 3.74 MB at BestSpeed, and about half of the add's zlib time). A folder
// of many exchanges is larger and compresses by a third (at 100,000, the
// add of 1,000 writes 999 trees of 1–4 KiB: 2.49 MB stored, 1.70 MB
// deflated), so those are deflated: storing every tree made that pack 20 %
// larger, and a repack keeps stored objects as they are (session 14's
// "tried and dropped"; docs/BENCHMARKS.md, session 19).
const smallTree = 1024

// flush writes the batch's objects into the repo: loose for a few, one
// undeltified pack for many, its trees below smallTree bytes stored
// uncompressed (writePackOpt).
func (r *Repo) flush(mem *memory.Storage, order []plumbing.Hash) error {
	if len(order) < packThreshold*7 {
		for _, h := range order {
			o, err := mem.EncodedObject(plumbing.AnyObject, h)
			if err != nil {
				return err
			}
			if _, err := r.st.SetEncodedObject(o); err != nil {
				return fmt.Errorf("write object %s: %w", h, err)
			}
		}
		return nil
	}
	return r.writePackOpt(mem, order, smallTree)
}

// overlay reads objects from the batch in memory first, then from the repo.
type overlay struct {
	mem  *memory.Storage
	disk *Repo
}

func (o overlay) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }
func (o overlay) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	return o.mem.SetEncodedObject(obj)
}
func (o overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if obj, err := o.mem.EncodedObject(t, h); err == nil {
		return obj, nil
	}
	return o.disk.st.EncodedObject(t, h)
}
func (o overlay) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return o.disk.st.IterEncodedObjects(t)
}
func (o overlay) HasEncodedObject(h plumbing.Hash) error {
	if o.mem.HasEncodedObject(h) == nil {
		return nil
	}
	return o.disk.st.HasEncodedObject(h)
}
func (o overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if s, err := o.mem.EncodedObjectSize(h); err == nil {
		return s, nil
	}
	return o.disk.st.EncodedObjectSize(h)
}
func (o overlay) AddAlternate(remote string) error { return errors.New("not supported") }
