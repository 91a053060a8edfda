package distill

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
)

// roomStats are the palace's shape over one memory: how many rooms, how
// many used once, how many look like ids, and the largest room's share.
type roomStats struct {
	exchanges, rooms, singletons, idLike int
	largest                              string
	largestShare                         float64
}

func statsOf(exs []*exchange.Exchange) roomStats {
	count := map[string]int{}
	for _, ex := range exs {
		for _, r := range heuristicCard(ex).Rooms {
			count[r.Type+":"+r.Key]++
		}
	}
	st := roomStats{exchanges: len(exs), rooms: len(count)}
	for k, n := range count {
		if n == 1 {
			st.singletons++
		}
		if idLike(k[strings.IndexByte(k, ':')+1:]) {
			st.idLike++
		}
		if strings.HasPrefix(k, "project:") {
			continue // one project per memory is its whole point
		}
		if s := float64(n) / float64(len(exs)); s > st.largestShare || s == st.largestShare && k < st.largest {
			st.largest, st.largestShare = k, s
		}
	}
	return st
}

// TestRoomsCodingCorpus reports the rooms of each coding memory (one folder
// = one developer's memory) and holds them to the palace's aims: rooms
// repeat (under a room per 3 exchanges, singletons near half of them at
// most), no id-like room (hashes, user ids, UIDs), no room but the project
// holding more than 15 % of a memory.
func TestRoomsCodingCorpus(t *testing.T) {
	files, _ := filepath.Glob(codingGlob)
	if len(files) == 0 {
		t.Skipf("no data at %s", codingGlob)
	}
	sort.Strings(files)
	var all []*exchange.Exchange
	for _, f := range files {
		exs := loadExchanges(t, f)
		all = append(all, exs...)
		st := statsOf(exs)
		t.Logf("%-12s %4d exchanges: %4d rooms (%.2f per exchange), %4d used once, %d id-like, largest %s %.1f %%",
			filepath.Base(filepath.Dir(f)), st.exchanges, st.rooms, float64(st.rooms)/float64(st.exchanges),
			st.singletons, st.idLike, st.largest, 100*st.largestShare)
		if st.largestShare > 0.15 {
			t.Errorf("%s: room %s holds %.0f %% of the memory", f, st.largest, 100*st.largestShare)
		}
	}
	st := statsOf(all)
	t.Logf("all          %4d exchanges: %4d rooms (%.2f per exchange), %4d used once, %d id-like, largest %s %.1f %%",
		st.exchanges, st.rooms, float64(st.rooms)/float64(st.exchanges), st.singletons, st.idLike, st.largest, 100*st.largestShare)
	// What heuristic/3 holds (before it: 1,823 rooms, 1,071 used once, 24
	// id-like); the largest room of a memory is 9.9–13.6 % (the aim is
	// ~10 %; 15.0 % before e2e had a room of its own and "request",
	// "response", "fetch" stopped calling api), held under 15 % above.
	if st.rooms*3 > st.exchanges || st.idLike > 0 || st.singletons*2 > st.rooms+st.rooms/10 {
		t.Errorf("rooms regressed: %+v", st)
	}
}
