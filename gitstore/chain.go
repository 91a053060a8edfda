package gitstore

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// objectOnce is object for a reader that will not read the chain again
// (ReadPathsPacked in a process that does not keep its packs: a cold
// search reads its ten exchanges once and exits). object keeps every delta
// base it resolves (base), a fresh allocation each, and at 1,000,000
// exchanges a search's ten exchanges resolve 232 of them, ~24 KB trees in
// chains ~15 deep, not one of them met twice: 3.1 MB of fresh heap, each
// page a fault (docs/BENCHMARKS.md, session 29). objectOnce walks the
// chain down to an undeltified object or a base kept already, then
// applies the deltas upwards through the two buffers of bufs, reused from
// chain to chain; only the object asked for gets memory of its own. It
// keeps no base. The bytes are object's (the caller hashes them again).
func (s *packSet) objectOnce(p *mappedPack, off int64, bufs *[2][]byte) (plumbing.ObjectType, []byte, error) {
	var deltas [][]byte
	var typ plumbing.ObjectType
	var base []byte
	for depth := 0; ; depth++ {
		if depth > 500 {
			return 0, nil, errors.New("delta chain too long")
		}
		if depth > 0 {
			s.mu.Lock()
			b, ok := s.bases[baseKey{p, off}]
			s.mu.Unlock()
			if ok {
				typ, base = b.typ, b.data
				break
			}
		}
		if off < 12 || off >= int64(len(p.pack)) {
			return 0, nil, fmt.Errorf("offset %d outside the pack", off)
		}
		b := p.pack[off:]
		t, size, i, err := objectHeaderAt(b)
		if err != nil {
			return 0, nil, err
		}
		switch t {
		case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
			data, err := inflate(b[i:], size)
			if err != nil {
				return 0, nil, err
			}
			typ, base = t, data
		case plumbing.OFSDeltaObject, plumbing.REFDeltaObject:
			bp, boff, delta, err := s.deltaAt(p, off, t, b, i, size)
			if err != nil {
				return 0, nil, err
			}
			deltas = append(deltas, delta)
			p, off = bp, boff
			continue
		default:
			return 0, nil, fmt.Errorf("object type %d", t)
		}
		break
	}
	// deltas[0] makes the object asked for from what deltas[1] makes, …,
	// and the last one applies to base. Each result goes to the buffer
	// that base is not in (base is in neither at first).
	in := -1
	for k := len(deltas) - 1; k >= 0; k-- {
		var dst []byte
		out := -1
		if k > 0 {
			out = 0
			if in == 0 {
				out = 1
			}
			dst = bufs[out]
		}
		data, err := patchDelta(dst, base, deltas[k])
		if err != nil {
			return 0, nil, err
		}
		if out >= 0 {
			bufs[out] = data[:0]
		}
		base, in = data, out
	}
	return typ, base, nil
}

// patchDelta is go-git's packfile.PatchDelta(src, delta) written into dst
// (its memory reused, grown as needed; a fresh slice when dst is nil): the
// same bytes, and an error for the same deltas (patchdelta_test.go
// compares them).
func patchDelta(dst, src, delta []byte) ([]byte, error) {
	if len(src) == 0 || len(delta) < 2 {
		return nil, errInvalidDelta
	}
	srcSz, delta, err := decodeLEB128(delta)
	if err != nil {
		return nil, err
	}
	if srcSz != uint(len(src)) {
		return nil, errInvalidDelta
	}
	targetSz, delta, err := decodeLEB128(delta)
	if err != nil {
		return nil, err
	}
	remaining := targetSz
	// As go-git: at most 64 KB made ready first (a damaged size asks for
	// no more), the rest grown by append.
	if grow := int(min(targetSz, 64<<10)); cap(dst) < grow {
		dst = make([]byte, 0, grow)
	} else if dst == nil {
		dst = []byte{}
	}
	dst = dst[:0]
	for remaining > 0 {
		if len(delta) == 0 {
			return nil, errInvalidDelta
		}
		cmd := delta[0]
		delta = delta[1:]
		switch {
		case cmd&0x80 != 0: // copy from src
			var offset, sz uint
			for j, mask := range [4]byte{0x01, 0x02, 0x04, 0x08} {
				if cmd&mask != 0 {
					if len(delta) == 0 {
						return nil, errInvalidDelta
					}
					offset |= uint(delta[0]) << (8 * j)
					delta = delta[1:]
				}
			}
			for j, mask := range [3]byte{0x10, 0x20, 0x40} {
				if cmd&mask != 0 {
					if len(delta) == 0 {
						return nil, errInvalidDelta
					}
					sz |= uint(delta[0]) << (8 * j)
					delta = delta[1:]
				}
			}
			if sz == 0 {
				sz = 0x10000
			}
			if sz > remaining || offset+sz < offset || offset+sz > srcSz {
				return nil, errInvalidDelta
			}
			dst = append(dst, src[offset:offset+sz]...)
			remaining -= sz
		case cmd != 0: // copy cmd bytes from the delta
			sz := uint(cmd)
			if sz > remaining || uint(len(delta)) < sz {
				return nil, errInvalidDelta
			}
			dst = append(dst, delta[:sz]...)
			remaining -= sz
			delta = delta[sz:]
		default:
			return nil, errDeltaCmd
		}
	}
	if len(delta) != 0 {
		return nil, errInvalidDelta
	}
	return dst, nil
}

var (
	errInvalidDelta = errors.New("invalid delta")
	errDeltaCmd     = errors.New("wrong delta command")
	errLEB128       = errors.New("delta size overflows")
)

// decodeLEB128 is go-git's (packfile): a size of 7-bit groups, low first,
// ending at a byte without the top bit or at the end of input.
func decodeLEB128(input []byte) (uint, []byte, error) {
	if len(input) == 0 {
		return 0, input, nil
	}
	var num, sz uint
	for {
		if sz*7 > 64-7 {
			return 0, input, errLEB128
		}
		b := input[sz]
		num |= (uint(b) & 0x7f) << (sz * 7)
		sz++
		if b&0x80 == 0 || sz == uint(len(input)) {
			break
		}
	}
	return num, input[sz:], nil
}
