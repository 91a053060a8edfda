// Package search is git mem's index and search engine: a Bleve index whose
// postings feed a BM25 scorer over the verbatim exchange and its distilled
// card, a vector index of the distilled text, reciprocal-rank fusion, filters
// and near-duplicate collapsing. It knows nothing of git: the memory package
// walks commits and hands it Docs. Everything under the index directory is a
// cache; Remove and re-Add rebuild it to the same results.
package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bleveindex "github.com/blevesearch/bleve_index_api"
	bolt "go.etcd.io/bbolt"

	"github.com/gitmem/git-mem/search/embed"
	"github.com/gitmem/git-mem/search/vector"
)

// Doc is one exchange as the index sees it.
type Doc struct {
	// Seq is the commit order, 0 = oldest. It is the fixed tie-break key of
	// every ranking: on equal scores the newer exchange (higher Seq) wins.
	Seq     int
	Commit  string // full commit hash
	ID      string // exchange id; re-adding an id replaces the document
	Time    time.Time
	Core    string // card: exchange_core
	Context string // card: specific_context
	Rooms   []string
	Files   []string
	Project string
	Agent   string
	Session string
	// Verbatim and Output are exchange.RenderSplit: the talk (turns, tool
	// names and inputs) and the tools' results. Both are indexed, never
	// stored by the index; verbatim-bm25 ranks them as one text, the
	// session layer mostly by the talk (see OutputWeight).
	Verbatim string
	Output   string
	// Head and Tail are the text of the first and the last turn that is not
	// a tool's: what opens the exchange and what closes it. A question that
	// closes one exchange is answered by the next (see ModeSessionBM25).
	Head, Tail string
}

// Distilled is the text of the card that the distilled layers search.
func (d *Doc) Distilled() string { return strings.TrimSpace(d.Core + " " + d.Context) }

// Options configure Open.
type Options struct {
	// Embedder computes the vectors of the distilled-vector layer; nil means
	// embed.NewBuiltin().
	Embedder embed.Embedder
	// Logf, when set, receives progress notes (e.g. an index built over
	// the HNSW crossover).
	Logf func(format string, args ...any)
	// EarlyContext, for a read-only open, maps and checks the session
	// context (context.bin and its reader's cache, sessctx.bin) on a
	// goroutine of its own while the open goes on (early_context.go): a
	// process that opens the index for one session-bm25 search.
	EarlyContext bool
}

// Errors of Open and OpenReadOnly. Each carries the fix in its message.
var (
	ErrCorrupt  = errors.New("search index is corrupt: run `git mem reindex`")
	ErrMismatch = errors.New("search index was built differently: run `git mem reindex`")
	ErrMissing  = errors.New("no search index: run `git mem reindex`")
	ErrBusy     = errors.New("search index is being written by another git mem process: try again in a moment")
	ErrReadOnly = errors.New("search index is open read-only")
)

// SchemaVersion changes whenever the on-disk layout or the meaning of a field
// changes; an index of another version is reported as mismatched.
// 5: the index lives in a generation folder named by mem/index/CURRENT, is
// sealed (seal.go), and the manifest carries a digest of the document set.
// 6: links.json, derived supersession links and pins (links.go).
// 7: links.bin and events.json for links.json (links_store.go), at most
// linkCap links derived per card.
// 8: Bleve holds only the text fields (no keyword or time fields).
// 9: docs.bin names repeated strings from a dictionary (table.go).
// 10: vectors.f32 stores sparse rows when that is smaller (vector.Flat).
// 11: docs.bin, minhash.bin and vectors.f32 are appended to; the manifest
// holds their committed lengths and checksums (DocsFile, SigsCRC, Vecs).
const SchemaVersion = 11

// Files under the index directory.
const (
	manifestFile = "manifest.json"
	bleveDir     = "bleve"
	docsFile     = "docs.bin"
	vectorsFile  = "vectors.f32"
	hnswFile     = "vectors.hnsw"
	sigsFile     = "minhash.bin"
)

// bm25Totals are the true corpus statistics BM25 needs. Bleve v2.6.3 derives
// the average field length from per-segment unique-term counts (and rounds
// it up), so it is kept here, exactly, instead.
type bm25Totals struct {
	Docs int `json:"docs"`
	// FieldLen is the total terms per field that bm25Layer scores (the
	// distilled field); the verbatim layers take lengths from the table.
	FieldLen map[string]int64 `json:"field_len"`
}

type manifest struct {
	Schema     int        `json:"schema"`
	Analyzer   string     `json:"analyzer"`
	Embedder   string     `json:"embedder"`
	Dims       int        `json:"dims"`
	LastCommit string     `json:"last_commit,omitempty"`
	LastSeq    int        `json:"last_seq"`
	Docs       int        `json:"docs"`
	BM25       bm25Totals `json:"bm25"`
	HNSW       bool       `json:"hnsw,omitempty"` // a graph file is present
	Updated    time.Time  `json:"updated"`
	// Digest is the XOR of a hash of (exchange id, commit) over every
	// document, kept incrementally, so that the document set can be compared
	// with main's without listing it.
	Digest string `json:"digest,omitempty"`
	// Dead are the rows ForgetDocs emptied (forget.go).
	Dead []int32 `json:"dead,omitempty"`
	// SigsCRC is the CRC-32C of minhash.bin's committed length (Docs
	// rows): the file is appended to, and this manifest, renamed into
	// place, is what commits the rows (dedup.go).
	SigsCRC uint32 `json:"sigs_crc"`
	// Vecs commits vectors.f32 the same way (vector.Flat.Append), and
	// DocsFile docs.bin (appendTable).
	Vecs     vector.State `json:"vectors"`
	DocsFile docsState    `json:"docs_file"`
}

// docRec is what the index keeps per document besides its postings: the
// fields a hit shows and the filters test, BM25 lengths and the dedup
// hash. Row i of the table is row i of the vector matrix and of the MinHash
// signatures, which live in their own file because only a writer needs them.
type docRec struct {
	Seq                     int
	Commit, ID              string
	Time                    time.Time
	Core, Context           string
	Rooms, Files            []string
	Project, Agent, Session string
	VerbLen, DistLen        int32
	OutLen                  int32 // terms of the output field (VerbLen counts the talk only)
	HeadLen, AskLen         int32 // terms of the head field and of the asked field (0: no question)
	Exact                   uint64
	Group                   int32     // row of the group's first member
	Link                    *linkMeta // what the link rule reads of the card; nil: not yet worked out
}

func (r *docRec) doc() Doc {
	return Doc{Seq: r.Seq, Commit: r.Commit, ID: r.ID, Time: r.Time, Core: r.Core, Context: r.Context,
		Rooms: r.Rooms, Files: r.Files, Project: r.Project, Agent: r.Agent, Session: r.Session}
}

// Index is an open search index. Search is safe for concurrent use; Add and
// SetLastCommit must not run concurrently with anything else.
type Index struct {
	dir      string
	readOnly bool
	emb      embed.Embedder
	logf     func(string, ...any)
	idx      bleve.Index
	man      manifest
	seqs     []int            // per row: Seq (ranking tie-break)
	groups   []int32          // per row: dedup group
	tab      *table           // read-only: records decoded on demand
	recs     []docRec         // all records (writer; reader once a filter needs them); rows recOff().. while lazy
	lazy     *lazyRows        // a writer's loaded rows, not decoded (nil: recs holds every row)
	byID     map[string]int32 // writer only (rows recOff()..)
	vecs     *vector.Flat     // loaded on first use by a reader
	sigs     [][sigLen]uint32 // loaded by the first Add
	sigsFree func()           // unmaps sigs (mapSigs); nil: in the heap
	// sigsKept: sigs[:sigsKept] are minhash.bin's committed rows unchanged,
	// so a flush appends the rest (-1: the file is written whole).
	sigsKept int
	// sealKnown: checksums of files this writer wrote, for the seal.
	sealKnown map[string]sealEntry
	graph     *vector.HNSW // nil below the crossover
	dirty     bool
	broken    error // a failed batch: the tables must not be written
	// bleveBatch: documents per Bleve batch of this Index's Adds (0:
	// BatchSize); see SetBleveBatch.
	bleveBatch int
	// touched: a record loaded from tab may have changed (replaced,
	// emptied, moved, given link meta), so flush encodes every row again
	// instead of copying the loaded rows' bytes (writeTable's keep).
	touched bool

	mu          sync.Mutex       // guards lazy loading (recs, vecs, graph)
	cacheMu     sync.Mutex       // guards rowCache
	rowCache    map[uint64]int32 // Bleve internal id → row (read-only indexes)
	rowMap      []int32          // the same for every id, saved per snapshot (rowmap.go)
	rowMapTried bool
	runsMu      sync.Mutex
	runsOf      map[[2]uint64]segRuns        // rowMap's runs by segment offset and size (postings.go)
	pcache      atomic.Pointer[postingCache] // decoded postings kept (KeepPostings), nil for none
	grows       atomic.Pointer[groupRows]    // rows of shared dedup groups, kept with pcache (members.go)
	tcounts     atomic.Pointer[termCounts]   // terms' postings counts, kept with pcache (termcounts.go)

	ctxMu sync.Mutex
	sctx  *sessionCtx   // session neighbours (session-bm25), built or loaded on first use
	early *earlyContext // the session context being read since the open (Options.EarlyContext)

	coocOnce sync.Once // term associations (rank_cooc.go, an experiment)
	coocTab  *coocTable
	coocErr  error

	tdoc      *termsDoc // how the mapping builds a document (termsDocOf); nil: by indexTerms
	tdocKnown bool

	lst  *linkState     // supersession links and events (links.go), guarded by mu for readers
	dead map[int32]bool // man.Dead as a set, built on first use

	// built lazily on the first Add of a large batch (see dedupScan)
	sigsLoaded bool
	scanned    int // rows × documents grouped by dedupScan so far
	passed     int // rows read by dedupPass so far
	pass       *batchDedup
	exactIdx   map[uint64]int32
	bands      *bandIndex
}

// Open opens the index in dir (normally <gitdir>/mem/index) for writing,
// creating it when missing. A corrupt index returns ErrCorrupt, one built
// with another schema or embedder ErrMismatch, one held by another writer
// ErrBusy (after waiting up to a second).
func Open(dir string, opt Options) (*Index, error) { return open(dir, opt, false) }

// OpenReadOnly opens an existing index for searching. It never blocks for
// more than about a second: while a writer holds the index it returns
// ErrBusy. A missing index returns ErrMissing.
func OpenReadOnly(dir string, opt Options) (*Index, error) { return open(dir, opt, true) }

// Remove deletes the index in dir (for `git mem reindex`).
func Remove(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove search index: %w", err)
	}
	return nil
}

func open(dir string, opt Options, readOnly bool) (*Index, error) {
	emb := opt.Embedder
	if emb == nil {
		emb = embed.NewBuiltin()
	}
	ix := &Index{dir: dir, readOnly: readOnly, emb: emb, logf: opt.Logf, byID: map[string]int32{}, sigsKept: -1}
	if ix.logf == nil {
		ix.logf = func(string, ...any) {}
	}
	raw, err := os.ReadFile(filepath.Join(dir, manifestFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		if readOnly {
			return nil, fmt.Errorf("%s: %w", dir, ErrMissing)
		}
		return ix, ix.create()
	case err != nil:
		return nil, fmt.Errorf("read search manifest: %w", err)
	}
	if err := ix.takeManifest(raw); err != nil {
		return nil, err
	}
	if readOnly && opt.EarlyContext {
		ix.startContext()
	}
	if err := ix.openBleve(); err != nil {
		ix.waitContext()
		return nil, err
	}
	if err := ix.loadTables(); err != nil {
		ix.waitContext()
		ix.idx.Close()
		return nil, err
	}
	return ix, nil
}

// LastCommitAt reads the last commit indexed in dir with the checks Open
// makes before it loads anything (the manifest, its schema, analyzer and
// embedder, the files' sizes against the seal), loading nothing: a sync
// that did not move main asks it whether there is anything to index, which
// Open answered by loading the tables (0.25 s of CPU at 1,000,000
// exchanges). Any error is Open's; then the caller opens the index.
func LastCommitAt(dir string, opt Options) (string, error) {
	emb := opt.Embedder
	if emb == nil {
		emb = embed.NewBuiltin()
	}
	ix := &Index{dir: dir, emb: emb}
	raw, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return "", fmt.Errorf("read search manifest: %w", err)
	}
	if err := ix.takeManifest(raw); err != nil {
		return "", err
	}
	return ix.man.LastCommit, nil
}

// takeManifest decodes the manifest raw and makes the checks that come
// before anything is loaded: schema, analyzer and embedder, and the files'
// sizes and times against the seal.
func (ix *Index) takeManifest(raw []byte) error {
	if err := json.Unmarshal(raw, &ix.man); err != nil {
		return fmt.Errorf("%s: manifest: %v: %w", ix.dir, err, ErrCorrupt)
	}
	if err := ix.check(); err != nil {
		return err
	}
	return ix.checkSizes()
}

func (ix *Index) check() error {
	m := ix.man
	switch {
	case m.Schema != SchemaVersion:
		return fmt.Errorf("%s: schema %d, this git mem writes %d: %w", ix.dir, m.Schema, SchemaVersion, ErrMismatch)
	case m.Analyzer != embed.AnalyzerVersion:
		return fmt.Errorf("%s: analyzer %q, this git mem uses %q: %w", ix.dir, m.Analyzer, embed.AnalyzerVersion, ErrMismatch)
	case m.Embedder != ix.emb.Name() || m.Dims != ix.emb.Dims():
		return fmt.Errorf("%s: built with embedder %s (%d dims), configured %s (%d dims): %w",
			ix.dir, m.Embedder, m.Dims, ix.emb.Name(), ix.emb.Dims(), ErrMismatch)
	}
	return nil
}

// checkSizes compares the files on disk with the seal the writer left
// (sizes and times: a stat per file).
func (ix *Index) checkSizes() error {
	if err := checkSeal(ix.dir, false); err != nil {
		return fmt.Errorf("%s: %v: %w", ix.dir, err, ErrCorrupt)
	}
	return nil
}

// Verify reads every file of the index and checks its checksum, and that
// Bleve holds one document per row (`git mem check`).
func (ix *Index) Verify() error {
	if err := checkSeal(ix.dir, true); err != nil {
		return fmt.Errorf("%s: %v: %w", ix.dir, err, ErrCorrupt)
	}
	if _, err := readTableState(filepath.Join(ix.dir, docsFile), true, &ix.man.DocsFile); err != nil {
		return fmt.Errorf("%s: document table: %v: %w", ix.dir, err, ErrCorrupt)
	}
	if _, err := readContext(filepath.Join(ix.dir, contextFile), len(ix.seqs)); err != nil {
		return fmt.Errorf("%s: session context: %v: %w", ix.dir, err, ErrCorrupt)
	}
	if _, err := readSigs(filepath.Join(ix.dir, sigsFile), len(ix.seqs), ix.man.SigsCRC); err != nil {
		return fmt.Errorf("%s: signatures: %v: %w", ix.dir, err, ErrCorrupt)
	}
	if err := ix.ensureVectors(); err != nil {
		return err
	}
	n, err := ix.idx.DocCount()
	if err != nil {
		return fmt.Errorf("%s: bleve: %v: %w", ix.dir, err, ErrCorrupt)
	}
	if int(n) != len(ix.seqs) {
		return fmt.Errorf("%s: bleve holds %d documents, the table %d: %w", ix.dir, n, len(ix.seqs), ErrCorrupt)
	}
	return nil
}

// Docs lists the indexed documents' exchange ids with the commit each was
// indexed from.
func (ix *Index) Docs() (map[string]string, error) {
	out := make(map[string]string, len(ix.seqs))
	for i := range ix.seqs {
		r, err := ix.rec(int32(i))
		if err != nil {
			return nil, err
		}
		if isDead(r.ID) {
			continue
		}
		out[r.ID] = r.Commit
	}
	return out, nil
}

// Digest is the digest of the document set (see DocDigest).
func (ix *Index) Digest() string { return ix.man.Digest }

// Known reports whether the writer has a document for the exchange id.
func (ix *Index) Known(id string) bool { _, ok := ix.rowOfID(id); return ok }

// DocDigest is one document's part of the set digest: XOR them over a set.
func DocDigest(id, commit string) uint64 { return docDigest(id, commit) }

// DocDigestBytes is DocDigest of raw bytes, for scans that decode no string.
func DocDigestBytes(id, commit []byte) uint64 { return docDigest(id, commit) }

// docDigest is FNV-64a of id, a zero byte and commit, without the
// allocations of hash/fnv's Write on strings.
func docDigest[T string | []byte](id, commit T) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * prime
	}
	h *= prime // the zero byte: h ^ 0 = h
	for i := 0; i < len(commit); i++ {
		h = (h ^ uint64(commit[i])) * prime
	}
	return h
}

func (ix *Index) xorDigest(v uint64) {
	cur, _ := strconv.ParseUint(ix.man.Digest, 16, 64)
	ix.man.Digest = fmt.Sprintf("%016x", cur^v)
}

// create starts an empty index. Leftovers of a creation that crashed before
// its manifest was written are discarded: the index is a cache.
func (ix *Index) create() error {
	for _, name := range []string{bleveDir, docsFile, vectorsFile, hnswFile, sigsFile, contextFile} {
		if err := os.RemoveAll(filepath.Join(ix.dir, name)); err != nil {
			return fmt.Errorf("create search index: %w", err)
		}
	}
	if err := os.MkdirAll(ix.dir, 0o755); err != nil {
		return fmt.Errorf("create search index: %w", err)
	}
	idx, err := bleve.NewUsing(filepath.Join(ix.dir, bleveDir), newMapping(), scorch.Name, scorch.Name,
		map[string]any{"bolt_timeout": "1s"})
	if err != nil {
		return fmt.Errorf("create search index: %w", err)
	}
	ix.idx = idx
	ix.vecs = vector.NewFlat(ix.emb.Dims())
	ix.recs = []docRec{}
	ix.man = manifest{Schema: SchemaVersion, Analyzer: embed.AnalyzerVersion, Embedder: ix.emb.Name(),
		Dims: ix.emb.Dims(), LastSeq: -1, BM25: bm25Totals{FieldLen: map[string]int64{}}}
	ix.dirty = true
	if err := ix.flush(); err != nil {
		idx.Close()
		return err
	}
	return nil
}

func (ix *Index) openBleve() error {
	cfg := map[string]any{"bolt_timeout": "1s"}
	if ix.readOnly {
		cfg["read_only"] = true
	}
	idx, err := bleve.OpenUsing(filepath.Join(ix.dir, bleveDir), cfg)
	if err != nil {
		// OpenUsing can return a non-nil interface around a nil pointer:
		// only err is trusted.
		if errors.Is(err, bolt.ErrTimeout) || strings.Contains(err.Error(), "timeout") {
			return fmt.Errorf("%s: %w", ix.dir, ErrBusy)
		}
		return fmt.Errorf("%s: bleve: %v: %w", ix.dir, err, ErrCorrupt)
	}
	ix.idx = idx
	return nil
}

func (ix *Index) loadTables() error {
	tab, err := readTableCols(filepath.Join(ix.dir, docsFile), !ix.readOnly, &ix.man.DocsFile, ix.readOnly)
	if err != nil {
		return fmt.Errorf("%s: document table: %v: %w", ix.dir, err, ErrCorrupt)
	}
	n := len(tab.seqs)
	if n != ix.man.Docs {
		return fmt.Errorf("%s: manifest says %d docs, table has %d: %w", ix.dir, ix.man.Docs, n, ErrCorrupt)
	}
	// A truncated vector file is caught here by its size; its checksum is
	// verified when a reader first needs the vectors.
	if st, err := os.Stat(filepath.Join(ix.dir, vectorsFile)); err != nil || st.Size() < ix.man.Vecs.Size || ix.man.Vecs.Rows != n {
		return fmt.Errorf("%s: vectors: missing, shorter than %d bytes or not %d rows: %w", ix.dir, ix.man.Vecs.Size, n, ErrCorrupt)
	}
	ix.tab, ix.seqs, ix.groups = tab, tab.seqs, tab.groups
	if ix.readOnly {
		return nil
	}
	// The writer decodes no record yet (lazyRows): most add only rows.
	lz, err := scanLazy(tab)
	if err != nil {
		return fmt.Errorf("%s: %v: %w", ix.dir, err, ErrCorrupt)
	}
	ix.lazy, ix.recs = lz, []docRec{}
	// Nor any vector: the new rows go after the file's (vector.OpenAppend);
	// ensureVectors reads the file's when something needs them.
	vecs, err := vector.OpenAppend(filepath.Join(ix.dir, vectorsFile), ix.man.Vecs)
	if err != nil {
		return fmt.Errorf("%s: vectors: %v: %w", ix.dir, err, ErrCorrupt)
	}
	if vecs.Len() != n || vecs.Dims != ix.man.Dims {
		return fmt.Errorf("%s: %d docs but %d×%d vectors: %w", ix.dir, n, vecs.Len(), vecs.Dims, ErrCorrupt)
	}
	ix.vecs = vecs
	return nil
}

// ensureFull decodes every record (a writer that does more than append,
// or a filtered search).
func (ix *Index) ensureFull() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if lz := ix.lazy; lz != nil {
		recs := make([]docRec, lz.n, withRoom(lz.n+len(ix.recs)))
		if err := ix.tab.all(recs); err != nil {
			return fmt.Errorf("%s: %v: %w", ix.dir, err, ErrCorrupt)
		}
		for r, p := range lz.cache { // a record given its link meta stays so
			recs[r] = *p
		}
		recs = append(recs, ix.recs...)
		ix.byID = make(map[string]int32, cap(recs)) // sized: rehashing a million ids was 0.7 s
		for i := range recs {
			ix.byID[recs[i].ID] = int32(i)
		}
		ix.recs, ix.lazy = recs, nil
		return nil
	}
	if ix.recs != nil || ix.tab == nil {
		return nil
	}
	recs := make([]docRec, len(ix.seqs), withRoom(len(ix.seqs)))
	if err := ix.tab.all(recs); err != nil {
		return fmt.Errorf("%s: %v: %w", ix.dir, err, ErrCorrupt)
	}
	ix.recs = recs
	return nil
}

// withRoom is the capacity a writer's per-row slices are loaded with, so
// that appending the rows of an add does not copy them all (a million
// records are a quarter of a gigabyte).
func withRoom(n int) int { return n + n/32 + 64 }

// tableSize estimates the document table's size after a flush from the
// table loaded, so writeTable allocates once.
func (ix *Index) tableSize() int {
	if ix.tab == nil || len(ix.tab.seqs) == 0 {
		return 0
	}
	per := len(ix.tab.raw) / len(ix.tab.seqs)
	return len(ix.tab.raw) + (len(ix.recs)-len(ix.tab.seqs))*per*2 + 64<<10
}

// rec returns the record of row.
func (ix *Index) rec(row int32) (docRec, error) {
	ix.mu.Lock()
	recs, lz := ix.recs, ix.lazy
	ix.mu.Unlock()
	switch {
	case lz != nil && int(row) >= lz.n:
		return recs[int(row)-lz.n], nil
	case lz != nil && lz.cache[row] != nil:
		return *lz.cache[row], nil
	case lz == nil && recs != nil:
		return recs[row], nil
	}
	r, err := ix.tab.rec(int(row))
	if err != nil {
		return r, fmt.Errorf("%s: %v: %w", ix.dir, err, ErrCorrupt)
	}
	return r, nil
}

// ensureVectors loads the vector file (and graph) on first use.
func (ix *Index) ensureVectors() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.vecs != nil {
		if !ix.vecs.Hollow() {
			return nil
		}
		if err := ix.vecs.Fill(filepath.Join(ix.dir, vectorsFile)); err != nil { // a writer's (OpenAppend)
			return fmt.Errorf("%s: vectors: %v: %w", ix.dir, err, ErrCorrupt)
		}
		if ix.man.HNSW && ix.graph == nil && !ix.dirty { // the graph of the committed vectors, as an open read it
			g, err := vector.ReadHNSW(filepath.Join(ix.dir, hnswFile), ix.vecs)
			if err != nil {
				return fmt.Errorf("%s: hnsw graph: %v: %w", ix.dir, err, ErrCorrupt)
			}
			ix.graph = g
		}
		return nil
	}
	vecs, err := vector.ReadFlatState(filepath.Join(ix.dir, vectorsFile), ix.man.Vecs)
	if err != nil {
		return fmt.Errorf("%s: vectors: %v: %w", ix.dir, err, ErrCorrupt)
	}
	if vecs.Len() != len(ix.seqs) || vecs.Dims != ix.man.Dims {
		return fmt.Errorf("%s: %d docs but %d×%d vectors: %w", ix.dir, len(ix.seqs), vecs.Len(), vecs.Dims, ErrCorrupt)
	}
	if ix.man.HNSW {
		g, err := vector.ReadHNSW(filepath.Join(ix.dir, hnswFile), vecs)
		if err != nil {
			return fmt.Errorf("%s: hnsw graph: %v: %w", ix.dir, err, ErrCorrupt)
		}
		ix.graph = g
	}
	ix.vecs = vecs
	return nil
}

// newMapping is deliberately lean: every field is indexed without term
// vectors, doc values or stored values (the document table holds what a hit
// shows, and the verbatim is read from git on demand). verbatim and
// distilled arrive pre-analysed by embed.Analyze as space-separated terms,
// so Bleve only splits on spaces: one analysis pipeline for index, query and
// embedder. Scoring is done by bm25.go over these postings; the mapping still
// names BM25 so that a query run through Bleve itself (e.g. the bleve CLI while
// debugging) uses its BM25 model rather than TF-IDF.
//
// Only the five text fields are in Bleve. Filters (project, agent, session,
// rooms, files, time) are tested on the document table's records, and no
// query ever read those fields' postings; indexed, the keyword fields and
// the time (16 prefix-coded terms per document) were 17 of Bleve's 49 MB at
// 100,000 exchanges, and 5–12 of a rebuild's 67 s of CPU (schema 8).
func newMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bleveindex.BM25Scoring
	if err := im.AddCustomAnalyzer(termsAnalyzerName, map[string]any{"type": "custom", "tokenizer": whitespace.Name}); err != nil {
		panic("search: mapping: " + err.Error()) // constant input
	}
	text := func() *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = termsAnalyzerName
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = false, false, false, false
		return f
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldVerbatim, text())
	dm.AddFieldMappingsAt(fieldOutput, text())
	dm.AddFieldMappingsAt(fieldDistilled, text())
	dm.AddFieldMappingsAt(fieldHead, text())
	dm.AddFieldMappingsAt(fieldAsked, text())
	im.DefaultMapping = dm
	im.DefaultAnalyzer = termsAnalyzerName
	im.StoreDynamic, im.IndexDynamic, im.DocValuesDynamic = false, false, false
	return im
}

const (
	fieldVerbatim  = "verbatim" // the talk: Doc.Verbatim and the date words
	fieldOutput    = "output"   // the tools' results: Doc.Output
	fieldDistilled = "distilled"
	fieldHead      = "head"  // the exchange's first turn
	fieldAsked     = "asked" // its last turn, only when that ends by asking a question
)

// BatchSize is how many documents go into one Bleve batch (measured: ~500
// keeps memory flat without losing throughput).
var BatchSize = 500

// SetBleveBatch makes each Bleve batch of this Index's later Adds up to n
// documents (n ≤ 0: BatchSize). Each batch is a segment that scorch's
// merger then merges with the others as they come; a caller that knows the
// whole build is small (a rebuild of a few thousand commits) gives a
// larger n, for a few segments that need no merging. Same documents and
// postings either way; only the segments differ.
func (ix *Index) SetBleveBatch(n int) { ix.bleveBatch = n }

// batchSize is the documents per Bleve batch (SetBleveBatch).
func (ix *Index) batchSize() int {
	if ix.bleveBatch > 0 {
		return ix.bleveBatch
	}
	return BatchSize
}

// Add indexes docs (a new ID is appended, a known ID replaced). Batches are
// Bleve's safe batches; the tables are written by SetLastCommit and Close.
func (ix *Index) Add(docs []Doc) error {
	if ix.readOnly {
		return ErrReadOnly
	}
	var bl bleveBatches
	size := ix.batchSize()
	for start := 0; start < len(docs); start += size {
		end := min(start+size, len(docs))
		if err := ix.addBatch(&bl, docs[start:end], nil, nil); err != nil {
			ix.endBatches(&bl)
			return err
		}
	}
	return ix.endBatches(&bl)
}

// Prepared is documents analysed ahead of Index.AddPrepared: a caller that
// indexes batch after batch (a rebuild) analyses the next one while Bleve
// takes the last, so that both cores stay busy (docs/BENCHMARKS.md,
// session 14).
type Prepared struct {
	docs  []Doc
	preps []prep
	vecs  [][]float32 // the cards' vectors (Index.Prepare), nil: embedded by AddPrepared
	emb   string      // the name of the embedder that made vecs
}

// Prepare analyses docs for AddPrepared. It reads nothing of any Index, so
// it may run beside an Index's methods.
func Prepare(docs []Doc) *Prepared {
	return &Prepared{docs: docs, preps: prepare(docs)}
}

// Prepare is the package's Prepare that also embeds the cards when the
// index's embedder is the builtin one (a pure function of the text, that
// never fails): at 100,000 exchanges that embedding was 12 of a reindex's
// 95 CPU-s, run by AddPrepared on the goroutine that feeds Bleve, while a
// rebuild prepares the next batch on another (docs/BENCHMARKS.md, session
// 23). Other embedders (a network service) still embed in AddPrepared. It
// reads only the embedder, set at Open: it may run beside the Index's
// writer.
func (ix *Index) Prepare(docs []Doc) *Prepared {
	p := Prepare(docs)
	if b, ok := ix.emb.(embed.Builtin); ok {
		texts := make([]string, len(docs))
		for i := range docs {
			texts[i] = docs[i].Distilled()
		}
		p.vecs, _ = b.Embed(contextBackground(), texts) // never fails
		p.emb = b.Name()
	}
	return p
}

// Docs are the documents, in the order given to Prepare.
func (p *Prepared) Docs() []Doc { return p.docs }

// Keep drops the documents whose keep[i] is false.
func (p *Prepared) Keep(keep []bool) {
	n := 0
	for i := range p.docs {
		if keep[i] {
			p.docs[n], p.preps[n] = p.docs[i], p.preps[i]
			if p.vecs != nil {
				p.vecs[n] = p.vecs[i]
			}
			n++
		}
	}
	clear(p.docs[n:])
	clear(p.preps[n:])
	p.docs, p.preps = p.docs[:n], p.preps[:n]
	if p.vecs != nil {
		clear(p.vecs[n:])
		p.vecs = p.vecs[:n]
	}
}

// AddPrepared is Add of p's documents, analysed already.
func (ix *Index) AddPrepared(p *Prepared) error {
	if ix.readOnly {
		return ErrReadOnly
	}
	vecs := p.vecs
	if vecs != nil && (p.emb != ix.emb.Name() || len(vecs) != len(p.docs)) {
		vecs = nil // made by another embedder: embedded again
	}
	var bl bleveBatches
	size := ix.batchSize()
	for start := 0; start < len(p.docs); start += size {
		end := min(start+size, len(p.docs))
		var v [][]float32
		if vecs != nil {
			v = vecs[start:end]
		}
		if err := ix.addBatch(&bl, p.docs[start:end], p.preps[start:end], v); err != nil {
			ix.endBatches(&bl)
			return err
		}
	}
	return ix.endBatches(&bl)
}

// endBatches waits for the Bleve batches of bl; on an error the tables
// hold documents Bleve may lack, and are never written.
func (ix *Index) endBatches(bl *bleveBatches) error {
	if err := bl.wait(); err != nil {
		ix.broken = err
		return fmt.Errorf("index batch: %w", err)
	}
	return nil
}

// OverlapBleveBatches: an Add of more than one Bleve batch builds a batch's
// segment while the batch after it is analysed and built (bleveBatches).
// Off, each Bleve batch ends before the next begins (tests compare both).
var OverlapBleveBatches = true

// bleveBatches runs the Bleve batches of one Add, two at a time. Scorch
// builds a batch's segment (zap's interim.convert, the most of a batch's
// CPU) on the goroutine that calls Batch and leaves the other core idle
// meanwhile: the index of the coding corpus ran at ~1.3 cores
// (docs/BENCHMARKS.md, sessions 17–19). Segments still come into Bleve in
// the order of their batches: a batch's segment, once built, waits for the
// batch before it to be introduced (segGates in segorder.go), so the
// snapshots, and the documents a later batch replaces in an earlier
// segment, are those of batches run one after the other. The tables
// (rows, records, dedup, links) are still updated batch after batch on the
// caller's goroutine, before its Bleve batch starts. Every batch has ended
// when wait returns: nothing else of the Index sees one running.
type bleveBatches struct {
	prev, last chan struct{} // the two batches running (nil: none)
	errs       []error       // of the batches started, in order
	errMu      sync.Mutex
}

// run starts b, whose document of lowest row is first, on its own
// goroutine, after the batch before the last has ended (two at a time).
func (bl *bleveBatches) run(idx bleve.Index, b *bleve.Batch, first bleveindex.Document) {
	if bl.prev != nil {
		<-bl.prev
	}
	done := make(chan struct{})
	if bl.last != nil {
		segGates.Store(first, bl.last)
	}
	bl.prev, bl.last = bl.last, done
	go func() {
		defer close(done)
		err := idx.Batch(b)
		segGates.Delete(first) // not built (an empty batch): nothing to order
		if err != nil {
			bl.errMu.Lock()
			bl.errs = append(bl.errs, err)
			bl.errMu.Unlock()
		}
	}()
}

// wait waits for every batch started and returns the first error.
func (bl *bleveBatches) wait() error {
	for _, c := range []chan struct{}{bl.prev, bl.last} {
		if c != nil {
			<-c
		}
	}
	bl.prev, bl.last = nil, nil
	bl.errMu.Lock()
	defer bl.errMu.Unlock()
	if len(bl.errs) > 0 {
		return bl.errs[0]
	}
	return nil
}

// addBatch indexes docs; preps is their analysis and vecs their cards'
// vectors by the index's embedder (nil: made here). Its Bleve batch may
// still run when it returns (bl.wait ends it).
func (ix *Index) addBatch(bl *bleveBatches, docs []Doc, preps []prep, vecs [][]float32) error {
	for i := range docs {
		if docs[i].ID == "" {
			return fmt.Errorf("index doc seq %d (commit %s): empty exchange id", docs[i].Seq, docs[i].Commit)
		}
	}
	if vecs == nil {
		texts := make([]string, len(docs))
		for i := range docs {
			texts[i] = docs[i].Distilled()
		}
		var err error
		if vecs, err = ix.emb.Embed(contextBackground(), texts); err != nil {
			return fmt.Errorf("embed %d cards with %s: %w", len(docs), ix.emb.Name(), err)
		}
	}
	if len(vecs) != len(docs) {
		return fmt.Errorf("embedder %s returned %d vectors for %d texts", ix.emb.Name(), len(vecs), len(docs))
	}
	if preps == nil {
		preps = prepare(docs)
	}
	for i := range docs {
		if _, known := ix.rowOfID(docs[i].ID); known {
			// A row is replaced: every record, and its vector, is needed.
			if err := ix.ensureFull(); err != nil {
				return err
			}
			if err := ix.ensureVectors(); err != nil {
				return err
			}
			break
		}
	}
	if err := ix.ensureSigs(); err != nil {
		return err
	}
	if !ix.dedupScan(docs) {
		if ix.pass = ix.dedupPass(docs, preps); ix.pass == nil {
			ix.buildDedupMaps()
		}
	}
	defer func() { ix.pass = nil }()
	if err := ix.ensureLinkState(); err != nil {
		return err
	}
	an := embed.NewAnalyzer()
	for i, v := range vecs {
		if len(v) != ix.vecs.Dims {
			return fmt.Errorf("embedder %s: exchange %s: vector has %d dims, index has %d", ix.emb.Name(), docs[i].ID, len(v), ix.vecs.Dims)
		}
	}
	b := ix.idx.NewBatch()
	var first *document.Document // the batch's document of lowest row (the last one given for that row)
	firstRow := int32(math.MaxInt32)
	for i := range docs {
		d, p := &docs[i], &preps[i]
		row, known := ix.rowOfID(d.ID)
		if !known {
			row = int32(len(ix.seqs))
		}
		var doc *document.Document
		var err error
		if td := ix.termsDoc(); td != nil {
			doc, err = ix.indexPrepared(b, td, bleveID(row), &[5]string{p.verb, p.out, p.dist, p.head, p.asked})
		} else {
			doc, err = ix.indexTerms(b, bleveID(row), map[string]any{
				fieldVerbatim:  p.verb,
				fieldOutput:    p.out,
				fieldDistilled: p.dist,
				fieldHead:      p.head,
				fieldAsked:     p.asked,
			})
		}
		if err == nil && row <= firstRow {
			first, firstRow = doc, row
		}
		if err != nil {
			ix.broken = err
			return fmt.Errorf("index exchange %s: %w", d.ID, err)
		}
		rec := docRec{Seq: d.Seq, Commit: d.Commit, ID: d.ID, Time: d.Time, Core: d.Core, Context: d.Context,
			Rooms: d.Rooms, Files: d.Files, Project: d.Project, Agent: d.Agent, Session: d.Session,
			VerbLen: p.verbLen, DistLen: p.distLen, OutLen: p.outLen,
			HeadLen: p.headLen, AskLen: p.askLen, Exact: p.exact,
			Link: new(p.link)} // a copy: a pointer into preps would keep the batch's analysed text alive
		if known {
			ix.touched = true
			old := &ix.recs[int(row)-ix.recOff()]
			ix.xorDigest(DocDigest(old.ID, old.Commit))
			ix.man.BM25.FieldLen[fieldDistilled] -= int64(old.DistLen)
			ix.sigs[row] = p.sig
			ix.sigsKept = -1 // a committed row changed: minhash.bin is written whole
		} else {
			ix.recs = append(ix.recs, docRec{})
			ix.seqs = append(ix.seqs, 0)
			ix.groups = append(ix.groups, 0)
			ix.sigs = append(ix.sigs, p.sig)
			ix.byID[d.ID] = row
		}
		ix.xorDigest(DocDigest(rec.ID, rec.Commit))
		rec.Group = ix.assignGroup(row, &rec)
		ix.recs[int(row)-ix.recOff()] = rec
		ix.seqs[row], ix.groups[row] = rec.Seq, rec.Group
		if err := ix.deriveLinks(an, row, known); err != nil {
			ix.broken = err
			return err
		}
		_ = ix.vecs.Set(int(row), vecs[i]) // width checked above
		ix.man.BM25.FieldLen[fieldDistilled] += int64(rec.DistLen)
	}
	ix.dirty = true
	ix.graph = nil // rebuilt on flush when over the crossover
	ix.sctx = nil  // session neighbours and lengths changed
	ix.man.Docs = len(ix.seqs)
	ix.man.BM25.Docs = len(ix.seqs)
	if OverlapBleveBatches && first != nil {
		// The tables now hold documents Bleve may lack: they are written
		// only after bl.wait, which marks the index broken on an error
		// (AddPrepared, Add).
		bl.run(ix.idx, b, first)
		return nil
	}
	if err := ix.endBatches(bl); err != nil {
		return err
	}
	if err := ix.idx.Batch(b); err != nil {
		// The tables now hold documents Bleve lacks: never write them.
		ix.broken = err
		return fmt.Errorf("index batch of %d: %w", len(docs), err)
	}
	return nil
}

// termsDoc is termsDocOf the index's mapping, worked out once.
func (ix *Index) termsDoc() *termsDoc {
	if !ix.tdocKnown {
		ix.tdoc, ix.tdocKnown = termsDocOf(ix.idx.Mapping()), true
	}
	return ix.tdoc
}

// bleveID is a document's id in Bleve: its row, so that a search maps
// postings to rows without a lookup table.
func bleveID(row int32) string { return strconv.Itoa(int(row)) }

// prep is the CPU-heavy, order-free part of indexing one doc. The fields'
// terms are kept joined by spaces, as Bleve takes them, with their counts:
// the term lists held the most of a batch's analysis in memory (a batch is
// analysed while the one before goes into Bleve: Prepare), and joining
// them here takes that work off the one goroutine that feeds Bleve.
type prep struct {
	verb, out, dist, head, asked              string
	verbLen, outLen, distLen, headLen, askLen int32
	exact                                     uint64
	sig                                       [sigLen]uint32
	link                                      linkMeta
}

// joined is the terms of texts (analysed in turn, one list) as a Bleve
// field and their count.
func joined(a *embed.Analyzer, texts ...string) (string, int32) {
	s, n := a.Joined(texts...)
	return s, int32(n)
}

// prepare analyses docs on GOMAXPROCS goroutines; results are placed by
// index, so the outcome does not depend on scheduling.
func prepare(docs []Doc) []prep {
	out := make([]prep, len(docs))
	workers := min(runtime.GOMAXPROCS(0), len(docs))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			a := takeAnalyzer()
			defer putAnalyzer(a)
			for i := w; i < len(docs); i += workers {
				d := &docs[i]
				p := &out[i]
				p.verb, p.verbLen = joined(a, d.Verbatim, dateTerms(d.Time))
				p.out, p.outLen = joined(a, d.Output)
				p.dist, p.distLen = joined(a, d.Distilled())
				p.head, p.headLen = joined(a, d.Head)
				if asksQuestion(d.Tail) {
					p.asked, p.askLen = joined(a, d.Tail)
				}
				src := d.Verbatim
				if d.Output != "" {
					src += "\n" + d.Output
				}
				if strings.TrimSpace(src) == "" {
					src = d.Distilled()
				}
				p.exact, p.sig = signature(src)
				p.link = linkMetaOf(strings.TrimSpace(d.Core + " " + d.Context))
			}
		}(w)
	}
	wg.Wait()
	return out
}

func (ix *Index) ensureDedupMaps() error {
	if err := ix.ensureSigs(); err != nil {
		return err
	}
	ix.buildDedupMaps()
	return nil
}

// ensureSigs reads the rows' MinHash signatures (once).
func (ix *Index) ensureSigs() error {
	if ix.sigsLoaded {
		return nil
	}
	if len(ix.seqs) > 0 {
		path := filepath.Join(ix.dir, sigsFile)
		sigs, free, err := mapSigs(path, len(ix.seqs), ix.man.SigsCRC)
		if errors.Is(err, errNoMap) {
			sigs, err = readSigs(path, len(ix.seqs), ix.man.SigsCRC)
		}
		if err != nil {
			return fmt.Errorf("%s: signatures: %v: %w", ix.dir, err, ErrCorrupt)
		}
		if free != nil {
			ix.sigsFree = free
			runtime.AddCleanup(ix, func(f func()) { f() }, free) // an Index dropped unclosed
		}
		ix.sigs = sigs
		ix.sigsKept = len(sigs)
	}
	ix.sigsLoaded = true
	return nil
}

// dedupScanPairs bounds the rows × new documents that assignGroup compares
// one by one instead of through the maps. Building the maps at 100,000
// rows took 0.74 s of the 2.3 s an add of one exchange cost (a hook's
// append). BenchmarkDedupScan: scanning 100,000 rows for one document
// takes 4.9 ms, building the maps for them 874 ms, so the two cross near
// 180 documents × 100,000 rows.
var dedupScanPairs = 18_000_000

// dedupScan reports whether docs are grouped by scanning every row rather
// than through the maps. The scan finds exactly the rows the maps find:
// the exact key of the earliest live row with the same text, else the
// earliest live row whose signature is similar — and a similar row always
// shares a band with it when fewer positions may differ than there are
// bands (similarBandsSure), so the maps would have offered it too. It is
// used only while the maps are unbuilt and the batch adds new ids: a
// replaced row leaves its old keys in built maps, which a scan of the
// current signatures would not see.
func (ix *Index) dedupScan(docs []Doc) bool {
	pairs := len(docs) * (len(ix.seqs) + len(docs))
	if ix.exactIdx != nil || !similarBandsSure() || ix.scanned+pairs > dedupScanPairs {
		return false
	}
	for i := range docs {
		if _, known := ix.rowOfID(docs[i].ID); known {
			return false
		}
	}
	ix.scanned += pairs // a writer's batches together (a rebuild has hundreds)
	return true
}

// similarBandsSure: two similar signatures differ in at most
// sigLen-minSame positions, which can spoil at most that many bands.
func similarBandsSure() bool {
	return sigLen-minSimilar() < sigLen/bandRows
}

// minSimilar is the fewest equal positions similar accepts.
func minSimilar() int { return int(math.Ceil(NearDupJaccard * sigLen)) }

// scanGroupOf is assignGroup's search without the maps (see dedupScan).
func (ix *Index) scanGroupOf(row int32, rec *docRec) int32 {
	for r := int32(0); r < row; r++ {
		if ix.exactOf(r) == rec.Exact && !ix.rowDead(r) {
			return r
		}
	}
	maxDiff := sigLen - minSimilar()
	sig := &ix.sigs[row]
	for r := int32(0); r < row; r++ {
		o := &ix.sigs[r]
		diff := 0
		for i := range o {
			if o[i] != sig[i] {
				if diff++; diff > maxDiff {
					break
				}
			}
		}
		if diff <= maxDiff && !ix.rowDead(r) {
			return r
		}
	}
	return -1
}

// buildDedupMaps indexes the signatures in memory (emptied rows left out).
func (ix *Index) buildDedupMaps() {
	if ix.exactIdx != nil {
		return
	}
	n := len(ix.seqs)
	ix.exactIdx = make(map[uint64]int32, n)
	ix.bands = newBandIndex(n * sigLen / bandRows)
	for i := range int32(n) {
		if ix.rowDead(i) {
			continue
		}
		ix.indexDedup(i, ix.exactOf(i))
	}
}

func (ix *Index) indexDedup(row int32, exact uint64) {
	if _, ok := ix.exactIdx[exact]; !ok {
		ix.exactIdx[exact] = row
	}
	for _, k := range bandKeys(&ix.sigs[row]) {
		ix.bands.add(k, row)
	}
}

// assignGroup puts rec in the group of the earliest-added document that is
// identical or near-identical to it, else in a group of its own.
func (ix *Index) assignGroup(row int32, rec *docRec) int32 {
	if ix.pass != nil { // a large batch of new ids: dedupPass
		return ix.pass.groupOf(ix, row, rec)
	}
	if ix.exactIdx == nil { // a small batch of new ids: dedupScan
		if best := ix.scanGroupOf(row, rec); best >= 0 {
			return ix.groups[best]
		}
		return row
	}
	best := int32(-1)
	if r, ok := ix.exactIdx[rec.Exact]; ok && r != row {
		best = r
	} else {
		for _, k := range bandKeys(&ix.sigs[row]) {
			ix.bands.each(k, func(r int32) {
				if r != row && (best < 0 || r < best) && similar(&ix.sigs[r], &ix.sigs[row]) {
					best = r
				}
			})
		}
	}
	ix.indexDedup(row, rec.Exact)
	if best < 0 {
		return row
	}
	return ix.groups[best]
}

// LastCommit is the newest commit whose exchanges are indexed ("" if none).
func (ix *Index) LastCommit() string { return ix.man.LastCommit }

// LastSeq is the Seq of LastCommit (-1 if none).
func (ix *Index) LastSeq() int { return ix.man.LastSeq }

// SetLastCommit records that everything up to commit hash (at seq) is
// indexed and makes it durable: tables first, manifest last, so a crash
// leaves either the old state or the new one.
func (ix *Index) SetLastCommit(hash string, seq int) error {
	if ix.readOnly {
		return ErrReadOnly
	}
	ix.man.LastCommit, ix.man.LastSeq = hash, seq
	ix.dirty = true
	return ix.flush()
}

// Count is the number of indexed exchanges.
func (ix *Index) Count() int { return len(ix.seqs) - len(ix.man.Dead) }

// Dir is the index directory.
func (ix *Index) Dir() string { return ix.dir }

// EmbedderName is the name of the embedder the vectors were made with.
func (ix *Index) EmbedderName() string { return ix.man.Embedder }

// Close writes pending tables (writer) and releases the index.
func (ix *Index) Close() error {
	if ix == nil || ix.idx == nil {
		return nil
	}
	ix.waitContext()
	var err error
	if !ix.readOnly {
		err = ix.flush()
	}
	if cerr := ix.idx.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close search index: %w", cerr)
	}
	if !ix.readOnly && err == nil && ix.broken == nil {
		err = writeSeal(ix.dir, ix.sealKnown)
	}
	ix.idx = nil
	if pc := ix.pcache.Swap(nil); pc != nil {
		pc.close()
	}
	if ix.sigsFree != nil {
		ix.sigs, ix.sigsLoaded = nil, false
		ix.sigsFree()
	}
	ix.mu.Lock()
	_ = ix.vecs.Close() // the memory map; long-lived processes open many indexes
	ix.vecs, ix.graph = nil, nil
	ix.mu.Unlock()
	return err
}

// writeSigs commits the signatures: the new rows appended to minhash.bin
// when no committed row changed, else the whole file written again. The
// manifest written after it names the new length and checksum.
func (ix *Index) writeSigs() error {
	path := filepath.Join(ix.dir, sigsFile)
	var crc uint32
	var err error
	if ix.sigsKept >= 0 && ix.sigsKept <= len(ix.sigs) && worthAppending(ix.sigsKept, len(ix.sigs)) {
		crc, err = appendSigs(path, ix.sigs, ix.sigsKept, ix.man.SigsCRC)
	} else {
		crc, err = writeSigs(path, ix.sigs)
	}
	if err != nil {
		return err
	}
	ix.man.SigsCRC, ix.sigsKept = crc, len(ix.sigs)
	ix.knowSeal(sigsFile, sigsLen(len(ix.sigs)), crc)
	return nil
}

// writeDocs commits the document table: a segment of the new rows
// appended to docs.bin when keep (the table loaded, or last written, by
// this writer) holds every other row unchanged, else the file written
// whole. The table written becomes the writer's, so that a second flush
// appends after it.
func (ix *Index) writeDocs(keep *table) error {
	path := filepath.Join(ix.dir, docsFile)
	var st docsState
	var err error
	n := len(ix.seqs)
	switch {
	case keep != nil && n == len(keep.seqs) && ix.man.DocsFile.Size > 0:
		return nil // no row added or changed
	case keep != nil && n > len(keep.seqs) && ix.man.DocsFile.Size > 0 && keep.parts < maxParts &&
		worthAppending(len(keep.seqs), n):
		st, err = appendTable(path, ix.recs[len(keep.seqs)-ix.recOff():], keep, ix.man.DocsFile)
	default:
		if err := ix.ensureFull(); err != nil { // the table is written whole
			return err
		}
		st, err = writeTableState(path, ix.recs, ix.tableSize(), keep)
	}
	if err != nil {
		return err
	}
	tab, err := readTableState(path, false, &st)
	if err != nil {
		return fmt.Errorf("%s: document table written: %v: %w", ix.dir, err, ErrCorrupt)
	}
	ix.man.DocsFile, ix.tab, ix.touched = st, tab, false
	ix.knowSeal(docsFile, st.Size, st.CRC)
	return nil
}

// writeVectors commits the vectors: the new rows appended to vectors.f32
// when the committed ones are unchanged, else the file written whole.
func (ix *Index) writeVectors() error {
	path := filepath.Join(ix.dir, vectorsFile)
	var st vector.State
	var err error
	if ix.vecs.CanAppend(ix.man.Vecs) && worthAppending(ix.man.Vecs.Rows, ix.vecs.Len()) {
		st, err = ix.vecs.Append(path, ix.man.Vecs)
	} else {
		if err := ix.ensureVectors(); err != nil { // written whole: every row read
			return err
		}
		st, err = ix.vecs.WriteState(path)
	}
	if err != nil {
		return err
	}
	ix.man.Vecs = st
	ix.knowSeal(vectorsFile, st.Size, st.CRC)
	return nil
}

// worthAppending: a table of kept committed rows growing to n is appended
// to when it holds at least as many rows as are added; otherwise it is
// written whole, which costs at most twice the append and lays the rows
// out as a fresh write does (a rebuild's first flush commits an empty
// table: appending every row to it left vectors.f32 in the dense layout
// of its empty first write, 38.8 instead of 23.3 MB at 100,000).
func worthAppending(kept, n int) bool { return kept > 0 && kept >= n-kept }

// knowSeal records the checksum of a file this writer wrote, so that the
// seal takes it instead of reading the file again.
func (ix *Index) knowSeal(rel string, size int64, crc uint32) {
	if ix.sealKnown == nil {
		ix.sealKnown = map[string]sealEntry{}
	}
	ix.sealKnown[rel] = sealEntry{Size: size, CRC: crc}
}

func (ix *Index) flush() error {
	if ix.broken != nil {
		return fmt.Errorf("search index not saved after an earlier failure (%v): run `git mem reindex`", ix.broken)
	}
	if !ix.dirty {
		return nil
	}
	var keep *table
	if !ix.touched && (ix.lst == nil || !ix.lst.metaSet) {
		keep = ix.tab
	}
	if err := ix.writeDocs(keep); err != nil {
		return err
	}
	if err := ix.writeContext(); err != nil {
		return err
	}
	if err := ix.writeLinks(); err != nil {
		return err
	}
	if err := ix.writeVectors(); err != nil {
		return err
	}
	if ix.sigsLoaded || len(ix.seqs) == 0 { // signatures loaded (or none yet)
		if err := ix.writeSigs(); err != nil {
			return err
		}
	}
	ix.man.HNSW = false
	if len(ix.seqs) >= HNSWCrossover {
		if ix.graph == nil {
			if err := ix.ensureVectors(); err != nil {
				return err
			}
			ix.logf("building HNSW graph over %d vectors", len(ix.seqs))
			ix.graph = vector.BuildHNSW(ix.vecs, vector.DefaultHNSWConfig)
		}
		if err := ix.graph.Write(filepath.Join(ix.dir, hnswFile)); err != nil {
			return err
		}
		ix.man.HNSW = true
	} else {
		os.Remove(filepath.Join(ix.dir, hnswFile))
	}
	ix.man.Updated = time.Now().UTC()
	raw, err := json.MarshalIndent(ix.man, "", "  ")
	if err != nil {
		return fmt.Errorf("write search manifest: %w", err)
	}
	tmp := filepath.Join(ix.dir, manifestFile+".tmp")
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("write search manifest: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(ix.dir, manifestFile)); err != nil {
		return fmt.Errorf("write search manifest: %w", err)
	}
	ix.dirty = false
	return nil
}
