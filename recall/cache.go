package recall

import (
	"bufio"
	"context"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
)

// cacheVersion changes whenever the cached fields or their meaning change;
// a cache of another version is rebuilt.
const cacheVersion = 1

// cacheFile is <gitdir>/mem/cache/recall.bin: every card of main, newest
// first, and the commit main pointed at when it was written. Walking 15k
// commits through go-git takes seconds; the SessionStart hook has 300 ms.
type cacheFile struct {
	Version int
	Head    string
	Entries []memory.Entry
}

// CachePath is where the card cache of m lives.
func CachePath(m *memory.Memory) string {
	return filepath.Join(m.Repo.MemDir(), "cache", "recall.bin")
}

// Entries returns every stored card once, newest first by the exchange's own
// time (as memory.Entries), from the card cache. When main has moved, only
// the new commits are walked and the cache is rewritten (atomically); a
// missing, corrupt or other-version cache is rebuilt from the commits. note
// says when the cache could not be saved (the answer is still right).
func Entries(ctx context.Context, m *memory.Memory) (entries []*memory.Entry, note string, err error) {
	head, err := m.Repo.Head()
	if err != nil {
		return nil, "", fmt.Errorf("read main: %w", err)
	}
	if head.IsZero() {
		return []*memory.Entry{}, "", nil
	}
	path := CachePath(m)
	old, ok := loadCache(path)
	if ok && old.Head == head.String() {
		return pointers(old.Entries), "", nil
	}
	var oldHead plumbing.Hash
	if ok && plumbing.IsHash(old.Head) {
		oldHead = plumbing.NewHash(old.Head)
	} else {
		old = cacheFile{}
	}
	fresh, reached, err := walkNew(ctx, m, head, oldHead)
	if err != nil {
		return nil, "", err
	}
	all := fresh
	if reached {
		all = merge(fresh, old.Entries)
	}
	cf := cacheFile{Version: cacheVersion, Head: head.String(), Entries: all}
	if err := saveCache(path, cf); err != nil {
		note = fmt.Sprintf("the card cache was not saved (%v): the next run walks the history again", err)
	}
	return pointers(all), note, nil
}

// walkNew reads the cards of the commits from head down to (not including)
// stop. reached reports whether stop was met, i.e. the old cache still
// describes the rest of the history; otherwise (history rewritten, or no
// cache) the whole history was walked. Merge commits carry no exchange.
func walkNew(ctx context.Context, m *memory.Memory, head, stop plumbing.Hash) (out []memory.Entry, reached bool, err error) {
	seen := map[string]bool{}
	skip := func(h plumbing.Hash) bool {
		if !stop.IsZero() && h == stop {
			reached = true
			return true
		}
		return false
	}
	err = m.Repo.Walk(head, skip, func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(c.ParentHashes) > 1 {
			return nil
		}
		e := entryOf(c)
		if e.Exchange == "" || seen[e.Exchange] {
			return nil
		}
		seen[e.Exchange] = true
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("read memory log: %w", err)
	}
	sortEntries(out)
	return out, reached, nil
}

// merge puts the new cards before the cached ones (the first seen from main
// wins, as in memory.Entries) and keeps the newest-first order.
func merge(fresh, old []memory.Entry) []memory.Entry {
	if len(fresh) == 0 {
		return old
	}
	seen := make(map[string]bool, len(fresh))
	for _, e := range fresh {
		seen[e.Exchange] = true
	}
	all := make([]memory.Entry, 0, len(fresh)+len(old))
	all = append(all, fresh...)
	for _, e := range old {
		if !seen[e.Exchange] {
			all = append(all, e)
		}
	}
	sortEntries(all)
	return all
}

// sortEntries orders newest first by the exchange's time; the sort is stable,
// so ties keep walk order (the newer commit first).
func sortEntries(es []memory.Entry) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Time.After(es[j].Time) })
}

// entryOf parses a memory commit into its card. It mirrors memory's own
// parser; the cache version must change with it.
func entryOf(c *object.Commit) memory.Entry {
	msg := exchange.ParseMessage(c.Message)
	h := c.Hash.String()
	files := msg.Card.Files
	if files == nil {
		files = []string{}
	}
	return memory.Entry{
		Commit: h, Short: h[:7], Time: c.Author.When,
		Exchange: msg.Trailers.Exchange, Session: msg.Trailers.Session,
		Project: msg.Trailers.Project, Agent: msg.Trailers.Agent,
		Core: msg.Card.Core, Context: msg.Card.Context,
		Rooms: exchange.RoomStrings(msg.Card.Rooms), Files: files,
		Distiller: msg.Card.Distiller, Redacted: msg.Trailers.Redacted,
	}
}

func pointers(es []memory.Entry) []*memory.Entry {
	out := make([]*memory.Entry, len(es))
	for i := range es {
		if es[i].Rooms == nil {
			es[i].Rooms = []string{}
		}
		if es[i].Files == nil {
			es[i].Files = []string{}
		}
		out[i] = &es[i]
	}
	return out
}

// loadCache reads the cache; any problem (absent, corrupt, other version)
// means "rebuild", never an error: it is a cache.
func loadCache(path string) (cacheFile, bool) {
	f, err := os.Open(path)
	if err != nil {
		return cacheFile{}, false
	}
	defer f.Close()
	var cf cacheFile
	if err := gob.NewDecoder(bufio.NewReaderSize(f, 1<<16)).Decode(&cf); err != nil || cf.Version != cacheVersion {
		return cacheFile{}, false
	}
	return cf, true
}

func saveCache(path string, cf cacheFile) error {
	return memory.WriteFileAtomic(path, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<16)
		if err := gob.NewEncoder(w).Encode(cf); err != nil {
			return err
		}
		return w.Flush()
	})
}
