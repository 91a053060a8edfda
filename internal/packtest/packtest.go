// Package packtest breaks a pack the way a forget before main e544dbc did,
// for tests only: the pack gets one object a second time, its header
// counts it, its .idx (listing each object once) does not. git then
// refuses the pack ("claims to have N+1 objects while index indicates N").
package packtest

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Duplicate rewrites the pack at base (".../pack-<sum>", no extension) with
// its first entry written again at its end, under the new pack's name,
// and removes the original. It returns the new base. Only packs below
// 2 GiB (32-bit offsets) are handled.
func Duplicate(base string) (string, error) {
	return AppendEntry(base, base)
}

// AppendEntry is Duplicate with the entry appended taken from the pack at
// from (the first entry of another pack: an object base's index does not
// list, which a repair must not drop).
func AppendEntry(base, from string) (string, error) {
	entry, err := firstEntry(from)
	if err != nil {
		return "", err
	}
	pack, err := os.ReadFile(base + ".pack")
	if err != nil {
		return "", err
	}
	idx, err := os.ReadFile(base + ".idx")
	if err != nil {
		return "", err
	}
	if len(idx) < 8+256*4+40 || string(idx[:4]) != "\xfftOc" || len(pack) < 32 || string(pack[:4]) != "PACK" {
		return "", fmt.Errorf("%s: not a version 2 pack", base)
	}
	out := append(append([]byte(nil), pack[:len(pack)-20]...), entry...)
	binary.BigEndian.PutUint32(out[8:], binary.BigEndian.Uint32(pack[8:])+1)
	sum := sha1.Sum(out)
	out = append(out, sum[:]...)
	ni := append(append([]byte(nil), idx[:len(idx)-40]...), sum[:]...)
	isum := sha1.Sum(ni)
	ni = append(ni, isum[:]...)
	nb := filepath.Join(filepath.Dir(base), "pack-"+hex.EncodeToString(sum[:]))
	if err := os.WriteFile(nb+".pack", out, 0o444); err != nil {
		return "", err
	}
	if err := os.WriteFile(nb+".idx", ni, 0o444); err != nil {
		return "", err
	}
	for _, ext := range []string{".pack", ".idx", ".rev"} {
		_ = os.Remove(base + ext)
	}
	return nb, nil
}

// firstEntry is the bytes of the entry at offset 12 of the pack at base.
func firstEntry(base string) ([]byte, error) {
	pack, err := os.ReadFile(base + ".pack")
	if err != nil {
		return nil, err
	}
	idx, err := os.ReadFile(base + ".idx")
	if err != nil {
		return nil, err
	}
	if len(idx) < 8+256*4+40 || string(idx[:4]) != "\xfftOc" || len(pack) < 32 || string(pack[:4]) != "PACK" {
		return nil, fmt.Errorf("%s: not a version 2 pack", base)
	}
	n := int(binary.BigEndian.Uint32(idx[8+255*4:]))
	offs := idx[8+256*4+n*24:]
	var all []int
	for i := 0; i < n; i++ {
		all = append(all, int(binary.BigEndian.Uint32(offs[i*4:])))
	}
	sort.Ints(all)
	end := len(pack) - 20
	if len(all) > 1 {
		end = all[1]
	}
	if len(all) == 0 || all[0] != 12 {
		return nil, fmt.Errorf("%s: no entry at offset 12", base)
	}
	return append([]byte(nil), pack[12:end]...), nil
}

// Newest is the base of the newest pack (by modification time) in the
// git dir's pack folder.
func Newest(gitDir string) (string, error) {
	idxs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "pack-*.idx"))
	best, bt := "", int64(0)
	for _, p := range idxs {
		if fi, err := os.Stat(p); err == nil && (best == "" || fi.ModTime().UnixNano() > bt) {
			best, bt = p, fi.ModTime().UnixNano()
		}
	}
	if best == "" {
		return "", fmt.Errorf("no pack in %s", gitDir)
	}
	return strings.TrimSuffix(best, ".idx"), nil
}
