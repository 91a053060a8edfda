package redact

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

// detector is gitleaks' detector over its default rules, built on first
// use: parsing the embedded TOML and compiling ~220 regexps takes 120-250 ms
// on the reference machine (docs/BENCHMARKS.md), which processes that never
// redact (version, search, context) must not pay. A Detector only reads its
// config while detecting, so one serves every goroutine.
var detector = sync.OnceValues(func() (*detect.Detector, error) {
	// gitleaks logs to stderr at info level; a library must stay quiet.
	logging.Logger = zerolog.Nop()
	return detect.NewDetectorDefaultConfig()
})

// gitleaksSecret says whether a gitleaks finding's secret is one to replace:
// its generic rule flags placeholders and markers ours already wrote.
func gitleaksSecret(rule, v string) bool {
	if len(v) < 5 || strings.Contains(v, Marker) || strings.Contains(v, "REDACTED") {
		return false
	}
	if isPlaceholder(v) {
		return false
	}
	if strings.HasPrefix(rule, "generic") {
		// Its generic rule fires on "key"/"id" near any token. Measured on
		// the coding corpus: hex ids ("Key: 4c91a75b17aeb995.Test…"), React
		// keys (cuids) and UUIDs. Named assignments are our assign layer's.
		head, _, _ := strings.Cut(v, ".")
		if isHashOrID(v) || isHashOrID(head) || len(v) < 32 && countClass(v, isUpper) == 0 && !strings.ContainsAny(v, "+/=!#$%&*?@^~") {
			return false
		}
	}
	return true
}

// isHashOrID matches UUIDs and hex digests (git SHAs, md5, sha256): ids that
// gitleaks' generic rule takes for keys when a log line says "ID:" or "key".
func isHashOrID(v string) bool {
	h := strings.ReplaceAll(v, "-", "")
	if len(h) < 7 || len(h) > 128 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !isDigit(h[i]) && (h[i] < 'a' || h[i] > 'f') && (h[i] < 'A' || h[i] > 'F') {
			return false
		}
	}
	return !strings.Contains(v, "-") || len(v) == 36 && strings.Count(v, "-") == 4
}

// gitleaksChunk is the size of the fragments gitleaks is given: whole
// lines packed up to this many bytes. gitleaks walks its ~220 rules once
// per fragment and runs a rule over the whole fragment when one of its
// keywords occurs in it, so small fragments pay the walk and big ones the
// regexps. On one coding folder (docgen, 2.4 MB, shared machine): a line
// at a time 3.4-4.8 s, 256-1024 bytes 1.6-2.9 s, a whole exchange 9.2 s,
// all its strings joined 49 s.
const gitleaksChunk = 512

// gitleaks runs gitleaks' rules over text and learns every secret found, to
// be replaced wherever it occurs; lower is asciiLower(text).
func (sc *scan) gitleaks(text, lower string) {
	if len(text) < 8 {
		return
	}
	d, err := split()
	if err != nil {
		// The embedded default config always parses; if a future version's
		// did not, our own layers still run.
		return
	}
	fragmentsAt(text, func(from, end int) { sc.learnFindings(d, text[from:end], lower[from:end]) })
}

// fragments calls fn with text cut into whole lines packed into fragments
// of up to gitleaksChunk bytes.
func fragments(text string, fn func(frag string)) {
	fragmentsAt(text, func(from, end int) { fn(text[from:end]) })
}

// fragmentsAt is fragments giving each fragment's bounds in text.
func fragmentsAt(text string, fn func(from, end int)) {
	from, end := 0, 0
	for line := range strings.Lines(text) {
		if end > from && end-from+len(line) > gitleaksChunk {
			fn(from, end)
			from = end
		}
		end += len(line)
	}
	if end > from {
		fn(from, end)
	}
}

// learnFindings learns gitleaks' findings in a fragment; lower is
// asciiLower(line).
func (sc *scan) learnFindings(d *splitDetector, line, lower string) {
	fs := d.detectLower(line, lower)
	// gitleaks keeps its rules in a map: its findings come in any order.
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.StartLine != b.StartLine {
			return a.StartLine < b.StartLine
		}
		if a.StartColumn != b.StartColumn {
			return a.StartColumn < b.StartColumn
		}
		return a.RuleID < b.RuleID
	})
	for _, f := range fs {
		v := strings.TrimSpace(f.Secret)
		if !gitleaksSecret(f.RuleID, v) {
			continue
		}
		sc.learn(v, f.RuleID)
		sc.force[v] = true
	}
}

// splitDetector gives the findings of gitleaks' whole default rule set on a
// fragment, for less work. gitleaks runs a rule's regexp over a fragment
// when one of the rule's keywords occurs in it; three rules' keywords occur
// in most fragments of a transcript ("key", "api", "token" for
// generic-api-key, "s." for vault-service-token, "ey" for jwt) and their
// regexps took most of gitleaks' time on the coding corpus (measured:
// generic-api-key ran on 10,931 of 80,371 fragments, vault-service-token on
// 24,283). Each of the three runs in a detector of its own, only on
// fragments where a necessary condition of its regexp holds (a match is
// impossible otherwise); the other rules run in one detector, only on
// fragments holding one of their keywords (without one, gitleaks runs none
// of them). gitleaks' last step, dropping a generic finding that another
// rule's finding on the same line contains, is applied to the union again.
// TestGitleaksSplitIsExact compares the findings with the whole detector's.
type splitDetector struct {
	rest *detect.Detector
	// restWords finds the rest's keywords (lower case); nil when a rest
	// rule has none, so that the rest runs on every fragment.
	restWords *litSet
	// asciiWords: every literal of restWords is ASCII (keywordLower).
	asciiWords bool
	hot        []hotRule

	// The rest runs as a detector of only the rules whose keywords occur
	// in the fragment: gitleaks' own walk of the fragment asks each of its
	// ~220 rules for its keywords (strings.ToLower and a map look-up per
	// keyword), which was most of its time on the coding corpus, where a
	// fragment calls one rule or two. kwRules maps a keyword to the rules
	// (indices into restIDs) it calls, as gitleaks decides it (a rule runs
	// when the lower case of one of its keywords is among those found in
	// the lower-cased fragment); chosen caches a detector per set of rules,
	// their keywords dropped so that each runs, up to maxChosen sets (then
	// the rest runs whole: the same findings, slower).
	restCfg config.Config
	restIDs []string
	kwRules map[string][]int
	// patRules[j] is kwRules of restWords' literal j, patHot[j] the bits
	// of the keyed hot rules it is a keyword of.
	patRules [][]int
	patHot   []uint64
	chosen   sync.Map // string(set key) -> *detect.Detector
	nChosen  atomic.Int32
}

// maxChosen bounds the detectors splitDetector caches (the coding corpus
// makes a few dozen sets).
const maxChosen = 512

type hotRule struct {
	d *detect.Detector
	// may false: the rule's regexp cannot match frag (lower is
	// asciiLower(frag)).
	may func(frag, lower string) bool
	// keyed: may is asked only when one of the rule's keywords occurs in
	// the fragment (bit is set in restFor's answer); without one gitleaks
	// runs the rule not at all.
	keyed bool
	bit   uint64
	// from, when set, replaces may: -1 where may is false, else where in
	// frag the rule's detector may start without changing its findings
	// (detectFrom).
	from func(frag, lower string) int
}

// hotRules are the rules split off, with the regexp each condition was
// derived from: a gitleaks version that changes one keeps it in the rest.
var hotRules = []struct {
	id, regex string
	may       func(frag, lower string) bool
	keyed     bool                         // see hotRule
	from      func(frag, lower string) int // see hotRule
}{
	{"generic-api-key", `(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`, mayGeneric, false, genericFrom},
	{"vault-service-token", `\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)`, func(s, _ string) bool { return mayVault(s) }, false, nil},
	{"jwt", `\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)`, func(s, _ string) bool { return strings.Contains(s, ".ey") }, false, nil},
	// Rules written as generic-api-key is, with a name of their own; their
	// keywords ("test_", "live_", "_pub", "sonar", …) called them on 959 of
	// the coding corpus's fragments (lob-api-key's regexp: 74 ms a pass,
	// session 20), their names were on 0-82 (mayNamed), asked only where
	// a keyword is (keyed).
	{"lob-api-key", `(?i)[\w.-]{0,50}?(?:lob)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}((live|test)_[a-f0-9]{35})(?:[\x60'"\s;]|\\[nr]|$)`, mayNamed("lob", 0), true, nil},
	{"lob-pub-api-key", `(?i)[\w.-]{0,50}?(?:lob)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}((test|live)_pub_[a-f0-9]{31})(?:[\x60'"\s;]|\\[nr]|$)`, mayNamed("lob", 0), true, nil},
	// sonar[_.-]?(login|token): at most 6 more bytes before the filler,
	// all of them filler bytes.
	{"sonar-api-token", `(?i)[\w.-]{0,50}?(?:sonar[_.-]?(login|token))(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}((?:squ_|sqp_|sqa_)?[a-z0-9=_\-]{40})(?:[\x60'"\s;]|\\[nr]|$)`, mayNamed("sonar", 6), true, nil},
	{"linear-client-secret", `(?i)[\w.-]{0,50}?(?:linear)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{32})(?:[\x60'"\s;]|\\[nr]|$)`, mayNamed("linear", 0), true, nil},
	{"discord-client-secret", `(?i)[\w.-]{0,50}?(?:discord)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9=_\-]{32})(?:[\x60'"\s;]|\\[nr]|$)`, mayNamed("discord", 0), true, nil},
	// Its keyword "sk" is in 17 % of the coding corpus's fragments (task,
	// ask, risk), where it was the rest's only rule on 21,101 of them: a
	// gitleaks call each (lower-casing the fragment, its own keyword
	// search) for a regexp that needs "SK" and 32 hex digits (mayHex).
	{"twilio-api-key", `SK[0-9a-fA-F]{32}`, mayHex("SK", 32), true, nil},
}

// split is built from detector's config on first use.
var split = sync.OnceValues(func() (*splitDetector, error) {
	full, err := detector()
	if err != nil {
		return nil, err
	}
	cfg := full.Config
	sd := &splitDetector{}
	taken := map[string]bool{}
	hotKw := map[string]uint64{} // keyed hot rules' keywords -> their bits
	for _, h := range hotRules {
		r, ok := cfg.Rules[h.id]
		if !ok || r.Regex == nil || r.Regex.String() != h.regex || r.Path != nil || r.SkipReport {
			continue
		}
		taken[h.id] = true
		hr := hotRule{d: subDetector(cfg, func(id string) bool { return id == h.id }), may: h.may}
		if len(r.RequiredRules) == 0 {
			hr.from = h.from
		}
		if h.keyed && len(r.Keywords) > 0 && len(hotKw) < 64 {
			hr.keyed, hr.bit = true, 1<<len(sd.hot)
			for _, k := range r.Keywords {
				hotKw[strings.ToLower(k)] |= hr.bit
			}
		}
		sd.hot = append(sd.hot, hr)
	}
	sd.rest = subDetector(cfg, func(id string) bool { return !taken[id] })
	sd.restCfg = cfg
	sd.restIDs = sd.rest.Config.OrderedRules
	sd.kwRules = map[string][]int{}
	for i, id := range sd.restIDs {
		for _, k := range sd.rest.Config.Rules[id].Keywords {
			k = strings.ToLower(k)
			if !slices.Contains(sd.kwRules[k], i) {
				sd.kwRules[k] = append(sd.kwRules[k], i)
			}
		}
	}
	var words []string
	for w := range sd.rest.Config.Keywords {
		words = append(words, w)
	}
	for w := range hotKw {
		if _, ok := sd.rest.Config.Keywords[w]; !ok {
			words = append(words, w)
		}
	}
	sd.restWords = newLitSet(words, true)
	sd.asciiWords = true
	for _, w := range words {
		sd.asciiWords = sd.asciiWords && isASCII(w)
	}
	for _, w := range words {
		sd.patRules = append(sd.patRules, sd.kwRules[w])
		sd.patHot = append(sd.patHot, hotKw[w])
	}
	for _, r := range sd.rest.Config.Rules {
		// A rule with no keywords runs on every fragment: its regexp, or
		// its path rule (fragments here have no path).
		if len(r.Keywords) == 0 && (r.Regex != nil || r.Path != nil && r.Path.MatchString("")) {
			sd.restWords = nil
		}
	}
	return sd, nil
})

// subDetector is a detector over the rules of cfg that keep accepts.
func subDetector(cfg config.Config, keep func(id string) bool) *detect.Detector {
	sub := cfg
	sub.Rules = map[string]config.Rule{}
	sub.Keywords = map[string]struct{}{}
	sub.OrderedRules = nil
	for id, r := range cfg.Rules {
		if !keep(id) {
			continue
		}
		sub.Rules[id] = r
		sub.OrderedRules = append(sub.OrderedRules, id)
		for _, k := range r.Keywords {
			sub.Keywords[strings.ToLower(k)] = struct{}{}
		}
	}
	sort.Strings(sub.OrderedRules)
	return detect.NewDetector(sub)
}

// detect returns what the whole detector's DetectString(frag) returns, in
// some order.
func (sd *splitDetector) detect(frag string) []report.Finding {
	return sd.detectLower(frag, asciiLower(frag))
}

// detectLower is detect given lower, asciiLower(frag).
func (sd *splitDetector) detectLower(frag, lower string) []report.Finding {
	var fs []report.Finding
	keyed := ^uint64(0)
	if sd.restWords == nil {
		fs = sd.rest.DetectString(frag)
	} else {
		var d *detect.Detector
		if d, keyed = sd.restFor(sd.keywordLower(frag, lower)); d != nil {
			fs = d.DetectString(frag)
		}
	}
	for _, h := range sd.hot {
		if h.keyed && keyed&h.bit == 0 {
			continue
		}
		if h.from != nil {
			if at := h.from(frag, lower); at >= 0 {
				fs = append(fs, detectFrom(h.d, frag, at)...)
			}
		} else if h.may(frag, lower) {
			fs = append(fs, h.d.DetectString(frag)...)
		}
	}
	return dropShadowedGeneric(fs)
}

// detectFrom is d.DetectString(frag) given that no match of d's rules
// begins before the line after frag[at] = '\n' (at > 0; at 0, nothing is
// cut): gitleaks is given frag from that '\n' on, said to begin on the
// line it is on. Its findings are the whole fragment's: a regexp with no
// assertion on what comes before (no ^, \A, \b) matches the same from each
// position of the rest, and from the '\n' on, gitleaks' line of a match
// (its StartLine, counted from the fragment's, and its text, which begins
// at the '\n' before it) and its column (counted from that '\n') are
// those it finds in the whole. The regexp scanned every byte before the
// first line where a match may begin twice (gitleaks runs it once to test,
// once to report): generic-api-key was ~0.14 CPU-s of the coding add
// (session 27). TestDetectFromIsWhole holds it to DetectString.
func detectFrom(d *detect.Detector, frag string, at int) []report.Finding {
	if at == 0 || d.MaxDecodeDepth > 0 { // decoding would read the whole
		return d.DetectString(frag)
	}
	return d.DetectContext(context.Background(), detect.Fragment{Raw: frag[at:], StartLine: strings.Count(frag[:at], "\n")})
}

// restFor returns a detector of the rest's rules that gitleaks would run
// on a fragment whose lower case (strings.ToLower) is l, nil when none,
// and the bits of the keyed hot rules whose keywords occur in l.
// Findings of rules that do not run are none, and each rule's findings do
// not depend on the other rules in its detector but through gitleaks' last
// filter, which dropShadowedGeneric applies again over the union; a rule
// needing others' findings (RequiredRules) gets the whole rest.
func (sd *splitDetector) restFor(l string) (_ *detect.Detector, hot uint64) {
	// One pass of litSet over l (session 20): it was the Aho-Corasick
	// trie's Walk, ~5 ns a byte (TestCorpus's gitleaks layer: 0.16 of
	// ~0.67 CPU-s); the same keywords are found (TestRestWordsAreTrie).
	var set []int
	var buf [256]bool
	found := buf[:0]
	if n := len(sd.restWords.lits); n <= len(buf) {
		found = buf[:n]
	} else {
		found = make([]bool, n)
	}
	sd.restWords.each(l, found, func(k int) bool {
		hot |= sd.patHot[k]
		for _, r := range sd.patRules[k] {
			if !slices.Contains(set, r) {
				set = append(set, r)
			}
		}
		return true
	})
	if len(set) == 0 {
		return nil, hot
	}
	slices.Sort(set)
	key := make([]byte, 0, 2*len(set))
	for _, r := range set {
		key = append(key, byte(r>>8), byte(r))
	}
	if d, ok := sd.chosen.Load(string(key)); ok {
		return d.(*detect.Detector), hot
	}
	if sd.nChosen.Load() >= maxChosen {
		return sd.rest, hot
	}
	sub := sd.restCfg
	sub.Rules = map[string]config.Rule{}
	sub.Keywords = map[string]struct{}{}
	sub.OrderedRules = nil
	for _, r := range set {
		id := sd.restIDs[r]
		rule := sd.restCfg.Rules[id]
		if len(rule.RequiredRules) > 0 {
			return sd.rest, hot
		}
		rule.Keywords = nil // chosen: it runs
		sub.Rules[id] = rule
		sub.OrderedRules = append(sub.OrderedRules, id)
	}
	d, loaded := sd.chosen.LoadOrStore(string(key), detect.NewDetector(sub))
	if !loaded {
		sd.nChosen.Add(1)
	}
	return d.(*detect.Detector), hot
}

// dropShadowedGeneric is gitleaks' own final filter (detect/utils.go
// filter): a generic rule's finding is dropped when another, specific
// rule's finding on the same line contains its secret. Each detector
// applied it within its rules; this applies it across them.
func dropShadowedGeneric(fs []report.Finding) []report.Finding {
	out := fs[:0:0]
	for _, f := range fs {
		keep := true
		if strings.Contains(strings.ToLower(f.RuleID), "generic") {
			for _, g := range fs {
				if f.StartLine == g.StartLine && f.Commit == g.Commit && f.RuleID != g.RuleID &&
					strings.Contains(g.Secret, f.Secret) && !strings.Contains(strings.ToLower(g.RuleID), "generic") {
					keep = false
					break
				}
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}

// foldsToASCII reports whether s holds a rune that Go's case-insensitive
// matching folds to an ASCII letter (U+212A KELVIN SIGN to k, U+017F LONG S
// to s): the byte arithmetic of the conditions below assumes there is none,
// so with one they say "may match".
func foldsToASCII(s string) bool {
	return strings.Contains(s, "\u212a") || strings.Contains(s, "\u017f")
}

// genericWords are generic-api-key's keyword alternatives, lower case.
var genericWords = []string{"access", "auth", "api", "credential", "creds", "key", "passwd", "password", "secret", "token"}

// mayGeneric is a necessary condition of generic-api-key's regexp (above):
// a keyword, at most 20+3 bytes of filler ([ \t\w.-] then [\s'"], so the
// operator is the first byte after the keyword outside [\w.\s'"-]), an
// operator (its first byte one of =>:|?,), at most 3+5 more bytes of the
// operator's rest and [\x60'"\s=] (all in [:=|>\x60'"\s]), then a value
// and the byte after it as genericValue says (before session 20: at least
// 10 bytes of [A-Za-z0-9_.=+/-], whatever followed).
// l is asciiLower(s).
//
// The filler and the bytes after the operator were not checked before
// (session 18): a keyword followed by any operator within 23 bytes passed,
// and the regexp ran on 2,104 of the coding corpus's ~97,000 fragments; on
// 735 now, for the same findings (TestMayGenericIsNecessary).
//
// One pass over l (session 19): at each byte that begins a keyword (or one
// of the two runes foldsToASCII looks for: l holds s's non-ASCII bytes
// where s does), the keywords beginning with it are compared. It was ten
// strings.Index passes, one per keyword, and two for foldsToASCII: 0.15 of
// ~8 CPU-s of `git mem add` of the coding corpus. The same answer as
// before for every text (TestMayGenericIsRef holds it to that code).
func mayGeneric(s, l string) bool { return genericFirst(l) >= 0 }

// genericFirst is where mayGeneric's pass stops with true: the first
// keyword that genericTail accepts, or the first rune of foldsToASCII,
// whichever comes first; -1 where mayGeneric is false.
func genericFirst(l string) int {
	// Every keyword and rune is at least two bytes long: a position whose
	// pair begins none is skipped (session 20: a table of first bytes
	// before, which most letters pass).
	for p := 0; p+1 < len(l); p++ {
		if !genericPairs.has(l[p], l[p+1]) {
			continue
		}
		for _, w := range genericAt[l[p]] {
			if !strings.HasPrefix(l[p:], w) {
				continue
			}
			if w[0] >= utf8.RuneSelf || genericTail(l, p+len(w)) {
				return p
			}
		}
	}
	return -1
}

// genericFrom is hotRule.from of generic-api-key: -1 where mayGeneric is
// false, else the '\n' before the line of genericFirst, or 0 (no cut)
// when that is the first line, when s holds a rune of foldsToASCII, or
// when a match may begin on a last line that no '\n' ends (gitleaks
// gives such a match the text from the fragment's start as its line,
// which "gitleaks:allow" and allowlists of lines read). A match takes a
// keyword that genericTail accepts (mayGeneric is necessary keyword by
// keyword), at genericFirst or after it, and begins at most 50 bytes of
// [\w.-] before it: on its line. l is asciiLower(s).
func genericFrom(s, l string) int {
	p := genericFirst(l)
	if p < 0 {
		return -1
	}
	if foldsToASCII(s) {
		return 0
	}
	c := strings.LastIndexByte(l[:p], '\n')
	if c <= 0 {
		return 0
	}
	if last := strings.LastIndexByte(l, '\n') + 1; last < len(l) && genericFirst(l[last:]) >= 0 {
		return 0
	}
	return c
}

// genericAt lists, by first byte, the keywords of generic-api-key
// (genericWords) and the runes of foldsToASCII, whose presence alone makes
// mayGeneric true; genericPairs holds their first two bytes.
var genericAt, genericPairs = byFirstByte(append([]string{"\u212a", "\u017f"}, genericWords...))

// genericTail reports whether what follows a keyword ending at e may be
// the rest of a generic-api-key match (mayGeneric, above).
func genericTail(l string, e int) bool { return namedTail(l, e, 23, genericValue) }

// mayNamed is a necessary condition of a gitleaks rule written as
// generic-api-key is (the same filler, operators and bytes after them, a
// value of at least 10 bytes of [\w.=+/-]) with its own name instead of
// the keywords: name (lower case, ASCII) followed by at most more bytes
// of filler before generic-api-key's 23, then what genericTail asks. A
// rune that (?i) folds to an ASCII letter makes it true, as in mayGeneric.
// TestNamedHotRulesAreNecessary checks it against each rule's regexp.
func mayNamed(name string, more int) func(s, l string) bool {
	return func(s, l string) bool {
		for from := 0; ; {
			i := strings.Index(l[from:], name)
			if i < 0 {
				return foldsToASCII(s)
			}
			if namedTail(l, from+i+len(name), 23+more, tenValue) {
				return true
			}
			from += i + 1
		}
	}
}

// namedTail is genericTail with at most filler bytes of filler and a
// value that value accepts at p.
func namedTail(l string, e, filler int, value func(l string, p int) bool) bool {
	for o := e; o < len(l) && o <= e+filler; o++ {
		if strings.IndexByte("=>:|?,", l[o]) < 0 {
			if !genericFiller(l[o]) {
				return false
			}
			continue
		}
		for p := o + 1; p < len(l) && p <= o+9; p++ {
			if value(l, p) {
				return true
			}
			if strings.IndexByte(":=|>`'\" \t\n\f\r", l[p]) < 0 {
				break
			}
		}
		// No operator byte is filler: the first one ends the
		// keyword's reach.
		return false
	}
	return false
}

// genericFiller reports whether c may stand between generic-api-key's
// keyword and its operator: [ \t\w.-] or [\s'"] (Go's \s: [\t\n\f\r ]).
func genericFiller(c byte) bool {
	return isDigit(c) || isUpper(c) || isLower(c) || strings.IndexByte("_.- \t\n\f\r'\"", c) >= 0
}

// mayVault is a necessary condition of vault-service-token's regexp: "s."
// followed by at least 24 bytes of [A-Za-z0-9_-] (both of its forms).
func mayVault(s string) bool {
	if foldsToASCII(s) {
		return true
	}
	for from := 0; ; {
		i := strings.Index(s[from:], "s.")
		if i < 0 {
			return false
		}
		p := from + i + 2
		n := 0
		for p+n < len(s) && n < 24 && (isDigit(s[p+n]) || isUpper(s[p+n]) || isLower(s[p+n]) || s[p+n] == '_' || s[p+n] == '-') {
			n++
		}
		if n >= 24 {
			return true
		}
		from = p - 1
	}
}

// mayHex is a necessary condition of a regexp that begins with the
// literal lit (case-sensitive) and n hex digits: lit followed by n bytes
// of [0-9a-fA-F].
func mayHex(lit string, n int) func(s, l string) bool {
	return func(s, _ string) bool {
		for from := 0; ; {
			i := strings.Index(s[from:], lit)
			if i < 0 {
				return false
			}
			p := from + i + len(lit)
			k := 0
			for k < n && p+k < len(s) && (isDigit(s[p+k]) || s[p+k] >= 'a' && s[p+k] <= 'f' || s[p+k] >= 'A' && s[p+k] <= 'F') {
				k++
			}
			if k == n {
				return true
			}
			from = from + i + 1
		}
	}
}

// tenValue: at least 10 bytes of [A-Za-z0-9_.=+/-] from l[p].
func tenValue(l string, p int) bool { return valueRun(l, p) >= 10 }

// genericValue reports whether generic-api-key's value and the byte after
// it may begin at l[p]: ([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})
// then one of [\x60'"\s;], a backslash and n or r, or the end. No value
// byte ends a value, so a value of the first form is the whole run of
// [\w.=-] from p (10 to 150 bytes, then the end), one of the second the
// whole run of [A-Za-z0-9+/] (12 bytes or more, the first alphanumeric),
// then up to 3 '=' (all of them: '=' ends nothing). Asking for the end
// too (session 20) took the fragments the regexp runs on from 736 to 412
// of the coding corpus's. l is in asciiLower's lower case and holds no
// folding rune (mayGeneric said yes before).
func genericValue(l string, p int) bool {
	q := p
	for q < len(l) && (isDigit(l[q]) || isLower(l[q]) || l[q] == '_' || l[q] == '.' || l[q] == '=' || l[q] == '-') {
		q++
	}
	if q-p >= 10 && q-p <= 150 && valueEnd(l, q) {
		return true
	}
	if p == len(l) || !isDigit(l[p]) && !isLower(l[p]) {
		return false
	}
	q = p
	for q < len(l) && (isDigit(l[q]) || isLower(l[q]) || l[q] == '+' || l[q] == '/') {
		q++
	}
	if q-p < 12 {
		return false
	}
	for k := 0; k < 3 && q < len(l) && l[q] == '='; k++ {
		q++
	}
	return valueEnd(l, q)
}

// valueEnd reports whether generic-api-key's last part,
// (?:[\x60'"\s;]|\\[nr]|$) under (?i), matches at l[q].
func valueEnd(l string, q int) bool {
	if q == len(l) {
		return true
	}
	switch l[q] {
	case '`', '\'', '"', ' ', '\t', '\n', '\f', '\r', ';':
		return true
	case '\\':
		return q+1 < len(l) && (l[q+1] == 'n' || l[q+1] == 'r')
	}
	return false
}

// valueRun counts the bytes of [A-Za-z0-9_.=+/-] from s[p], up to 10.
func valueRun(s string, p int) int {
	n := 0
	for p+n < len(s) && n < 10 {
		c := s[p+n]
		if !(isDigit(c) || isUpper(c) || isLower(c) || strings.IndexByte("_.=+/-", c) >= 0) {
			break
		}
		n++
	}
	return n
}

// keywordLower is a text in which restWords finds the same literals as in
// strings.ToLower(frag) (gitleaks looks for its keywords there), given
// lower, asciiLower(frag): lower itself unless frag holds a rune that
// strings.ToLower turns into ASCII (toASCIILower) or a keyword is not
// ASCII. strings.ToLower maps every other non-ASCII rune (and every
// invalid byte, to U+FFFD) to non-ASCII bytes, and ASCII bytes as
// asciiLower does, so both texts are the same runs of ASCII bytes between
// non-empty runs of non-ASCII bytes, and an ASCII literal lies within one
// run. It was strings.ToLower of every fragment holding a non-ASCII byte
// (~0.03 CPU-s of the coding add, session 27).
func (sd *splitDetector) keywordLower(frag, lower string) string {
	for i := 0; i < len(frag); i++ {
		if frag[i] >= utf8.RuneSelf {
			if sd.asciiWords && !containsAny(frag[i:], toASCIILower) {
				return lower
			}
			return strings.ToLower(frag)
		}
	}
	return lower
}

// toASCIILower are the runes above ASCII that strings.ToLower maps into
// ASCII (U+0130 to i, U+212A KELVIN SIGN to k): TestToASCIILowerIsAll
// finds them in Go's Unicode tables.
var toASCIILower = []string{"\u0130", "\u212a"}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
