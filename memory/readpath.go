package memory

import (
	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/memory/reader"
	"github.com/gitmem/git-mem/search"
)

// The read path (config, cards, search, links, the index's lock) lives in
// package memory/reader, which links none of the writers' libraries, so
// that git-mem-search starts fast (docs/BENCHMARKS.md, session 24); these
// name it here for memory's callers.

type (
	Config        = reader.Config
	OpenAIConfig  = reader.OpenAIConfig
	SearchConfig  = reader.SearchConfig
	ExcludeConfig = reader.ExcludeConfig
	Entry         = reader.Entry
	Filter        = reader.Filter
	FilterSpec    = reader.FilterSpec
	SearchQuery   = reader.SearchQuery
	Result        = reader.Result
	Pin           = reader.Pin
	Links         = reader.Links
	Rerank        = reader.Rerank
)

const (
	DefaultServerIdle   = reader.DefaultServerIdle
	DisableEnv          = reader.DisableEnv
	MaxQueryBytes       = reader.MaxQueryBytes
	TrailerKind         = reader.TrailerKind
	TrailerPinned       = reader.TrailerPinned
	TrailerSupersedes   = reader.TrailerSupersedes
	TrailerSupersededBy = reader.TrailerSupersededBy
	KindPin             = reader.KindPin
	KindUnpin           = reader.KindUnpin
	KindSupersede       = reader.KindSupersede
	KindUnsupersede     = reader.KindUnsupersede
	SuffixLiving        = reader.SuffixLiving
	SuffixRecent        = reader.SuffixRecent
	RecencyBoost        = reader.RecencyBoost
	notePrefix          = reader.NotePrefix
)

// The classes of error a caller acts on (reader/errors.go).
var (
	ErrNoMemory       = reader.ErrNoMemory
	ErrLocked         = reader.ErrLocked
	ErrInvalid        = reader.ErrInvalid
	ErrNotFound       = reader.ErrNotFound
	ErrNoSuchExchange = reader.ErrNoSuchExchange
	ErrBadQuery       = reader.ErrBadQuery
)

var (
	DefaultConfig   = reader.DefaultConfig
	LoadConfig      = reader.LoadConfig
	CaptureDisabled = reader.CaptureDisabled
	ParseTime       = reader.ParseTime
	CheckQuery      = reader.CheckQuery
	MarkWith        = reader.MarkWith
	SplitMode       = reader.SplitMode
	RerankHits      = reader.RerankHits
	AsksForLatest   = reader.AsksForLatest
)

func newClassed(msg string, class error) error { return reader.NewClassed(msg, class) }
func invalid(err error) error                  { return reader.Invalid(err) }
func inClass(err, class error) error           { return reader.InClass(err, class) }
func nonNil(s []string) []string               { return reader.NonNil(s) }
func short(h string) string                    { return reader.Short(h) }
func toSearchFilter(f Filter) search.Filter    { return reader.ToSearchFilter(f) }
func linksIn(ix *search.Index) (*Links, error) { return reader.LinksIn(ix) }
func linksOf(ix *search.Index, ids []string) (*Links, error) {
	return reader.LinksOf(ix, ids)
}

func (m *Memory) lockIndex(shared bool) (*gitstore.FileLock, error) {
	return m.LockIndex(shared, reader.IndexLockTimeout)
}
func (m *Memory) currentGen() string      { return m.CurrentGen() }
func (m *Memory) isStale(gen string) bool { return m.IsStale(gen) }
func (m *Memory) searchIn(ix *search.Index, q SearchQuery) ([]Result, error) {
	return m.SearchIn(ix, q)
}
