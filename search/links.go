package search

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gitmem/git-mem/internal/lazy"
	"github.com/gitmem/git-mem/search/embed"
)

// Supersession links (issue 20). A derived link says that a newer exchange
// updates what an older one established. It is index data: a pure function
// of the two cards (core + context, rooms, files, project, time), so a
// rebuild from the same commits derives the same links on every machine,
// and a card never changes. Stated links and pins are commits that are not
// exchanges (see package memory); the indexer hands them over as Events
// and they are kept beside the derived links (links_store.go).

// LinkSimilarity is the token-set cosine of two cards (analysed terms of
// core + context, each term once) at or above which a change signal may
// link them. Below it a message that merely says "instead" about something
// else (the study's region migration against a rule about force-pushes)
// never supersedes. Measured on testdata/bench/supersede and the shared
// coding set: docs/bench/supersede.md. After changing it, reindex.
var LinkSimilarity = 0.15

// ChangeWordSimilarity is the higher bar for a pair whose only signal is
// a change word in the later card (no setting with two values): on real
// coding sessions "instead" and "replace" are everyday words, and below
// this bar most such links were wrong (docs/bench/supersede.md).
var ChangeWordSimilarity = 0.6

// linkWindow bounds the candidates of one new card per room or file: the
// latest earlier rows of the bucket (rows are added in commit order, so the
// window is the same in a rebuild and in a catch-up).
const linkWindow = 256

// linkCap bounds the links one card derives when it is added: on
// templated cards (the synthetic benchmark memory) every card "changed"
// the same settings as hundreds before it, 4.8 million links at 100,000
// exchanges; on the real coding set one card of 3,099 derives more than 3
// (docs/bench/supersede.md).
var linkCap = 8

// Link says that New supersedes Old (exchange ids).
type Link struct {
	New, Old string
	Sim      float64 // the card similarity that let it through
}

// Event is a commit that is not an exchange: a pin, an unpin, a stated
// supersession or its clearing. Package memory parses them; the index only
// keeps them, so that every reader gets the same view from one place.
type Event struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Target  string    `json:"target"`
	New     string    `json:"new,omitempty"`
	Project string    `json:"project,omitempty"`
	Note    string    `json:"note,omitempty"`
}

type linkRec struct {
	New, Old int32
	Sim      float64
}

// linkState is the writer's working set, built on the first Add.
type linkState struct {
	buckets map[string][]int32 // room (not project:) or file → rows, in row order
	feats   []*linkFeat        // by row; nil until computed
	// may is, by row, what mayLink reads of feats[row] (mayKnown|mayChange|
	// mayFacts), 0 while feats[row] is nil: deriveLinks refuses most of
	// a row's ~600 candidates from this byte and proj, where reading each
	// one's linkFeat was a cache miss (~4 of a 100,000 reindex's 95 CPU-s).
	may      []uint8
	proj     []uint32            // by row: feats[row].project, where may[row] is not 0
	terms    termIDs             // the numbers of linkFeat's strings
	files    map[string][]uint32 // a file path's terms, by terms' numbers (linkSet)
	scratch  []uint32            // linkSet's
	projects map[uint64]bool     // sameProject
	links    []linkRec
	events   []Event
	known    map[string]bool // event commits
	loaded   bool
	// metaSet: features gave a record its link meta (one loaded without),
	// so the document table is encoded again rather than copied.
	metaSet bool
	// changed: links or events differ from the generation's files. An add
	// whose cards link nothing leaves links.bin as it is (re-encoding it
	// was 0.46 s of an add of one exchange at 100,000).
	changed bool
	// fileN: links[:fileN] are links.bin's, none of them gone since, so
	// writeLinks merges the rest into the file (mergeLinks); -1: a link
	// went (a replaced or forgotten row), the file is encoded again.
	fileN int
	// partial: links.bin's links were not read (a writer that only adds
	// merges its new links into the file); links[:fileN] are those of them
	// this writer saved, links[fileN:] those it has not. allLinks reads
	// the rest. Reading every link was 0.21 s of an add at 1,000,000.
	partial bool
}

// changeWords say that a card replaces something said before.
var changeWords = lazy.Regexp(`(?i)\b(instead|no longer|not any ?more|anymore|changed? (?:it |this )?to|switch(?:ed|ing)? (?:to|over|from)|replac(?:e|ed|es|ing)|mov(?:e|es|ed|ing) (?:it )?to|from [\w./:@-]+ to|migrat(?:e|ed|ing) (?:to|from)|now (?:use|uses|using|on|is|at|points)|from now on|deprecat(?:e|ed)|bump(?:ed)? (?:it )?to|went with|drop(?:ped)?)\b`)

// assignment finds "key = value" and "key: value" where the value looks
// like a setting (a digit or a separator in it).
var assignment = lazy.Regexp(`(?i)\b([a-z][a-z0-9_-]{1,40})\s*[:=]\s*["'\x60]?([a-z0-9][a-z0-9_./@-]*(?::[a-z0-9][a-z0-9_./@-]*)*)`)

// version finds "name 1.22", "name v2.3.1": a tool or language version.
var version = lazy.Regexp(`(?i)\b([a-z][a-z0-9_.-]{1,40})\s+v?(\d+\.\d+(?:\.\d+)?)\b`)

// cardFacts returns the settings a card states: key → value, lower case;
// the last statement of a key wins ("from 1.22 to 1.24"). A value must
// look like a setting (a digit or a separator in it). Matches may overlap:
// "server.yaml to port: 9090" holds port = 9090.
func cardFacts(text string) map[string]string {
	type kv struct {
		at   int
		k, v string
	}
	var found []kv
	ver, asg := version(), assignment()
	for _, re := range []*regexp.Regexp{ver, asg} {
		// What each pattern cannot do without (version: digits around a
		// dot, \d being ASCII; assignment: ':' or '='), looked for first:
		// most cards hold neither, and the regexps were a sixth of adding
		// 1,000 exchanges into 100,000.
		if re == ver && !digitDotDigit(text) || re == asg && strings.IndexAny(text, ":=") < 0 {
			continue
		}
		for pos := 0; pos < len(text); {
			ix := re.FindStringSubmatchIndex(text[pos:])
			if ix == nil {
				break
			}
			k := strings.ToLower(strings.Trim(text[pos+ix[2]:pos+ix[3]], ".-_"))
			v := strings.ToLower(strings.TrimRight(text[pos+ix[4]:pos+ix[5]], ".,;"))
			// A place in an error report ("sketch.js:172:5", "zsh:1:")
			// or an error's name ("TimeoutError: …") is not a setting.
			end := pos + ix[5]
			start := pos + ix[2]
			located := end < len(text) && text[end] == ':' || // "zsh:1: command not found"
				start > 0 && strings.IndexByte("./\\#:-_", text[start-1]) >= 0 // "p5.js:68443", "#file:04
			if k != "" && !stopKeys[k] && !located && !errorish(k) && strings.ContainsAny(v, "0123456789_./:@-") {
				found = append(found, kv{pos + ix[0], k, v})
			}
			pos += ix[4] // the value may be the next key
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].at < found[j].at })
	out := map[string]string{}
	for _, f := range found {
		out[f.k] = f.v
	}
	return out
}

// digitDotDigit reports whether text holds an ASCII digit, a dot, a digit.
func digitDotDigit(text string) bool {
	for i := 1; i+1 < len(text); i++ {
		if text[i] == '.' && isDigit(text[i-1]) && isDigit(text[i+1]) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// changeStems are what every alternative of changeWords starts with, in
// lower case.
var changeStems = []string{"instead", "no longer", "not any", "anymore", "change", "switch", "replac", "mov", "from", "migrat", "now", "deprecat", "bump", "went with", "drop"}

// hasChangeWord is changeWords.MatchString, the regexp run only on ASCII
// text holding one of its stems (or on any text that is not ASCII, where
// (?i) folds letters such as 'ſ' and 'K' that lower-casing does not).
func hasChangeWord(text string) bool {
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		low := strings.ToLower(text)
		found := false
		for _, st := range changeStems {
			if strings.Contains(low, st) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return changeWords().MatchString(text)
}

// errorish reports a key that names an error, not a setting.
func errorish(k string) bool {
	for _, suf := range []string{"error", "exception", "warning", "fatal", "panic"} {
		if strings.HasSuffix(k, suf) {
			return true
		}
	}
	return false
}

// stopKeys are words the assignment pattern catches that name no setting.
var stopKeys = map[string]bool{"localhost": true, "http": true, "https": true, "line": true, "error": true, "it": true, "this": true, "that": true, "back": true, "up": true, "set": true, "and": true, "the": true, "from": true, "value": true, "was": true}

// cardTerms is the set of analysed terms of a card.
func cardTerms(a *embed.Analyzer, text string) map[string]bool {
	out := map[string]bool{}
	for _, t := range a.Analyze(text) {
		out[t] = true
	}
	return out
}

// linkTerms are a card's terms without those of its files' paths: sharing
// a file is the rule's precondition, so the path's words would count it
// twice (and two cards about one file would look alike whatever they say).
func linkTerms(a *embed.Analyzer, c *LinkCard) map[string]bool {
	t := cardTerms(a, c.text())
	for _, f := range c.Files {
		for _, w := range a.Analyze(f) {
			delete(t, w)
		}
	}
	return t
}

// termIDs numbers terms in the order first seen, so that a card's term set
// is a sorted slice of ids: a pair's cosine is a merge, not a map lookup per
// term (it was a sixth of a reindex), and a card's set takes a tenth of
// the memory of a map. The cosine depends on counts only, so the numbering
// changes nothing.
type termIDs map[string]uint32

// id numbers one string.
func (t termIDs) id(w string) uint32 {
	id, ok := t[w]
	if !ok {
		id = uint32(len(t))
		t[w] = id
	}
	return id
}

func (t termIDs) set(terms map[string]bool) []uint32 {
	out := make([]uint32, 0, len(terms))
	for w := range terms {
		id, ok := t[w]
		if !ok {
			id = uint32(len(t))
			t[w] = id
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// linkSet is t.set(linkTerms(a, c)) without the map of strings between
// them: the card's terms are numbered as Words finds them, sorted and made
// unique, and its files' terms (numbered once per path in files, which is
// tied to t) taken out. The same set of terms, so the same cosine with any
// other card; it was most of a catch-up's link derivation, which works out
// the terms of ~16,000 earlier cards for 1,000 new ones.
func (t termIDs) linkSet(a *embed.Analyzer, c *LinkCard, files map[string][]uint32, buf []uint32) (set, scratch []uint32) {
	out := buf[:0]
	embed.Words(c.text(), func(w string, _ bool) {
		if s := a.Term(w); s != "" {
			out = append(out, t.id(s))
		}
	})
	slices.Sort(out)
	out = slices.Compact(out)
	for _, f := range c.Files {
		drop, ok := files[f]
		if !ok {
			for _, s := range a.Analyze(f) {
				drop = append(drop, t.id(s))
			}
			files[f] = drop
		}
		for _, id := range drop {
			if i, found := slices.BinarySearch(out, id); found {
				out = slices.Delete(out, i, i+1)
			}
		}
	}
	return append(make([]uint32, 0, len(out)), out...), out
}

// idCosine is termCosine of two sets numbered by one termIDs.
func idCosine(a, b []uint32) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i, j = i+1, j+1
		}
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return float64(n) / math.Sqrt(float64(len(a))*float64(len(b)))
}

// termCosine is the cosine of two term sets as binary vectors.
func termCosine(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	n := 0
	for t := range a {
		if b[t] {
			n++
		}
	}
	return float64(n) / math.Sqrt(float64(len(a))*float64(len(b)))
}

// LinkCard is what the link rule reads of an exchange.
type LinkCard struct {
	ID, Project   string
	Time          time.Time
	Seq           int
	Core, Context string
	Rooms, Files  []string
}

func (c *LinkCard) text() string { return strings.TrimSpace(c.Core + " " + c.Context) }

// linkBuckets are the rooms and files a card is compared through: project
// rooms say nothing about the subject.
func linkBuckets(rooms, files []string) []string {
	var out []string
	for _, r := range rooms {
		if !strings.HasPrefix(r, "project:") {
			out = append(out, "r\x00"+r)
		}
	}
	for _, f := range files {
		out = append(out, "f\x00"+f)
	}
	return out
}

// newer reports whether a is the later card of the pair (time, then Seq,
// then id: a total order every machine computes alike).
func newer(a, b *LinkCard) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.After(b.Time)
	}
	if a.Seq != b.Seq {
		return a.Seq > b.Seq
	}
	return a.ID > b.ID
}

// Supersedes is the derivation rule for one pair: it returns whether the
// later card of a and b supersedes the earlier one, which is which, and
// the similarity. The two must share a project (or have none), a room
// that is not a project room or a file, and carry a change signal — one
// setting with two values, or a change word in the later card — and their
// cards must be at least LinkSimilarity alike.
func Supersedes(a, b *LinkCard) (ok bool, newID, oldID string, sim float64) {
	an, ids := embed.NewAnalyzer(), termIDs{}
	return supersedes(a, b, featOf(an, ids, a), featOf(an, ids, b))
}

// linkFeat is what the rule reads of one card, computed once per card
// (a rebuild compares each card with up to linkWindow others per room).
// Every string is a number of one termIDs, so that a pair is compared
// without reading the strings: at 100,000 exchanges the comparisons of
// ids, rooms and facts were cache misses more than work (26 of 37 s).
type linkFeat struct {
	terms   []uint32        // linkTerms (read through termSet)
	lazy    func() []uint32 // terms not worked out yet (linkState.features)
	facts   []fact          // cardFacts, by key number
	change  bool
	buckets []uint32 // linkBuckets
	id      uint32   // the exchange id
	project uint32
}

// fact is a numbered key = value of cardFacts.
type fact struct{ k, v uint32 }

// linkMeta is what the link rule's regexps find in a card. It is stored
// with the card's record (docs.bin) when the card is added: working it out
// again for every earlier card a new one is compared with was 5.1 s of the
// 12.6 s an add of 1,000 exchanges into 100,000 took.
type linkMeta struct {
	Change bool        // hasChangeWord
	Facts  [][2]string // cardFacts, by key
}

func linkMetaOf(text string) linkMeta {
	m := linkMeta{Change: hasChangeWord(text)}
	for k, v := range cardFacts(text) {
		m.Facts = append(m.Facts, [2]string{k, v})
	}
	slices.SortFunc(m.Facts, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return m
}

func featOf(an *embed.Analyzer, ids termIDs, c *LinkCard) *linkFeat {
	m := linkMetaOf(c.text())
	return featWith(an, ids, c, &m)
}

// featWith is featOf with the card's linkMeta already known.
func featWith(an *embed.Analyzer, ids termIDs, c *LinkCard, m *linkMeta) *linkFeat {
	f := featMeta(ids, c, m, ids.id(c.ID))
	f.terms = ids.set(linkTerms(an, c))
	return f
}

// termSet is the card's terms, worked out on first use.
func (f *linkFeat) termSet() []uint32 {
	if f.lazy != nil {
		f.terms, f.lazy = f.lazy(), nil
	}
	return f.terms
}

// featMeta is a card's features but its terms.
// id numbers the card's exchange id: equal for two cards of one exchange.
func featMeta(ids termIDs, c *LinkCard, m *linkMeta, id uint32) *linkFeat {
	f := &linkFeat{change: m.Change, id: id, project: ids.id(c.Project)}
	for _, kv := range m.Facts {
		f.facts = append(f.facts, fact{ids.id(kv[0]), ids.id(kv[1])})
	}
	slices.SortFunc(f.facts, func(a, b fact) int { return int(a.k) - int(b.k) })
	for _, b := range linkBuckets(c.Rooms, c.Files) {
		f.buckets = append(f.buckets, ids.id(b))
	}
	return f
}

// conflict reports whether two cards state one key with two values.
func conflict(a, b []fact) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i].k < b[j].k:
			i++
		case a[i].k > b[j].k:
			j++
		case a[i].v != b[j].v:
			return true
		default:
			i, j = i+1, j+1
		}
	}
	return false
}

// sameProject is supersedes' project rule, remembered per pair of project
// numbers (the rule is not symmetric).
func (st *linkState) sameProject(a, b string, fa, fb *linkFeat) bool {
	key := projectKey(fa, fb)
	same, ok := st.projects[key]
	if !ok {
		same = projectRule(a, b)
		st.projects[key] = same
	}
	return same
}

// projectKey is sameProject's key of a pair (the rule is not symmetric).
func projectKey(fa, fb *linkFeat) uint64 { return uint64(fa.project)<<32 | uint64(fb.project) }

func projectRule(a, b string) bool {
	return a == "" && b == "" || SameProject(a, b)
}

// mayLink is supersedes' cheapest refusal, from the features alone: with
// no change word in either card, a conflict needs facts in both.
func mayLink(fa, fb *linkFeat) bool {
	return fa.change || fb.change || len(fa.facts) > 0 && len(fb.facts) > 0
}

// linkPrefilter: deriveLinks refuses a pair from the candidate's may bits
// and from its project pair's remembered rule before reading its features
// or record. Off, every pair is read as before (tests compare both).
var linkPrefilter = true

// The bits of linkState.may.
const (
	mayKnown  uint8 = 1 << iota // the row's features are cached
	mayChange                   // linkFeat.change
	mayFacts                    // len(linkFeat.facts) > 0
)

// mayBits is what mayLink reads of f.
func mayBits(f *linkFeat) uint8 {
	b := mayKnown
	if f.change {
		b |= mayChange
	}
	if len(f.facts) > 0 {
		b |= mayFacts
	}
	return b
}

// refused is mayLink(fa, fb) false, told from fb's may bits (b) alone; a
// row whose features are not cached (b 0) is never refused here.
func refused(fa *linkFeat, b uint8) bool {
	return b != 0 && !fa.change && b&mayChange == 0 && (len(fa.facts) == 0 || b&mayFacts == 0)
}

// setFeat caches row's features and their may bits (nil: forgets both).
func (st *linkState) setFeat(row int32, f *linkFeat) {
	if n := int(row) + 1 - len(st.feats); n > 0 {
		st.feats = append(st.feats, make([]*linkFeat, n)...)
	}
	if n := int(row) + 1 - len(st.may); n > 0 {
		st.may = append(st.may, make([]uint8, n)...)
		st.proj = append(st.proj, make([]uint32, n)...)
	}
	st.feats[row] = f
	st.may[row], st.proj[row] = 0, 0
	if f != nil {
		st.may[row], st.proj[row] = mayBits(f), f.project
	}
}

// mayOf is row's may bits (0: features not cached).
func (st *linkState) mayOf(row int32) uint8 {
	if int(row) < len(st.may) {
		return st.may[row]
	}
	return 0
}

// supersedes is the rule for one pair (Supersedes), fa and fb numbered by
// one termIDs.
func supersedes(a, b *LinkCard, fa, fb *linkFeat) (bool, string, string, float64) {
	if !mayLink(fa, fb) || fa.id == fb.id || !projectRule(a.Project, b.Project) {
		return false, "", "", 0
	}
	return supersedesChecked(a, b, fa, fb)
}

// supersedesChecked is supersedes past its first refusals (mayLink, one
// id, the project).
func supersedesChecked(a, b *LinkCard, fa, fb *linkFeat) (bool, string, string, float64) {
	shared := false
	for _, x := range fa.buckets {
		for _, y := range fb.buckets {
			if x == y {
				shared = true
				break
			}
		}
		if shared {
			break
		}
	}
	if !shared {
		return false, "", "", 0
	}
	n, o, fn, fo := a, b, fa, fb
	if !newer(a, b) {
		n, o, fn, fo = b, a, fb, fa
	}
	conflict := conflict(fn.facts, fo.facts)
	if !conflict && !fn.change {
		return false, "", "", 0
	}
	sim := idCosine(fa.termSet(), fb.termSet())
	if min := LinkSimilarity; sim < min || !conflict && sim < ChangeWordSimilarity {
		return false, "", "", sim
	}
	return true, n.ID, o.ID, sim
}

// Candidates returns every pair of cards that passes the link rule but
// for the similarity threshold, each with its similarity, in card order
// (for measuring the threshold: docs/bench/supersede.md).
func Candidates(cards []LinkCard) []Link {
	an, ids := embed.NewAnalyzer(), termIDs{}
	feats := make([]*linkFeat, len(cards))
	for i := range cards {
		feats[i] = featOf(an, ids, &cards[i])
	}
	saved := LinkSimilarity
	LinkSimilarity = -1
	defer func() { LinkSimilarity = saved }()
	var out []Link
	for i := range cards {
		for j := 0; j < i; j++ {
			if ok, n, o, sim := supersedes(&cards[i], &cards[j], feats[i], feats[j]); ok {
				out = append(out, Link{New: n, Old: o, Sim: math.Round(sim*1e4) / 1e4})
			}
		}
	}
	return out
}

func (r *docRec) linkCard() LinkCard {
	return LinkCard{ID: r.ID, Project: r.Project, Time: r.Time, Seq: r.Seq, Core: r.Core, Context: r.Context, Rooms: r.Rooms, Files: r.Files}
}

// loadLinks reads the events of the generation (none yet: empty), and
// its links unless lazy (partial: allLinks reads them).
func (ix *Index) loadLinks(lazy bool) (*linkState, error) {
	st := &linkState{known: map[string]bool{}, partial: lazy}
	if !lazy {
		v, err := openLinks(ix.dir, len(ix.seqs))
		if err != nil {
			return nil, err
		}
		st.links, err = v.all()
		v.close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ix.dir, err)
		}
		st.fileN = len(st.links)
	}
	var err error
	if st.events, err = readEvents(ix.dir); err != nil {
		return nil, err
	}
	for _, e := range st.events {
		st.known[e.Commit] = true
	}
	return st, nil
}

// allLinks reads links.bin's links into a writer's partial link state.
func (ix *Index) allLinks() error {
	st := ix.lst
	if st == nil || !st.partial {
		return nil
	}
	v, err := openLinks(ix.dir, len(ix.seqs))
	if err != nil {
		return err
	}
	file, err := v.all()
	v.close()
	if err != nil {
		return fmt.Errorf("%s: %w", ix.dir, err)
	}
	// links[:fileN] were saved into the file: it holds them already.
	st.links = append(file, st.links[st.fileN:]...)
	st.fileN, st.partial = len(file), false
	return nil
}

// ensureLinkState builds the writer's buckets from the records.
func (ix *Index) ensureLinkState() error {
	if ix.lst != nil && ix.lst.loaded {
		return nil
	}
	st, err := ix.loadLinks(ix.lazy != nil)
	if err != nil {
		return err
	}
	st.buckets = map[string][]int32{}
	st.feats = make([]*linkFeat, len(ix.seqs))
	st.may = make([]uint8, len(ix.seqs))
	st.proj = make([]uint32, len(ix.seqs))
	st.terms = termIDs{}
	st.files = map[string][]uint32{}
	st.projects = map[uint64]bool{}
	if lz := ix.lazy; lz != nil {
		// The loaded rows' buckets from their dictionary numbers (scanLazy),
		// each room's and file's key made once: the rows that name it are
		// in row order, as the loop below lists them.
		for ref, rows := range lz.rooms {
			if s := lz.dict[ref]; !strings.HasPrefix(s, "project:") {
				st.buckets["r\x00"+s] = rows
			}
		}
		for ref, rows := range lz.files {
			st.buckets["f\x00"+lz.dict[ref]] = rows
		}
	}
	for i := ix.recOff(); i < len(ix.seqs); i++ {
		r := &ix.recs[i-ix.recOff()]
		for _, k := range linkBuckets(r.Rooms, r.Files) {
			st.buckets[k] = append(st.buckets[k], int32(i))
		}
	}
	st.loaded = true
	ix.lst = st
	return nil
}

// cached is row's features when features worked them out, else nil.
func (st *linkState) cached(row int32) *linkFeat {
	if int(row) < len(st.feats) {
		return st.feats[row]
	}
	return nil
}

func (st *linkState) features(a *embed.Analyzer, row int32, r *docRec) *linkFeat {
	if f := st.cached(row); f != nil {
		return f
	}
	c := r.linkCard()
	if r.Link == nil { // a record from before linkMeta was stored: kept from now on
		m := linkMetaOf(c.text())
		r.Link = &m
		st.metaSet = true // the record changed: the table is encoded again
	}
	// The terms (analysing the card) only when a pair gets as far as its
	// similarity: computing them for every earlier card a new one was
	// compared with was 1.2 s of the 9 s an add of 1,000 into 100,000 took.
	// An index holds one row per exchange id (a forgotten row's is its own,
	// deadID), so the row numbers the id: numbering the strings put the
	// ~40,000 ids a catch-up compares into st.terms (0.03 s at 100,000).
	f := featMeta(st.terms, &c, r.Link, uint32(row))
	f.lazy = func() []uint32 {
		var set []uint32
		set, st.scratch = st.terms.linkSet(a, &c, st.files, st.scratch)
		return set
	}
	st.setFeat(row, f)
	return f
}

// deriveLinks compares a newly added row with the latest earlier rows of
// its rooms and files. The caller holds the writer; row's record is set.
func (ix *Index) deriveLinks(a *embed.Analyzer, row int32, replaced bool) error {
	st := ix.lst
	rec, err := ix.recAt(row)
	if err != nil {
		return err
	}
	if replaced { // a new blob for a known id: its links are derived again
		if err := ix.allLinks(); err != nil {
			return err
		}
		st.changed = true
		st.fileN = -1
		if int(row) < len(st.feats) {
			st.setFeat(row, nil)
		}
		kept := st.links[:0]
		for _, l := range st.links {
			if l.New != row && l.Old != row {
				kept = append(kept, l)
			}
		}
		st.links = kept
	}
	fa := st.features(a, row, rec)
	ca := rec.linkCard()
	var cands []int32
	for _, k := range linkBuckets(rec.Rooms, rec.Files) {
		rows := st.buckets[k]
		i := sort.Search(len(rows), func(i int) bool { return rows[i] >= row })
		for j := i - 1; j >= 0 && j >= i-linkWindow; j-- {
			if r := rows[j]; r != row {
				cands = append(cands, r)
			}
		}
		switch {
		case replaced:
		case i == len(rows): // a new row is the last (no copy of the bucket's tail)
			st.buckets[k] = append(rows, row)
		default:
			st.buckets[k] = append(rows[:i], append([]int32{row}, rows[i:]...)...)
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands) // a row in two of the buckets once
	var found []linkRec
	for _, r := range cands {
		// A row compared before keeps its features: its record is looked
		// up only for a pair they do not refuse (~1 in 10 of the ~600
		// candidates of each of 1,000 new rows at 100,000), and most are
		// refused by its may bits or project number (may, proj) without
		// reading the features.
		if b := st.mayOf(r); linkPrefilter && b != 0 {
			if refused(fa, b) {
				continue
			}
			key := uint64(fa.project)<<32 | uint64(st.proj[r]) // projectKey(fa, fb)
			if same, known := st.projects[key]; known && !same {
				continue
			}
		}
		var o *docRec
		fb := st.cached(r)
		if fb == nil {
			if o, err = ix.recAt(r); err != nil {
				return err
			}
			fb = st.features(a, r, o)
		}
		if !mayLink(fa, fb) || fa.id == fb.id {
			continue
		}
		if same, known := st.projects[projectKey(fa, fb)]; linkPrefilter && known && !same {
			continue // refused without reading the record (a cache miss a pair)
		}
		if o == nil {
			if o, err = ix.recAt(r); err != nil {
				return err
			}
		}
		if !st.sameProject(rec.Project, o.Project, fa, fb) {
			continue // before the card is copied
		}
		cb := o.linkCard()
		ok, n, _, sim := supersedesChecked(&ca, &cb, fa, fb)
		if !ok {
			continue
		}
		l := linkRec{New: row, Old: r, Sim: math.Round(sim*1e4) / 1e4}
		if n != ca.ID {
			l.New, l.Old = r, row
		}
		found = append(found, l)
	}
	if len(found) > linkCap {
		// The most alike first, then the latest: what the row says is
		// most likely to replace.
		sort.SliceStable(found, func(i, j int) bool {
			if found[i].Sim != found[j].Sim {
				return found[i].Sim > found[j].Sim
			}
			return min(found[i].New, found[i].Old) > min(found[j].New, found[j].Old)
		})
		found = found[:linkCap]
	}
	if len(found) > 0 {
		st.changed = true
	}
	st.links = append(st.links, found...)
	return nil
}

// AddEvents keeps commits that are not exchanges (pins, stated links);
// one already kept (by commit) is skipped.
func (ix *Index) AddEvents(evs []Event) error {
	if ix.readOnly {
		return ErrReadOnly
	}
	if len(evs) == 0 {
		return nil
	}
	if err := ix.ensureLinkState(); err != nil {
		return err
	}
	for _, e := range evs {
		if !ix.lst.known[e.Commit] {
			ix.lst.known[e.Commit] = true
			ix.lst.events = append(ix.lst.events, e)
			ix.lst.changed = true
		}
	}
	ix.dirty = true
	return nil
}

// writeLinks saves links.bin and events.json when the writer touched
// them (each through a temporary file and a rename: a reader sees the old
// file or the new one).
func (ix *Index) writeLinks() error {
	var links []linkRec
	var events []Event
	if ix.lst == nil || !ix.lst.loaded {
		if _, err := os.Stat(filepath.Join(ix.dir, linksBinFile)); err == nil {
			return nil // untouched
		}
	} else {
		if !ix.lst.changed {
			if _, err := os.Stat(filepath.Join(ix.dir, linksBinFile)); err == nil {
				return nil // nothing linked or unlinked since it was read
			}
		}
		links, events = ix.lst.links, ix.lst.events
	}
	if events == nil {
		events = []Event{}
	}
	raw, err := json.Marshal(eventsDisk{Threshold: LinkSimilarity, Events: events})
	if err != nil {
		return err
	}
	idOf := ix.idOf
	var bin []byte
	if st := ix.lst; st != nil && st.loaded && st.fileN >= 0 && st.fileN <= len(links) {
		v, err := openLinks(ix.dir, len(ix.seqs))
		if err != nil {
			return err
		}
		bin, err = mergeLinks(v, links[st.fileN:], idOf)
		v.close()
		if err != nil {
			return err
		}
	} else {
		bin = encodeLinks(append([]linkRec(nil), links...), idOf)
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{eventsFile, raw}, {linksBinFile, bin}} {
		tmp := filepath.Join(ix.dir, f.name+".tmp")
		if err := os.WriteFile(tmp, f.b, 0o644); err != nil {
			return fmt.Errorf("write supersession links: %w", err)
		}
		if err := os.Rename(tmp, filepath.Join(ix.dir, f.name)); err != nil {
			return fmt.Errorf("write supersession links: %w", err)
		}
	}
	if ix.lst != nil {
		ix.lst.changed = false
		ix.lst.fileN = len(ix.lst.links)
	}
	return nil
}

// Links returns every derived link (exchange ids) and the kept events: the
// links in links.bin's order (a writer's: those it derived and has not
// saved after them), the events in the order they were added. It reads
// every link: marking a few exchanges is LinksOf's job.
func (ix *Index) Links() ([]Link, []Event, error) {
	ix.mu.Lock()
	st := ix.lst
	ix.mu.Unlock()
	var recs []linkRec
	var events []Event
	if st != nil {
		if err := ix.allLinks(); err != nil {
			return nil, nil, err
		}
		recs, events = st.links, st.events
	} else {
		v, err := openLinks(ix.dir, len(ix.seqs))
		if err != nil {
			return nil, nil, err
		}
		recs, err = v.all()
		v.close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", ix.dir, err)
		}
		if events, err = readEvents(ix.dir); err != nil {
			return nil, nil, err
		}
	}
	out := make([]Link, 0, len(recs))
	for _, l := range recs {
		n, o, err := ix.linkIDs(l)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, Link{New: n, Old: o, Sim: l.Sim})
	}
	return out, events, nil
}

func (ix *Index) linkIDs(l linkRec) (newID, oldID string, err error) {
	if int(l.New) >= len(ix.seqs) || int(l.Old) >= len(ix.seqs) || l.New < 0 || l.Old < 0 {
		return "", "", fmt.Errorf("%s: links name row %d of %d: %w", ix.dir, max(l.New, l.Old), len(ix.seqs), ErrCorrupt)
	}
	n, err := ix.rec(l.New)
	if err != nil {
		return "", "", err
	}
	o, err := ix.rec(l.Old)
	if err != nil {
		return "", "", err
	}
	return n.ID, o.ID, nil
}

// LinksOf returns the derived links that name one of ids, or an exchange
// an event names (a pin's target, a stated link's ends), and every event:
// what marking those exchanges needs, read without decoding the rest.
func (ix *Index) LinksOf(ids []string) ([]Link, []Event, error) {
	ix.mu.Lock()
	st := ix.lst
	ix.mu.Unlock()
	events := []Event(nil)
	if st != nil {
		events = st.events
	} else {
		var err error
		if events, err = readEvents(ix.dir); err != nil {
			return nil, nil, err
		}
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, e := range events {
		want[e.Target] = true
		if e.New != "" {
			want[e.New] = true
		}
	}
	delete(want, "")
	var out []Link
	if st != nil { // a writer: its links may not be saved yet
		if err := ix.allLinks(); err != nil {
			return nil, nil, err
		}
		for _, l := range st.links {
			n, o, err := ix.linkIDs(l)
			if err != nil {
				return nil, nil, err
			}
			if want[n] || want[o] {
				out = append(out, Link{New: n, Old: o, Sim: l.Sim})
			}
		}
		return out, events, nil
	}
	v, err := openLinks(ix.dir, len(ix.seqs))
	if err != nil {
		return nil, nil, err
	}
	defer v.close()
	seen := map[[2]int32]bool{}
	add := func(l linkRec) error {
		k := [2]int32{l.New, l.Old}
		if seen[k] {
			return nil
		}
		seen[k] = true
		n, o, err := ix.linkIDs(l)
		if err == nil {
			out = append(out, Link{New: n, Old: o, Sim: l.Sim})
		}
		return err
	}
	for id := range want {
		err := v.find(idHash(id), func(nd linkNode) error {
			r, err := ix.rec(nd.row)
			if err != nil || r.ID != id {
				return err
			}
			if err := v.entries(nd.supOff, nd.supN, func(o int32, sim float64) error {
				return add(linkRec{New: nd.row, Old: o, Sim: sim})
			}); err != nil {
				return err
			}
			return v.entries(nd.byOff, nd.byN, func(n int32, sim float64) error {
				return add(linkRec{New: n, Old: nd.row, Sim: sim})
			})
		})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", ix.dir, err)
		}
	}
	// One order whatever the map gave: by new id, then old id.
	sort.Slice(out, func(i, j int) bool {
		if out[i].New != out[j].New {
			return out[i].New < out[j].New
		}
		return out[i].Old < out[j].Old
	})
	return out, events, nil
}

// forgetLinks follows ForgetDocs: the derived links of emptied rows and
// the events that name a forgotten exchange go (the rewrite dropped those
// commits: package memory's metaPaths), the other events follow their
// rewritten commits.
func (ix *Index) forgetLinks(ids []string, moved map[string]string) error {
	if err := ix.ensureLinkState(); err != nil {
		return err
	}
	if err := ix.allLinks(); err != nil {
		return err
	}
	st := ix.lst
	st.changed = true
	st.fileN = -1
	gone := make(map[string]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	links := st.links[:0]
	for _, l := range st.links {
		if !isDead(ix.recs[l.New].ID) && !isDead(ix.recs[l.Old].ID) {
			links = append(links, l)
		}
	}
	st.links = links
	events := st.events[:0]
	st.known = map[string]bool{}
	for _, e := range st.events {
		if gone[e.Target] || gone[e.New] {
			continue
		}
		if nc, ok := moved[e.Commit]; ok {
			e.Commit = nc
		}
		st.known[e.Commit] = true
		events = append(events, e)
	}
	st.events = events
	for k, rows := range st.buckets {
		kept := rows[:0]
		for _, r := range rows {
			if !isDead(ix.recs[r].ID) {
				kept = append(kept, r)
			}
		}
		st.buckets[k] = kept
	}
	for r, f := range st.feats {
		if f != nil && isDead(ix.recs[r].ID) {
			st.setFeat(int32(r), nil)
		}
	}
	return nil
}

// HasChangeWord reports whether text holds one of the change words the
// link rule reads (the benchmark's questions must hold none).
func HasChangeWord(text string) bool { return changeWords().MatchString(text) }
