package redact

import (
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gitmem/git-mem/exchange"
)

// span is a secret found at s[a:b].
type span struct {
	a, b int
	kind string
}

// minGlobal is the shortest value replaced wherever it occurs once known:
// shorter ones ("root" after mysql -p) are replaced only where a rule saw
// them, or ordinary words would go too.
const minGlobal = 8

// scan is one redaction of a group of strings (an exchange): the values
// known to be secrets so far, and what the rules need to know of the whole.
type scan struct {
	layers Layer
	known  map[string]string // value -> kind
	force  map[string]bool   // known values replaced everywhere however short
	aws    bool              // an AWS key id occurs somewhere in the group
}

func newScan(layers Layer) *scan {
	return &scan{layers: layers, known: map[string]string{}, force: map[string]bool{}}
}

// spans runs the rules of the scan's layers over s and notes every value
// found as known; lower is asciiLower(s).
func (sc *scan) spans(s, lower string) []span {
	if len(s) < 8 {
		return nil
	}
	var out []span
	rs := rules()
	pf := rulePrefilter()
	var found []bool // scanned for the first rule of the layers that has literals
	for i := range rs {
		r := &rs[i]
		if sc.layers&r.layer == 0 {
			continue
		}
		forced := r.kind == "aws-secret-key" && sc.aws
		if !forced && len(r.pre) > 0 && found == nil {
			found = pf.scan(s)
		}
		if !forced && (len(r.pre) > 0 && !pf.any(found, i) || (r.near != nil && !r.near(s))) {
			continue
		}
		out = append(out, r.spans(s, lower)...)
	}
	if sc.layers&LayerAssign != 0 {
		out = append(out, assignments(s, lower)...)
	}
	for _, sp := range out {
		sc.learn(s[sp.a:sp.b], sp.kind)
	}
	return out
}

func (sc *scan) learn(v, kind string) {
	if v == "" || strings.Contains(v, Marker) {
		return
	}
	sc.note(v, kind)
	// The random parts of a secret are secrets too when they come back on
	// their own: the token of "pcsk_<token>", "prod:acme|<token>" or a
	// Digest header's response="<token>".
	for _, p := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(" \t\n\"',;:|/?&=@#", r) }) {
		p = strings.TrimPrefix(p, providerPrefix.FindString(p))
		if p != v && len(p) >= 16 && looksRandom(p) {
			sc.note(p, kind)
		}
	}
}

// note records v's kind; the first rule to find a value names it. Rules
// run in a fixed order and gitleaks' findings are sorted, so the output is
// the same on every run: an exchange without an id is stored under the hash
// of its redacted form.
func (sc *scan) note(v, kind string) {
	if _, ok := sc.known[v]; !ok {
		sc.known[v] = kind
	}
}

// providerPrefix is the lower-case head of a provider token (sb_secret_,
// pscale_pw_, pcsk_, ghp_).
var providerPrefix = regexp.MustCompile(`^[a-z][a-z0-9]{1,9}_(?:[a-z0-9]{2,8}_)?`)

// replace writes s with the given spans and every occurrence of a known
// value (of minGlobal bytes or more) replaced. Overlaps keep the earliest,
// then the longest span.
func (sc *scan) replace(s string, sps []span) (string, int) {
	for v, kind := range sc.known {
		if len(v) < minGlobal && !sc.force[v] {
			continue
		}
		for from := 0; ; {
			i := strings.Index(s[from:], v)
			if i < 0 {
				break
			}
			i += from
			sps = append(sps, span{i, i + len(v), kind})
			from = i + len(v)
		}
	}
	if len(sps) == 0 {
		return s, 0
	}
	// Stable: of two equal spans the first rule's (rules run in a fixed
	// order) names the secret.
	sort.SliceStable(sps, func(i, j int) bool {
		if sps[i].a != sps[j].a {
			return sps[i].a < sps[j].a
		}
		return sps[i].b > sps[j].b
	})
	var b strings.Builder
	last, n := 0, 0
	for _, sp := range sps {
		if sp.a < last || strings.Contains(s[sp.a:sp.b], Marker) {
			continue
		}
		b.WriteString(s[last:sp.a])
		b.WriteString(mark(sp.kind))
		last = sp.b
		n++
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// spans finds the rule's secrets in s; lower is asciiLower(s).
func (r *rule) spans(s, lower string) []span {
	if !r.lines {
		return r.spansIn(s)
	}
	if r.hint != nil && !r.hint(lower) {
		return nil
	}
	var out []span
	off := 0
	for line := range strings.Lines(s) {
		if len(line) >= 8 && (len(r.pre) == 0 || containsAny(line, r.pre)) &&
			(r.hint == nil || r.hint(lower[off:off+len(line)])) {
			for _, sp := range r.spansIn(line) {
				out = append(out, span{sp.a + off, sp.b + off, sp.kind})
			}
		}
		off += len(line)
	}
	return out
}

func (r *rule) spansIn(s string) []span {
	if r.find != nil {
		return r.find(s)
	}
	locs := r.re.FindAllStringSubmatchIndex(s, -1)
	var out []span
	for _, loc := range locs {
		a, e := -1, -1
		if r.group >= 0 {
			a, e = loc[2*r.group], loc[2*r.group+1]
		} else {
			for g := 1; 2*g < len(loc); g++ {
				if loc[2*g] >= 0 {
					a, e = loc[2*g], loc[2*g+1]
					break
				}
			}
		}
		if a < 0 || a == e {
			continue
		}
		v := s[a:e]
		if strings.Contains(v, Marker) || (r.ok != nil && !r.ok(v)) {
			continue
		}
		out = append(out, span{a, e, r.kind})
	}
	return out
}

// String returns s with every secret replaced and the number of
// replacements.
func String(s string) (string, int) { return StringWith(s, All) }

// StringWith is String with only the given layers (for measurements).
func StringWith(s string, layers Layer) (string, int) {
	s, lower, cut := cutPrivateLower(s)
	sc := newScan(layers)
	sc.aws = layers&LayerShapes != 0 && hasAWSKeyID(s)
	sps := sc.spans(s, lower)
	if layers&LayerGitleaks != 0 {
		sc.gitleaks(s, lower)
	}
	s, n := sc.replace(s, sps)
	return s, n + cut
}

// Exchange redacts every string of ex in place: turn texts and names, tool
// inputs (any JSON, keys kept, values by the key's name too), extra fields,
// session, project and agent. <private>…</private> spans are cut first
// (an unterminated one to the end of its string). A value found anywhere is
// replaced everywhere. The id is left alone: it is the exchange's identity, and ids
// come from the tools, not from people. It returns the number of
// replacements.
func Exchange(ex *exchange.Exchange) int { return ExchangeWith(ex, All) }

// ExchangeWith is Exchange with only the given layers (for measurements).
func ExchangeWith(ex *exchange.Exchange, layers Layer) int {
	if ex == nil {
		return 0
	}
	// Every string of the exchange, by reference, so that two passes can
	// read then write them: the first learns the secrets, the second
	// replaces them everywhere. JSON strings are boxed meanwhile.
	w := &walker{}
	w.strs = append(w.strs, &ex.Session, &ex.Project, &ex.Agent)
	for i := range ex.Turns {
		t := &ex.Turns[i]
		w.strs = append(w.strs, &t.Text, &t.Name)
		t.Input = w.box("", t.Input)
		for _, k := range slices.Sorted(maps.Keys(t.Extra)) {
			t.Extra[k] = w.box(k, t.Extra[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(ex.Extra)) {
		ex.Extra[k] = w.box(k, ex.Extra[k])
	}

	// Private spans go first, so that no layer, no card and no index sees
	// them.
	// lowers[i] is asciiLower(*w.strs[i]), one copy that every rule
	// asking for the lower case reads (parts of it for lines and
	// fragments).
	n := 0
	lowers := make([]string, len(w.strs))
	for i, p := range w.strs {
		var k int
		*p, lowers[i], k = cutPrivateLower(*p)
		n += k
	}
	sc := newScan(layers)
	if layers&LayerShapes != 0 {
		for _, p := range w.strs {
			if hasAWSKeyID(*p) {
				sc.aws = true
				break
			}
		}
	}
	found := make([][]span, len(w.strs))
	// Values under a secret key ({"password": "..."}) are secrets whatever
	// their shape.
	if layers&LayerAssign != 0 {
		for i, key := range w.keys {
			v := *w.strs[i]
			if kind := secretName(key); kind != "" && acceptValue(kind, v) {
				sc.learn(v, kind)
				found[i] = append(found[i], span{0, len(v), kind})
			}
		}
	}
	for i, p := range w.strs {
		found[i] = append(found[i], sc.spans(*p, lowers[i])...)
	}
	if layers&LayerGitleaks != 0 {
		for i, p := range w.strs {
			sc.gitleaks(*p, lowers[i])
		}
	}
	for i, p := range w.strs {
		var k int
		*p, k = sc.replace(*p, found[i])
		n += k
	}
	for i := range ex.Turns {
		t := &ex.Turns[i]
		t.Input = unbox(t.Input)
		for k, v := range t.Extra {
			t.Extra[k] = unbox(v)
		}
	}
	for k, v := range ex.Extra {
		ex.Extra[k] = unbox(v)
	}
	return n
}

// walker gathers the strings of an exchange; keys[i] is the JSON object key
// strs[i] sits under ("" for the exchange's own fields).
type walker struct {
	strs []*string
	keys map[int]string
}

// boxed is a string leaf of a JSON value during redaction.
type boxed struct{ p *string }

// box replaces every string in a decoded JSON value by a boxed pointer
// that the walker holds.
func (w *walker) box(key string, v any) any {
	switch x := v.(type) {
	case string:
		p := &x
		if w.keys == nil {
			w.keys = map[int]string{}
		}
		w.keys[len(w.strs)] = key
		w.strs = append(w.strs, p)
		return boxed{p}
	case map[string]any:
		// In key order: the walk decides which kind a value found twice
		// gets, and the output must not depend on map order.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			x[k] = w.box(k, x[k])
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = w.box(key, e)
		}
		return x
	}
	return v
}

// unbox puts the (redacted) strings back.
func unbox(v any) any {
	switch x := v.(type) {
	case boxed:
		return *x.p
	case map[string]any:
		for k, e := range x {
			x[k] = unbox(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = unbox(e)
		}
		return x
	}
	return v
}
