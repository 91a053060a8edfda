package search

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"
)

func fnvRef(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// encodeLinksMap is the encoder before 2026-12 (a map of sides per row),
// kept as the reference the faster one must equal byte for byte.
func encodeLinksMap(links []linkRec, ids func(int32) string) []byte {
	type side struct{ sup, by []linkRec }
	per := map[int32]*side{}
	get := func(r int32) *side {
		s := per[r]
		if s == nil {
			s = &side{}
			per[r] = s
		}
		return s
	}
	for _, l := range links {
		get(l.New).sup = append(get(l.New).sup, l)
		get(l.Old).by = append(get(l.Old).by, l)
	}
	type node struct {
		hash uint64
		row  int32
	}
	nodes := make([]node, 0, len(per))
	for r := range per {
		nodes = append(nodes, node{fnvRef(ids(r)), r})
	}
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].hash != nodes[j].hash {
			return nodes[i].hash < nodes[j].hash
		}
		return nodes[i].row < nodes[j].row
	})
	nEnt := 2 * len(links)
	b := make([]byte, linksHeader+len(nodes)*linkNodeSize+nEnt*linkEntSize)
	copy(b, linksMagic)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(nodes)))
	binary.LittleEndian.PutUint32(b[12:], uint32(nEnt))
	ent := 0
	putEnts := func(ls []linkRec, other func(linkRec) int32) (off, n uint32) {
		// In row order: the file is a function of the links, not of the
		// order a rebuild or a catch-up added them in.
		sort.Slice(ls, func(i, j int) bool { return other(ls[i]) < other(ls[j]) })
		off = uint32(ent)
		for _, l := range ls {
			p := linksHeader + len(nodes)*linkNodeSize + ent*linkEntSize
			binary.LittleEndian.PutUint32(b[p:], uint32(other(l)))
			binary.LittleEndian.PutUint16(b[p+4:], uint16(math.Round(l.Sim*1e4)))
			ent++
		}
		return off, uint32(len(ls))
	}
	for i, n := range nodes {
		p := b[linksHeader+i*linkNodeSize:]
		binary.LittleEndian.PutUint64(p, n.hash)
		binary.LittleEndian.PutUint32(p[8:], uint32(n.row))
		s := per[n.row]
		so, sn := putEnts(s.sup, func(l linkRec) int32 { return l.Old })
		bo, bn := putEnts(s.by, func(l linkRec) int32 { return l.New })
		binary.LittleEndian.PutUint32(p[12:], so)
		binary.LittleEndian.PutUint32(p[16:], sn)
		binary.LittleEndian.PutUint32(p[20:], bo)
		binary.LittleEndian.PutUint32(p[24:], bn)
	}
	return b
}

// TestEncodeLinksAsBefore: the sorted encoder writes the same bytes as the
// map one on random link sets (no pair twice, as deriveLinks makes them).
func TestEncodeLinksAsBefore(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	ids := func(r int32) string { return fmt.Sprintf("ex-%d", r) }
	for round := 0; round < 50; round++ {
		rows := 1 + rng.Intn(300)
		seen := map[[2]int32]bool{}
		var links []linkRec
		for n := rng.Intn(4 * rows); n > 0; n-- {
			a, b := int32(rng.Intn(rows)), int32(rng.Intn(rows))
			if round%10 == 0 { // rows beyond what the packed sort holds
				a, b = a+1<<24, b+1<<24
			}
			if a == b || seen[[2]int32{a, b}] {
				continue
			}
			seen[[2]int32{a, b}] = true
			links = append(links, linkRec{New: a, Old: b, Sim: math.Round(rng.Float64()*1e4) / 1e4})
		}
		want := encodeLinksMap(append([]linkRec(nil), links...), ids)
		got := encodeLinks(append([]linkRec(nil), links...), ids)
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d (%d links over %d rows): encodings differ", round, len(links), rows)
		}
	}
	if fnvRef("synth-42") != idHash("synth-42") {
		t.Fatal("idHash is not FNV-1a 64")
	}
}
