package gitstore

import (
	"bytes"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestDeltaBasesNotHandedOut: the delta bases the pack set keeps are
// shared, uncopied, by every object deltified against them (base), so no
// read may hand one to its caller: every object of a memory packed by git
// with deep delta chains, read in a random order (seed logged) with what
// each read returned overwritten at once, reads again as the same bytes
// and hashes to its id, in a set whose bases were filled by those reads;
// and the bases kept are counted as before (type byte and content).
func TestDeltaBasesNotHandedOut(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	r := roundsRepo(t, 150)
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "repack", "-a", "-d", "-f", "--depth=50", "--window=50").CombinedOutput(); err != nil {
		t.Fatalf("git repack: %v\n%s", err, out)
	}
	out, err := exec.Command("git", "--git-dir", r.Dir(), "rev-list", "--objects", "--all").Output()
	if err != nil {
		t.Fatal(err)
	}
	var ids []plumbing.Hash
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		ids = append(ids, plumbing.NewHash(strings.Fields(line)[0]))
	}
	ps := openPackSet(r.Dir())
	want := map[plumbing.Hash][]byte{}
	for round := range 3 {
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		for _, h := range ids {
			typ, data, ok := ps.verified(h)
			if !ok {
				t.Fatalf("round %d: %s not read", round, h)
			}
			if w, seen := want[h]; seen && !bytes.Equal(w, data) {
				t.Fatalf("round %d: %s reads other bytes", round, h)
			}
			want[h] = append([]byte(nil), data...)
			if objectHash(typ, data) != h {
				t.Fatalf("round %d: %s hashes to another id", round, h)
			}
			for i := range data {
				data[i] ^= 0xa5
			}
		}
	}
	size := 0
	for _, b := range ps.bases {
		size += 1 + len(b.data)
	}
	if len(ps.bases) < 100 || size != ps.basesSize {
		t.Fatalf("%d bases kept, %d bytes counted for %d", len(ps.bases), ps.basesSize, size)
	}
}
