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
// repeat (at most a room per 5 exchanges, singletons under a third), no
// id-like concept (hashes, user ids, UIDs), and no room but the project
// holding more than 10 % of a memory.
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
	}
	st := statsOf(all)
	t.Logf("all          %4d exchanges: %4d rooms (%.2f per exchange), %4d used once, %d id-like, largest %s %.1f %%",
		st.exchanges, st.rooms, float64(st.rooms)/float64(st.exchanges), st.singletons, st.idLike, st.largest, 100*st.largestShare)
	if roomAims {
		if st.rooms*5 > st.exchanges || st.singletons*3 > st.rooms || st.idLike > 0 || st.largestShare > 0.10 {
			t.Errorf("rooms miss the aims: %+v", st)
		}
	}
}

// roomAims switches the assertions on once the distiller meets them.
var roomAims = false

// TestCardCodeSpansVerbatim checks real cards (the coding corpus, skipped
// without it): every complete `code span` of a core or context occurs byte
// for byte in its exchange.
func TestCardCodeSpansVerbatim(t *testing.T) {
	exs := loadExchanges(t, codingGlob)
	spans, bad := 0, 0
	for _, ex := range exs {
		c := heuristicCard(ex)
		text := ex.Render()
		// the core joins the ask and what was done with " — ": a span
		// never crosses it
		for _, field := range append(strings.Split(c.Core, " — "), c.Context) {
			for rest := field; ; {
				i := strings.IndexByte(rest, '`')
				if i < 0 {
					break
				}
				j := strings.IndexByte(rest[i+1:], '`')
				if j < 0 {
					break
				}
				span := rest[i : i+j+2]
				rest = rest[i+j+2:]
				if strings.HasSuffix(span, "…`") || span == "``" {
					continue
				}
				spans++
				if !strings.Contains(text, span) {
					bad++
					if bad <= 5 {
						t.Errorf("%s: %q is not in the exchange", ex.ID, span)
					}
				}
			}
		}
	}
	t.Logf("%d code spans in %d cards, %d not verbatim", spans, len(exs), bad)
	if spans == 0 {
		t.Error("no code span in any card: the test checks nothing")
	}
}
