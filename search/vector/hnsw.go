package vector

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"sort"
	"sync"

	"github.com/viterin/vek/vek32"
)

// HNSW is a hierarchical navigable small-world graph (Malkov & Yashunin,
// 2018, arXiv 1603.09320) over the rows of a Flat matrix, written here
// rather than imported: github.com/coder/hnsw v0.6.1, the only release the
// module proxy serves, measured recall@10 of 0.004–0.24 and panicked on
// re-adding a key and under concurrent use.
//
// It is deterministic: nodes are inserted in row order and a node's level
// is drawn from a hash of its row and the seed, so the same vectors always
// give the same graph and the same answers. Neighbours are chosen with the
// paper's heuristic (Algorithm 4), which keeps recall high on clustered data.
type HNSW struct {
	cfg      HNSWConfig
	vecs     *Flat
	data     []float32 // vecs widened once: the graph computes many distances
	levels   []uint8
	links    [][][]uint32 // links[node][level] = neighbours
	entry    int32
	maxLevel int
	visited  sync.Pool // *visitSet, so that searches can run concurrently
}

// visitSet marks visited nodes with an epoch number: no clearing between
// searches, no map hashing.
type visitSet struct {
	epoch uint32
	marks []uint32
}

func (h *HNSW) visitedSet() *visitSet {
	vs, _ := h.visited.Get().(*visitSet)
	if vs == nil {
		vs = &visitSet{}
	}
	if len(vs.marks) < len(h.levels) {
		vs.marks = append(vs.marks, make([]uint32, len(h.levels)-len(vs.marks)+1024)...)
	}
	vs.epoch++
	if vs.epoch == 0 { // wrapped: clear once every 4 billion searches
		clear(vs.marks)
		vs.epoch = 1
	}
	return vs
}

// visit marks id and reports whether it was already marked.
func (vs *visitSet) visit(id uint32) bool {
	if vs.marks[id] == vs.epoch {
		return true
	}
	vs.marks[id] = vs.epoch
	return false
}

// HNSWConfig holds the graph's parameters.
type HNSWConfig struct {
	M              int // neighbours per node above level 0 (2M at level 0)
	EfConstruction int
	EfSearch       int
	Seed           uint64
}

// DefaultHNSWConfig reaches recall@10 ≥ 0.95 on the tests' clustered data.
var DefaultHNSWConfig = HNSWConfig{M: 16, EfConstruction: 200, EfSearch: 128, Seed: 0x6769746d656d}

// BuildHNSW inserts every row of vecs.
func BuildHNSW(vecs *Flat, cfg HNSWConfig) *HNSW {
	h := &HNSW{cfg: cfg, vecs: vecs, data: vecs.Floats(), entry: -1}
	for i := 0; i < vecs.Len(); i++ {
		h.insert(i)
	}
	return h
}

// Len is the number of nodes.
func (h *HNSW) Len() int { return len(h.levels) }

func (h *HNSW) level(row int) int {
	x := splitmix(h.cfg.Seed ^ uint64(row)*0x9e3779b97f4a7c15)
	u := (float64(x>>11) + 0.5) / (1 << 53)
	ml := 1 / math.Log(float64(max(h.cfg.M, 2)))
	l := int(-math.Log(u) * ml)
	return min(l, 32)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (h *HNSW) row(i uint32) []float32 {
	d := h.vecs.Dims
	return h.data[int(i)*d : (int(i)+1)*d]
}

func (h *HNSW) dist(q []float32, row uint32) float32 {
	return 1 - vek32.Dot(q, h.row(row))
}

type nodeDist struct {
	id uint32
	d  float32
}

// lessND orders by distance, then id, so every choice is deterministic.
func lessND(a, b nodeDist) bool {
	if a.d != b.d {
		return a.d < b.d
	}
	return a.id < b.id
}

// insert adds row (which must be the next row: Len()).
func (h *HNSW) insert(row int) {
	if row != len(h.levels) {
		panic(fmt.Sprintf("hnsw: insert row %d, want %d", row, len(h.levels))) // programming error
	}
	l := h.level(row)
	h.levels = append(h.levels, uint8(l))
	h.links = append(h.links, make([][]uint32, l+1))
	if h.entry < 0 {
		h.entry, h.maxLevel = int32(row), l
		return
	}
	q := h.row(uint32(row))
	ep := nodeDist{uint32(h.entry), h.dist(q, uint32(h.entry))}
	for lc := h.maxLevel; lc > l; lc-- {
		ep = h.greedy(q, ep, lc)
	}
	eps := []nodeDist{ep}
	for lc := min(l, h.maxLevel); lc >= 0; lc-- {
		cands := h.searchLayer(q, eps, h.cfg.EfConstruction, lc, nil)
		maxN := h.cfg.M
		if lc == 0 {
			maxN = 2 * h.cfg.M
		}
		nbrs := h.selectHeuristic(cands, h.cfg.M)
		h.links[row][lc] = ids(nbrs)
		for _, n := range nbrs {
			h.connect(n.id, uint32(row), lc, maxN)
		}
		eps = cands
	}
	if l > h.maxLevel {
		h.entry, h.maxLevel = int32(row), l
	}
}

func ids(ns []nodeDist) []uint32 {
	out := make([]uint32, len(ns))
	for i, n := range ns {
		out[i] = n.id
	}
	return out
}

// connect adds a back link and prunes n's list with the heuristic when it
// overflows.
func (h *HNSW) connect(n, newID uint32, lc, maxN int) {
	list := append(h.links[n][lc], newID)
	if len(list) <= maxN {
		h.links[n][lc] = list
		return
	}
	q := h.row(n)
	cands := make([]nodeDist, len(list))
	for i, id := range list {
		cands[i] = nodeDist{id, h.dist(q, id)}
	}
	sort.Slice(cands, func(i, j int) bool { return lessND(cands[i], cands[j]) })
	h.links[n][lc] = ids(h.selectHeuristic(cands, maxN))
}

// selectHeuristic keeps a candidate only if it is closer to the base than to
// every neighbour already kept (Algorithm 4, keepPrunedConnections on).
// cands must be sorted by distance.
func (h *HNSW) selectHeuristic(cands []nodeDist, m int) []nodeDist {
	out := make([]nodeDist, 0, m)
	var pruned []nodeDist
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		good := true
		cv := h.row(c.id)
		for _, o := range out {
			if h.dist(cv, o.id) < c.d {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		} else {
			pruned = append(pruned, c)
		}
	}
	for _, p := range pruned {
		if len(out) >= m {
			break
		}
		out = append(out, p)
	}
	return out
}

func (h *HNSW) greedy(q []float32, ep nodeDist, lc int) nodeDist {
	for changed := true; changed; {
		changed = false
		for _, n := range h.links[ep.id][lc] {
			if d := (nodeDist{n, h.dist(q, n)}); lessND(d, ep) {
				ep, changed = d, true
			}
		}
	}
	return ep
}

// searchLayer is Algorithm 2: the ef closest nodes to q reachable from eps at
// level lc, sorted by distance. When allowed is set, only allowed nodes enter
// the result (all nodes are still traversed).
func (h *HNSW) searchLayer(q []float32, eps []nodeDist, ef, lc int, allowed func(int) bool) []nodeDist {
	vs := h.visitedSet()
	defer h.visited.Put(vs)
	var cand minHeap
	var res maxHeap
	for _, e := range eps {
		vs.visit(e.id)
		cand.push(e)
		if allowed == nil || allowed(int(e.id)) {
			res.push(e)
		}
	}
	for res.len() > ef {
		res.pop()
	}
	for cand.len() > 0 {
		c := cand.pop()
		if res.len() >= ef && lessND(res.top(), c) {
			break
		}
		for _, n := range h.links[c.id][lc] {
			if vs.visit(n) {
				continue
			}
			d := nodeDist{n, h.dist(q, n)}
			if res.len() < ef || lessND(d, res.top()) {
				cand.push(d)
				if allowed == nil || allowed(int(n)) {
					res.push(d)
					if res.len() > ef {
						res.pop()
					}
				}
			}
		}
	}
	out := make([]nodeDist, res.len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = res.pop()
	}
	return out
}

// Result is one neighbour: a row and its cosine similarity.
type Result struct {
	Row   int
	Score float32
}

// Search returns up to k rows nearest to q (unit vector), best first, among
// those allowed (nil = all). ef below k is raised to k.
func (h *HNSW) Search(q []float32, k, ef int, allowed func(int) bool) []Result {
	if h.entry < 0 || k <= 0 {
		return nil
	}
	ef = max(ef, k, h.cfg.EfSearch)
	ep := nodeDist{uint32(h.entry), h.dist(q, uint32(h.entry))}
	for lc := h.maxLevel; lc > 0; lc-- {
		ep = h.greedy(q, ep, lc)
	}
	found := h.searchLayer(q, []nodeDist{ep}, ef, 0, allowed)
	if len(found) > k {
		found = found[:k]
	}
	out := make([]Result, len(found))
	for i, f := range found {
		out[i] = Result{Row: int(f.id), Score: 1 - f.d}
	}
	return out
}

// heaps of nodeDist (container/heap's interface boxing costs ~20% here).
type minHeap struct{ a []nodeDist }

func (h *minHeap) len() int { return len(h.a) }
func (h *minHeap) push(x nodeDist) {
	h.a = append(h.a, x)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !lessND(h.a[i], h.a[p]) {
			break
		}
		h.a[i], h.a[p] = h.a[p], h.a[i]
		i = p
	}
}
func (h *minHeap) pop() nodeDist {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	siftDown(h.a, 0, lessND)
	return top
}

type maxHeap struct{ a []nodeDist }

func greaterND(a, b nodeDist) bool { return lessND(b, a) }

func (h *maxHeap) len() int      { return len(h.a) }
func (h *maxHeap) top() nodeDist { return h.a[0] }
func (h *maxHeap) push(x nodeDist) {
	h.a = append(h.a, x)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !greaterND(h.a[i], h.a[p]) {
			break
		}
		h.a[i], h.a[p] = h.a[p], h.a[i]
		i = p
	}
}
func (h *maxHeap) pop() nodeDist {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	siftDown(h.a, 0, greaterND)
	return top
}

func siftDown(a []nodeDist, i int, less func(a, b nodeDist) bool) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(a) && less(a[l], a[m]) {
			m = l
		}
		if r < len(a) && less(a[r], a[m]) {
			m = r
		}
		if m == i {
			return
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
}

const hnswMagic = "GMHNSW\x00\x01"

// Write stores the graph (not the vectors: they live in the Flat file).
func (h *HNSW) Write(path string) error {
	b := make([]byte, 0, 40+len(h.levels)*40*4)
	b = append(b, hnswMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(h.levels)))
	b = binary.LittleEndian.AppendUint32(b, uint32(h.cfg.M))
	b = binary.LittleEndian.AppendUint32(b, uint32(h.cfg.EfConstruction))
	b = binary.LittleEndian.AppendUint32(b, uint32(h.cfg.EfSearch))
	b = binary.LittleEndian.AppendUint64(b, h.cfg.Seed)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.entry))
	b = binary.LittleEndian.AppendUint32(b, uint32(h.maxLevel))
	for i, l := range h.levels {
		b = append(b, l)
		for lc := 0; lc <= int(l); lc++ {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(h.links[i][lc])))
			for _, n := range h.links[i][lc] {
				b = binary.LittleEndian.AppendUint32(b, n)
			}
		}
	}
	sum := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b, castagnoli))
	return writeAtomic(path, b, sum)
}

// ReadHNSW loads a graph written by Write over vecs.
func ReadHNSW(path string, vecs *Flat) (*HNSW, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bad := func(why string) error { return fmt.Errorf("%s: %w: %s", path, ErrCorrupt, why) }
	if len(b) < 44 || string(b[:8]) != hnswMagic {
		return nil, bad("bad header")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, bad("checksum mismatch")
	}
	le := binary.LittleEndian
	n := int(le.Uint32(b[8:]))
	h := &HNSW{vecs: vecs, data: vecs.Floats(), cfg: HNSWConfig{M: int(le.Uint32(b[12:])), EfConstruction: int(le.Uint32(b[16:])),
		EfSearch: int(le.Uint32(b[20:])), Seed: le.Uint64(b[24:])}}
	h.entry, h.maxLevel = int32(le.Uint32(b[32:])), int(le.Uint32(b[36:]))
	if n != vecs.Len() {
		return nil, bad(fmt.Sprintf("graph has %d nodes, vectors %d", n, vecs.Len()))
	}
	p := 40
	h.levels = make([]uint8, n)
	h.links = make([][][]uint32, n)
	for i := 0; i < n; i++ {
		if p >= len(body) {
			return nil, bad("truncated")
		}
		l := int(body[p])
		p++
		h.levels[i] = uint8(l)
		h.links[i] = make([][]uint32, l+1)
		for lc := 0; lc <= l; lc++ {
			if p+2 > len(body) {
				return nil, bad("truncated")
			}
			c := int(le.Uint16(body[p:]))
			p += 2
			if p+4*c > len(body) {
				return nil, bad("truncated")
			}
			list := make([]uint32, c)
			for j := range list {
				list[j] = le.Uint32(body[p:])
				if int(list[j]) >= n {
					return nil, bad("link out of range")
				}
				p += 4
			}
			h.links[i][lc] = list
		}
	}
	if n > 0 && (h.entry < 0 || int(h.entry) >= n) {
		return nil, bad("entry out of range")
	}
	return h, nil
}
