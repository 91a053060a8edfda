package search

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gitmem/git-mem/search/embed"
)

func TestCardFacts(t *testing.T) {
	for _, tc := range []struct {
		text string
		want map[string]string
	}{
		{"Set port: 8080 in config/server.yaml", map[string]string{"port": "8080"}},
		{"region = us-east-1 in the provider", map[string]string{"region": "us-east-1"}},
		{"raise go.mod from go 1.22 to go 1.24", map[string]string{"go": "1.24"}}, // the last statement wins
		{"runs-on: ubuntu-24.04", map[string]string{"runs-on": "ubuntu-24.04"}},
		{"image: postgres:16", map[string]string{"image": "postgres:16", "postgres": "16"}},
		{"config/server.yaml to port: 9090", map[string]string{"port": "9090"}},
		// Places and names in error reports are not settings.
		{"sketch.js:172 Uncaught ReferenceError", map[string]string{}},
		{"zsh:1: command not found", map[string]string{}},
		{"p5.js:68443 Uncaught TypeError", map[string]string{}},
		{"TimeoutError: page.waitForURL", map[string]string{}},
		{"Error: something broke", map[string]string{}},
		{"mode: fast", map[string]string{}}, // a word, not a setting's value
	} {
		if got := cardFacts(tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("cardFacts(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestSupersedesRule(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 10, 0, 0, 0, time.UTC) }
	card := func(id string, d int, text string, rooms ...string) *LinkCard {
		return &LinkCard{ID: id, Project: "atlas", Time: day(d), Seq: d, Core: text, Rooms: rooms, Files: []string{"config/server.yaml"}}
	}
	port1 := card("p1", 1, "Set the API server port in config/server.yaml: port: 8080 for the load balancer.", "file:config_server")
	port2 := card("p2", 9, "Change the API server port in config/server.yaml to port: 9090 for the load balancer.", "file:config_server")
	for _, tc := range []struct {
		name     string
		a, b     *LinkCard
		ok       bool
		new, old string
	}{
		{"a setting with two values", port2, port1, true, "p2", "p1"},
		{"order of the arguments does not matter", port1, port2, true, "p2", "p1"},
		{"same value: nothing changed", port2, card("p3", 2, "Set the API server port in config/server.yaml: port: 9090 for the load balancer.", "file:config_server"), false, "", ""},
		{"another project", port2, &LinkCard{ID: "x", Project: "other", Time: day(1), Core: port1.Core, Rooms: port1.Rooms, Files: port1.Files}, false, "", ""},
		{"no shared room or file", port2, &LinkCard{ID: "x", Project: "atlas", Time: day(1), Core: port1.Core, Rooms: []string{"project:atlas"}}, false, "", ""},
		{"a project room alone is not shared ground", &LinkCard{ID: "n", Project: "atlas", Time: day(9), Core: port2.Core, Rooms: []string{"project:atlas"}},
			&LinkCard{ID: "o", Project: "atlas", Time: day(1), Core: port1.Core, Rooms: []string{"project:atlas"}}, false, "", ""},
		{"a change word about something else stays below the bar",
			&LinkCard{ID: "u", Project: "atlas", Time: day(20), Core: "We migrated the staging deploy to eu-west-2 instead; the pipeline pushes images from main.", Rooms: []string{"concept:git"}},
			&LinkCard{ID: "r", Project: "atlas", Time: day(1), Core: "House rule: never force-push to main; open a pull request.", Rooms: []string{"concept:git"}}, false, "", ""},
		{"a change word with a near restatement",
			&LinkCard{ID: "n", Project: "atlas", Time: day(9), Core: "Use zap for logging in internal/log/log.go instead, JSON output with request ids.", Rooms: []string{"file:log"}},
			&LinkCard{ID: "o", Project: "atlas", Time: day(1), Core: "Use logrus for logging in internal/log/log.go, JSON output with request ids.", Rooms: []string{"file:log"}}, true, "n", "o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, n, o, sim := Supersedes(tc.a, tc.b)
			if ok != tc.ok || n != tc.new || o != tc.old {
				t.Errorf("Supersedes = %v %q %q (sim %.3f), want %v %q %q", ok, n, o, sim, tc.ok, tc.new, tc.old)
			}
		})
	}
}

func TestTermCosine(t *testing.T) {
	set := func(ws ...string) map[string]bool {
		m := map[string]bool{}
		for _, w := range ws {
			m[w] = true
		}
		return m
	}
	for _, tc := range []struct {
		a, b map[string]bool
		want float64
	}{
		{set("a", "b"), set("a", "b"), 1},
		{set("a", "b"), set("c"), 0},
		{set("a", "b", "c", "d"), set("a"), 0.5},
		{set(), set("a"), 0},
		{set("x", "a", "q", "z", "b"), set("b", "y", "a"), 2 / math.Sqrt(15)},
	} {
		if got := termCosine(tc.a, tc.b); got != tc.want {
			t.Errorf("termCosine(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		// The numbered sets of the writer give the same value, whatever
		// order the terms were first seen in.
		for _, ids := range []termIDs{{}, {"z": 0, "y": 1, "b": 2}} {
			if got := idCosine(ids.set(tc.a), ids.set(tc.b)); got != tc.want {
				t.Errorf("idCosine(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		}
	}
}

// A rebuild and a catch-up derive the same links: the links of a set of
// documents added in one batch equal those added one by one.
func TestLinksSameInBatchAndOneByOne(t *testing.T) {
	docs := []Doc{
		{Seq: 0, ID: "p1", Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Core: "Set port: 8080 in config/server.yaml for the API server.", Rooms: []string{"file:config_server"}, Files: []string{"config/server.yaml"}, Project: "atlas"},
		{Seq: 1, ID: "n1", Time: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Core: "Fixed a typo in the README.", Rooms: []string{"file:readme"}, Files: []string{"README.md"}, Project: "atlas"},
		{Seq: 2, ID: "p2", Time: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC), Core: "Set port: 9090 in config/server.yaml for the API server.", Rooms: []string{"file:config_server"}, Files: []string{"config/server.yaml"}, Project: "atlas"},
	}
	links := func(batches [][]Doc) []Link {
		ix, err := Open(t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range batches {
			if err := ix.Add(b); err != nil {
				t.Fatal(err)
			}
			if err := ix.SetLastCommit("c", i); err != nil {
				t.Fatal(err)
			}
		}
		dir := ix.Dir()
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		return storedLinks(t, dir)
	}
	one := links([][]Doc{docs})
	each := links([][]Doc{docs[:1], docs[1:2], docs[2:]})
	if len(one) != 1 || one[0].New != "p2" || one[0].Old != "p1" {
		t.Fatalf("links of one batch: %+v", one)
	}
	if !reflect.DeepEqual(one, each) {
		t.Fatalf("one batch %+v, one by one %+v", one, each)
	}
}

// The prefilters of the link rule's regexps change no answer: on a table
// of edge cases and on random texts over the letters the patterns read
// (ASCII and the non-ASCII letters (?i) folds), the regexps find nothing
// where a prefilter says no.
func TestLinkPrefiltersAreExact(t *testing.T) {
	texts := []string{"", "use Go 1.22 instead", "INSTEAD", "No Longer", "not any more", "notanymore",
		"ſwitch to yarn", "switched over", "port: 9090", "port=9090", "go1.2", "a 1.2", "v1.2.3", "from a to b",
		"from now on", "DROPPED", "moVED it to", "\u212a", "bumped it to 3", "went  with", "now uses"}
	alpha := []rune("abcdefgilmnoprstuvwyABDIMNOS ſ\u212a0123456789.:=-_/")
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		b := make([]rune, rnd.IntN(40))
		for j := range b {
			b[j] = alpha[rnd.IntN(len(alpha))]
		}
		texts = append(texts, string(b))
	}
	words := []string{"instead", "not any more", "switch to", "replaced", "moved to", "from x to", "now uses", "drop", "v1.2", "k: v1", "SWITCH TO", "ſwitch to"}
	for i := 0; i < 5000; i++ {
		texts = append(texts, words[rnd.IntN(len(words))]+" "+texts[rnd.IntN(len(texts))]+" "+words[rnd.IntN(len(words))])
	}
	for _, s := range texts {
		if got, want := hasChangeWord(s), changeWords().MatchString(s); got != want {
			t.Errorf("hasChangeWord(%q) = %v, the regexp says %v", s, got, want)
		}
		if !digitDotDigit(s) && version().FindStringSubmatchIndex(s) != nil {
			t.Errorf("version matches %q without a digit, dot, digit", s)
		}
		if strings.IndexAny(s, ":=") < 0 && assignment().FindStringSubmatchIndex(s) != nil {
			t.Errorf("assignment matches %q without ':' or '='", s)
		}
	}
}

// TestLinksFileKeptWhenNothingLinks: a writer whose cards link nothing
// leaves links.bin as it was (same file, not rewritten), and one whose card
// links rewrites it with the new link, across reopened writers.
func TestLinksFileKeptWhenNothingLinks(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	docs := []Doc{
		{Seq: 0, ID: "p1", Time: day(1), Core: "Set port: 8080 in config/server.yaml for the API server.", Rooms: []string{"file:config_server"}, Files: []string{"config/server.yaml"}, Project: "atlas"},
		{Seq: 1, ID: "p2", Time: day(2), Core: "Set port: 9090 in config/server.yaml for the API server.", Rooms: []string{"file:config_server"}, Files: []string{"config/server.yaml"}, Project: "atlas"},
		{Seq: 2, ID: "n1", Time: day(3), Core: "Fixed a typo in the README.", Rooms: []string{"file:readme"}, Files: []string{"README.md"}, Project: "atlas"},
		{Seq: 3, ID: "p3", Time: day(4), Core: "Set port: 7070 in config/server.yaml for the API server.", Rooms: []string{"file:config_server"}, Files: []string{"config/server.yaml"}, Project: "atlas"},
	}
	dir := t.TempDir()
	add := func(d Doc) {
		ix, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Add([]Doc{d}); err != nil {
			t.Fatal(err)
		}
		if err := ix.SetLastCommit("c", d.Seq); err != nil {
			t.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}
	stat := func() os.FileInfo {
		fi, err := os.Stat(filepath.Join(dir, linksBinFile))
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	add(docs[0])
	add(docs[1])
	before := stat()
	add(docs[2]) // links nothing
	if after := stat(); !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("links.bin rewritten by an add that links nothing")
	}
	if ls := storedLinks(t, dir); len(ls) != 1 || ls[0].New != "p2" {
		t.Fatalf("links after the unlinked add: %+v", ls)
	}
	add(docs[3])
	if os.SameFile(before, stat()) {
		t.Errorf("links.bin not rewritten by an add that links")
	}
	p3 := 0
	for _, l := range storedLinks(t, dir) {
		if l.New == "p3" {
			p3++
		}
	}
	if p3 != 2 {
		t.Fatalf("links after the linking add: %+v, want p3 over p1 and p2", storedLinks(t, dir))
	}
}

// TestLinkSetIsLinkTerms: linkSet (a catch-up's terms of a card, numbered
// as found, files' terms taken out through a per-path cache) is the set
// linkTerms gives, term for term, for cards sharing one numbering and one
// cache, whatever was numbered before.
func TestLinkSetIsLinkTerms(t *testing.T) {
	cases := []struct {
		name string
		card LinkCard
	}{
		{"empty", LinkCard{}},
		{"stop words only", LinkCard{Core: "the and it this that"}},
		{"repeats and stems", LinkCard{Core: "Running runs ran RUNNING the runner", Context: "runs again"}},
		{"identifiers and parts", LinkCard{Core: "set sessionTTL in config/server.yaml to 30m", Context: "auth_middleware.go TypeError"}},
		{"file words taken out", LinkCard{Core: "server yaml port 8080 in config/server.yaml", Files: []string{"config/server.yaml"}}},
		{"same file again (cached)", LinkCard{Core: "config server yaml moved to 9090", Files: []string{"config/server.yaml"}}},
		{"two files, one word in both", LinkCard{Core: "main go test main_test.go handler", Files: []string{"cmd/main.go", "cmd/main_test.go"}}},
		{"a file's word absent from the text", LinkCard{Core: "nothing shared here", Files: []string{"deploy/helm/values.yaml"}}},
		{"only file words", LinkCard{Core: "values yaml", Files: []string{"values.yaml"}}},
		{"unicode", LinkCard{Core: "naïve café — Straße ſwitch \u212aelvin 温度", Context: "Ünïcode"}},
	}
	a := embed.NewAnalyzer()
	ids, files := termIDs{}, map[string][]uint32{}
	var buf []uint32
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []uint32
			got, buf = ids.linkSet(a, &tc.card, files, buf)
			name := map[uint32]string{}
			for w, id := range ids {
				name[id] = w
			}
			gotW := map[string]bool{}
			for i, id := range got {
				if i > 0 && got[i-1] >= id {
					t.Fatalf("set not sorted and unique: %v", got)
				}
				gotW[name[id]] = true
			}
			want := linkTerms(embed.NewAnalyzer(), &tc.card)
			if !reflect.DeepEqual(gotW, want) && (len(gotW) > 0 || len(want) > 0) {
				t.Errorf("linkSet = %v, linkTerms = %v", gotW, want)
			}
			if want := ids.set(want); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
				t.Errorf("linkSet ids %v, set(linkTerms) %v", got, want)
			}
		})
	}
}

// storedLinks returns the links of the index in dir, opened read-only as
// a search opens it.
func storedLinks(t *testing.T, dir string) []Link {
	t.Helper()
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ls, _, err := ro.Links()
	if err != nil {
		t.Fatal(err)
	}
	return ls
}
