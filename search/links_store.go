package search

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"

	"github.com/gitmem/git-mem/internal/mapfile"
)

// The links of a generation on disk. A reader marks a few exchanges (a
// log page, one show, a search's hits) and must not decode every link of
// the memory to do it: links.json held 4.8 million derived links (186 MB)
// at 100,000 synthetic exchanges, and `git mem log -n 20` spent 15 s CPU
// reading it. links.bin is laid out for lookups by exchange id:
//
//	header  "gmlinks1" | nodes u32 | entries u32
//	nodes   [nodes] {id hash u64 | row u32 | sup off u32 | sup n u32 | by off u32 | by n u32}, by hash then row
//	entries [entries] {row u32 | sim×10⁴ u16}
//
// A node is a row with links: sup are the rows it supersedes, by the rows
// that supersede it (each link is stored twice, once per side). The id
// hash (FNV-1a 64) finds a node by exchange id; the record of its row
// confirms it. events.json holds the pins and stated links (a handful).
const (
	linksBinFile = "links.bin"
	eventsFile   = "events.json"
	linksMagic   = "gmlinks1"
	linksHeader  = 16
	linkNodeSize = 28
	linkEntSize  = 6
)

type eventsDisk struct {
	Threshold float64 `json:"threshold"`
	Events    []Event `json:"events"`
}

// idHash is FNV-1a 64 (hash/fnv's New64a, which hash64 computes in place).
func idHash(id string) uint64 { return hash64(id) }

// encodeLinks lays links out as links.bin; ids gives each row's exchange id.
// Two sorted copies of the links (by the superseding row, by the superseded
// one) give every node its entries without a map per row: re-encoding was
// 0.46 s of an add of one exchange at 100,000 (270,000 links) with one.
// linkEnt is one entry of a node in links.bin: the node's row, the row at
// the other end, and the similarity in ten-thousandths.
type linkEnt struct {
	row, other int32
	sim        uint16
}

// compareLinkEnt orders a node's entries as the file stores them.
func compareLinkEnt(a, b linkEnt) int {
	if c := cmp.Compare(a.row, b.row); c != 0 {
		return c
	}
	if c := cmp.Compare(a.other, b.other); c != 0 {
		return c
	}
	return cmp.Compare(a.sim, b.sim)
}

func encodeLinks(links []linkRec, ids func(int32) string) []byte {
	type ent = linkEnt
	byEnt := compareLinkEnt
	sup := make([]ent, len(links))
	by := make([]ent, len(links))
	for i, l := range links {
		s := uint16(math.Round(l.Sim * 1e4))
		sup[i] = ent{l.New, l.Old, s}
		by[i] = ent{l.Old, l.New, s}
	}
	// In row order: the file is a function of the links, not of the order
	// a rebuild or a catch-up added them in.
	sortEnts := func(es []ent) {
		// Packed into one integer a sort is ten times faster than through
		// a comparison function (0.25 s for 540,000 entries); rows up to 2^24.
		keys := make([]uint64, len(es))
		for i, e := range es {
			if e.row >= 1<<24 || e.other >= 1<<24 {
				slices.SortFunc(es, byEnt)
				return
			}
			keys[i] = uint64(e.row)<<40 | uint64(e.other)<<16 | uint64(e.sim)
		}
		slices.Sort(keys)
		for i, k := range keys {
			es[i] = ent{int32(k >> 40), int32(k >> 16 & (1<<24 - 1)), uint16(k)}
		}
	}
	sortEnts(sup)
	sortEnts(by)
	type node struct {
		hash        uint64
		row         int32
		supAt, supN int32
		byAt, byN   int32
	}
	var nodes []node
	for i, j := 0, 0; i < len(sup) || j < len(by); {
		r := int32(math.MaxInt32)
		if i < len(sup) {
			r = sup[i].row
		}
		if j < len(by) && by[j].row < r {
			r = by[j].row
		}
		n := node{hash: idHash(ids(r)), row: r, supAt: int32(i), byAt: int32(j)}
		for ; i < len(sup) && sup[i].row == r; i++ {
			n.supN++
		}
		for ; j < len(by) && by[j].row == r; j++ {
			n.byN++
		}
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b node) int {
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		return cmp.Compare(a.row, b.row)
	})
	nEnt := 2 * len(links)
	base := linksHeader + len(nodes)*linkNodeSize
	b := make([]byte, base+nEnt*linkEntSize)
	copy(b, linksMagic)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(nodes)))
	binary.LittleEndian.PutUint32(b[12:], uint32(nEnt))
	at := 0
	put := func(es []ent) (off, n uint32) {
		off = uint32(at)
		for _, e := range es {
			p := base + at*linkEntSize
			binary.LittleEndian.PutUint32(b[p:], uint32(e.other))
			binary.LittleEndian.PutUint16(b[p+4:], e.sim)
			at++
		}
		return off, uint32(len(es))
	}
	for i, n := range nodes {
		p := b[linksHeader+i*linkNodeSize:]
		binary.LittleEndian.PutUint64(p, n.hash)
		binary.LittleEndian.PutUint32(p[8:], uint32(n.row))
		so, sn := put(sup[n.supAt : n.supAt+n.supN])
		bo, bn := put(by[n.byAt : n.byAt+n.byN])
		binary.LittleEndian.PutUint32(p[12:], so)
		binary.LittleEndian.PutUint32(p[16:], sn)
		binary.LittleEndian.PutUint32(p[20:], bo)
		binary.LittleEndian.PutUint32(p[24:], bn)
	}
	return b
}

// linksView reads links.bin (mapped) without decoding it.
type linksView struct {
	raw          []byte
	nodes, ents  int
	rows         int // rows of the index: every row named must be below
	entBase      int
	unmap        func()
	closed, none bool
}

func openLinks(dir string, rows int) (*linksView, error) {
	b, unmap, err := mapfile.ReadOnly(filepath.Join(dir, linksBinFile))
	if errors.Is(err, os.ErrNotExist) {
		return &linksView{none: true, unmap: func() {}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read supersession links: %w", err)
	}
	v := &linksView{raw: b, unmap: unmap, rows: rows}
	bad := func(why string) (*linksView, error) {
		unmap()
		return nil, fmt.Errorf("%s: %s: %s: %w", dir, linksBinFile, why, ErrCorrupt)
	}
	if len(b) < linksHeader || string(b[:8]) != linksMagic {
		return bad("bad header")
	}
	v.nodes = int(binary.LittleEndian.Uint32(b[8:]))
	v.ents = int(binary.LittleEndian.Uint32(b[12:]))
	v.entBase = linksHeader + v.nodes*linkNodeSize
	if v.nodes < 0 || v.ents < 0 || len(b) != v.entBase+v.ents*linkEntSize {
		return bad(fmt.Sprintf("%d bytes for %d nodes and %d entries", len(b), v.nodes, v.ents))
	}
	return v, nil
}

func (v *linksView) close() {
	if !v.closed {
		v.closed = true
		v.unmap()
	}
}

type linkNode struct {
	hash         uint64
	row          int32
	supOff, supN uint32
	byOff, byN   uint32
}

func (v *linksView) node(i int) (linkNode, error) {
	p := v.raw[linksHeader+i*linkNodeSize:]
	n := linkNode{hash: binary.LittleEndian.Uint64(p), row: int32(binary.LittleEndian.Uint32(p[8:])),
		supOff: binary.LittleEndian.Uint32(p[12:]), supN: binary.LittleEndian.Uint32(p[16:]),
		byOff: binary.LittleEndian.Uint32(p[20:]), byN: binary.LittleEndian.Uint32(p[24:])}
	if n.row < 0 || int(n.row) >= v.rows || uint64(n.supOff)+uint64(n.supN) > uint64(v.ents) || uint64(n.byOff)+uint64(n.byN) > uint64(v.ents) {
		return n, fmt.Errorf("%s node %d: row %d or entries out of range: %w", linksBinFile, i, n.row, ErrCorrupt)
	}
	return n, nil
}

// entries returns the n entries from off: the other rows and similarities.
func (v *linksView) entries(off, n uint32, f func(row int32, sim float64) error) error {
	for k := off; k < off+n; k++ {
		p := v.raw[v.entBase+int(k)*linkEntSize:]
		r := int32(binary.LittleEndian.Uint32(p))
		if r < 0 || int(r) >= v.rows {
			return fmt.Errorf("%s entry %d: row %d of %d: %w", linksBinFile, k, r, v.rows, ErrCorrupt)
		}
		if err := f(r, float64(binary.LittleEndian.Uint16(p[4:]))/1e4); err != nil {
			return err
		}
	}
	return nil
}

// all returns every link (each once, from its New side).
func (v *linksView) all() ([]linkRec, error) {
	if v.none {
		return nil, nil
	}
	out := make([]linkRec, 0, v.ents/2)
	for i := 0; i < v.nodes; i++ {
		n, err := v.node(i)
		if err != nil {
			return nil, err
		}
		err = v.entries(n.supOff, n.supN, func(r int32, sim float64) error {
			out = append(out, linkRec{New: n.row, Old: r, Sim: sim})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	runtime.KeepAlive(v)
	return out, nil
}

// find calls f with every node whose id hash is h.
func (v *linksView) find(h uint64, f func(linkNode) error) error {
	if v.none {
		return nil
	}
	i := sort.Search(v.nodes, func(i int) bool {
		return binary.LittleEndian.Uint64(v.raw[linksHeader+i*linkNodeSize:]) >= h
	})
	for ; i < v.nodes; i++ {
		n, err := v.node(i)
		if err != nil {
			return err
		}
		if n.hash != h {
			return nil
		}
		if err := f(n); err != nil {
			return err
		}
	}
	return nil
}

// readEvents reads events.json (none yet: empty).
func readEvents(dir string) ([]Event, error) {
	raw, err := os.ReadFile(filepath.Join(dir, eventsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read pins and stated links: %w", err)
	}
	var d eventsDisk
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%s: %s: %v: %w", dir, eventsFile, err, ErrCorrupt)
	}
	return d.Events, nil
}

// mergeLinks is encodeLinks of the links in old (the file a writer loaded)
// and added, byte for byte, without sorting or hashing the old links
// again: old's nodes are already in (hash, row) order and each node's
// entries in (row, similarity) order, so the added links' entries are
// merged into them. Re-encoding every link was 0.20 s of the 0.36 s an
// add of 1,000 into 100,000 spent writing its tables (540,000 entries
// sorted twice, every node's id hashed). old must hold no link that is
// gone (a replaced or forgotten row: the caller encodes all then).
func mergeLinks(old *linksView, added []linkRec, ids func(int32) string) ([]byte, error) {
	type ent = linkEnt
	sup := make([]ent, len(added))
	by := make([]ent, len(added))
	for i, l := range added {
		s := uint16(math.Round(l.Sim * 1e4))
		sup[i] = ent{l.New, l.Old, s}
		by[i] = ent{l.Old, l.New, s}
	}
	less := compareLinkEnt
	slices.SortFunc(sup, less)
	slices.SortFunc(by, less)
	// Each touched row's run of added entries.
	type runs struct{ supAt, supN, byAt, byN int32 }
	touched := map[int32]*runs{}
	get := func(r int32) *runs {
		if t := touched[r]; t != nil {
			return t
		}
		t := &runs{}
		touched[r] = t
		return t
	}
	for i := 0; i < len(sup); {
		j := i
		for j < len(sup) && sup[j].row == sup[i].row {
			j++
		}
		t := get(sup[i].row)
		t.supAt, t.supN = int32(i), int32(j-i)
		i = j
	}
	for i := 0; i < len(by); {
		j := i
		for j < len(by) && by[j].row == by[i].row {
			j++
		}
		t := get(by[i].row)
		t.byAt, t.byN = int32(i), int32(j-i)
		i = j
	}
	// The touched rows that have no node in old get one, in (hash, row)
	// order; the others are found as old's nodes are walked.
	type key struct {
		hash uint64
		row  int32
	}
	var fresh []key
	for r := range touched {
		h := idHash(ids(r))
		found := false
		if err := old.find(h, func(n linkNode) error {
			if n.row == r {
				found = true
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if !found {
			fresh = append(fresh, key{h, r})
		}
	}
	slices.SortFunc(fresh, func(a, b key) int {
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		return cmp.Compare(a.row, b.row)
	})
	nodes := old.nodes + len(fresh)
	nEnt := old.ents + 2*len(added)
	base := linksHeader + nodes*linkNodeSize
	b := make([]byte, base+nEnt*linkEntSize)
	copy(b, linksMagic)
	binary.LittleEndian.PutUint32(b[8:], uint32(nodes))
	binary.LittleEndian.PutUint32(b[12:], uint32(nEnt))
	at := 0 // entries written
	// put writes old's entries [off, off+n) merged with es, in order.
	put := func(off, n uint32, es []ent) (uint32, uint32) {
		start := at
		src := old.raw[old.entBase+int(off)*linkEntSize : old.entBase+int(off+n)*linkEntSize]
		for len(src) > 0 || len(es) > 0 {
			if len(es) == 0 {
				at += copy(b[base+at*linkEntSize:], src) / linkEntSize
				break
			}
			if len(src) > 0 {
				r := int32(binary.LittleEndian.Uint32(src))
				s := binary.LittleEndian.Uint16(src[4:])
				if r < es[0].other || r == es[0].other && s <= es[0].sim {
					copy(b[base+at*linkEntSize:], src[:linkEntSize])
					src = src[linkEntSize:]
					at++
					continue
				}
			}
			p := base + at*linkEntSize
			binary.LittleEndian.PutUint32(b[p:], uint32(es[0].other))
			binary.LittleEndian.PutUint16(b[p+4:], es[0].sim)
			es = es[1:]
			at++
		}
		return uint32(start), uint32(at - start)
	}
	w := 0 // nodes written
	emit := func(n linkNode) {
		var sa, sb []ent
		if t := touched[n.row]; t != nil {
			sa, sb = sup[t.supAt:t.supAt+t.supN], by[t.byAt:t.byAt+t.byN]
		}
		p := b[linksHeader+w*linkNodeSize:]
		binary.LittleEndian.PutUint64(p, n.hash)
		binary.LittleEndian.PutUint32(p[8:], uint32(n.row))
		so, sn := put(n.supOff, n.supN, sa)
		bo, bn := put(n.byOff, n.byN, sb)
		binary.LittleEndian.PutUint32(p[12:], so)
		binary.LittleEndian.PutUint32(p[16:], sn)
		binary.LittleEndian.PutUint32(p[20:], bo)
		binary.LittleEndian.PutUint32(p[24:], bn)
		w++
	}
	f := 0
	for i := 0; i < old.nodes; i++ {
		n, err := old.node(i)
		if err != nil {
			return nil, err
		}
		for ; f < len(fresh) && (fresh[f].hash < n.hash || fresh[f].hash == n.hash && fresh[f].row < n.row); f++ {
			emit(linkNode{hash: fresh[f].hash, row: fresh[f].row})
		}
		emit(n)
	}
	for ; f < len(fresh); f++ {
		emit(linkNode{hash: fresh[f].hash, row: fresh[f].row})
	}
	runtime.KeepAlive(old)
	if w != nodes || at != nEnt {
		return nil, fmt.Errorf("%s: merged %d nodes and %d entries, expected %d and %d: %w", linksBinFile, w, at, nodes, nEnt, ErrCorrupt)
	}
	return b, nil
}
