package memory

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestReadAhead: the rebuild's reader hands the batches on in order with
// their first Seq, reads at most one batch ahead of the one taken, ends
// the channel after a read error or a walk error (nothing after it), and
// stops early when asked, its goroutine done once the channel is drained.
func TestReadAhead(t *testing.T) {
	errRead := errors.New("read failed")
	errWalk := errors.New("walk failed")
	cases := []struct {
		name     string
		batches  []int // commits per batch
		readFail int   // batch whose read fails (-1: none)
		walkFail int   // batch before which the walk fails (-1: none)
		stopAt   int   // batches the caller takes before it stops (-1: all)
		wantN    int   // batches handed on
		wantErr  error
	}{
		{name: "all", batches: []int{3, 3, 3, 1}, readFail: -1, walkFail: -1, stopAt: -1, wantN: 4},
		{name: "one", batches: []int{5}, readFail: -1, walkFail: -1, stopAt: -1, wantN: 1},
		{name: "none", batches: nil, readFail: -1, walkFail: -1, stopAt: -1, wantN: 0},
		{name: "read fails", batches: []int{2, 2, 2, 2}, readFail: 2, walkFail: -1, stopAt: -1, wantN: 2, wantErr: errRead},
		{name: "first read fails", batches: []int{2, 2}, readFail: 0, walkFail: -1, stopAt: -1, wantN: 0, wantErr: errRead},
		{name: "walk fails", batches: []int{2, 2, 2}, readFail: -1, walkFail: 1, stopAt: -1, wantN: 1, wantErr: errWalk},
		{name: "caller stops", batches: []int{1, 1, 1, 1, 1, 1}, readFail: -1, walkFail: -1, stopAt: 2, wantN: 2},
		{name: "caller stops at once", batches: []int{1, 1, 1}, readFail: -1, walkFail: -1, stopAt: 0, wantN: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reads, taken atomic.Int32
			var over atomic.Bool // a read began more than one batch ahead of the taken one
			each := func(fn func([]*object.Commit) error) error {
				for i, n := range tc.batches {
					if i == tc.walkFail {
						return errWalk
					}
					batch := make([]*object.Commit, n)
					for j := range batch {
						batch[j] = &object.Commit{Hash: plumbing.NewHash(fmt.Sprintf("%040x", i*100+j))}
					}
					if err := fn(batch); err != nil {
						return err
					}
				}
				return nil
			}
			read := func(_ context.Context, batch []*object.Commit, seq int) batchRead {
				i := int(reads.Add(1)) - 1
				// The caller holds batch taken-1 at most; this one may be
				// the next, never the one after it.
				if i > int(taken.Load())+1 {
					over.Store(true)
				}
				if i == tc.readFail {
					return batchRead{err: errRead}
				}
				time.Sleep(time.Millisecond) // give a runaway reader the time to run ahead
				return batchRead{commits: batch, seq: seq}
			}
			stop := make(chan struct{})
			out := readAhead(context.Background(), stop, each, read)
			var got []batchRead
			var gotErr error
			for tc.stopAt < 0 || len(got) < tc.stopAt {
				b, ok := <-out
				if !ok {
					break
				}
				if b.err != nil {
					gotErr = b.err
					break
				}
				got = append(got, b)
				time.Sleep(2 * time.Millisecond) // the caller indexes it
				taken.Add(1)
			}
			close(stop)
			done := make(chan struct{})
			go func() {
				for range out {
				}
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the reader did not end after stop")
			}
			if !errors.Is(gotErr, tc.wantErr) {
				t.Fatalf("error %v, want %v", gotErr, tc.wantErr)
			}
			if len(got) != tc.wantN {
				t.Fatalf("%d batches handed on, want %d", len(got), tc.wantN)
			}
			seq := 0
			for i, b := range got {
				if b.seq != seq || len(b.commits) != tc.batches[i] {
					t.Fatalf("batch %d: seq %d, %d commits; want seq %d, %d commits", i, b.seq, len(b.commits), seq, tc.batches[i])
				}
				if want := plumbing.NewHash(fmt.Sprintf("%040x", i*100)); b.commits[0].Hash != want {
					t.Fatalf("batch %d: first commit %s, want %s (out of order)", i, b.commits[0].Hash, want)
				}
				seq += len(b.commits)
			}
			if over.Load() {
				t.Fatal("a batch was read more than one ahead of the one being indexed")
			}
		})
	}
}

// TestReadAheadCancelled: a cancelled context ends the reading with its
// error before the next batch is read.
func TestReadAheadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var reads atomic.Int32
	each := func(fn func([]*object.Commit) error) error {
		for range 5 {
			if err := fn([]*object.Commit{{}}); err != nil {
				return err
			}
		}
		return nil
	}
	read := func(_ context.Context, batch []*object.Commit, seq int) batchRead {
		reads.Add(1)
		return batchRead{commits: batch, seq: seq}
	}
	stop := make(chan struct{})
	defer close(stop)
	out := readAhead(ctx, stop, each, read)
	b := <-out
	if b.err != nil {
		t.Fatal(b.err)
	}
	cancel()
	var err error
	for b := range out {
		if b.err != nil {
			err = b.err
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := reads.Load(); n > 3 {
		t.Fatalf("%d batches read after the cancel, want at most the one ahead", n)
	}
}
