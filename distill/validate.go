package distill

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/lazy"
)

// roomTypes are the room types a model may use.
var roomTypes = map[string]bool{"file": true, "concept": true, "project": true}

// validateAnswer parses a model's answer and checks it against the
// exchange. It returns the card, or the reason the answer cannot be stored.
// The card's files always come from FilesTouched, never from the model.
func validateAnswer(ex *exchange.Exchange, files []string, content string) (exchange.Card, string) {
	var a answer
	dec := json.NewDecoder(strings.NewReader(strings.TrimSpace(stripCodeFence(content))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return exchange.Card{}, "the answer is not the JSON object asked for (" + clip(err.Error(), 80) + ")"
	}
	core, ctx := cleanSpaces(a.ExchangeCore), cleanSpaces(a.SpecificContext)
	switch {
	case core == "":
		return exchange.Card{}, "exchange_core is empty"
	case ctx == "":
		return exchange.Card{}, "specific_context is empty"
	case utf8.RuneCountInString(core) > exchange.MaxCoreRunes:
		return exchange.Card{}, fmt.Sprintf("exchange_core is over %d characters", exchange.MaxCoreRunes)
	case utf8.RuneCountInString(ctx) > exchange.MaxContextRunes:
		return exchange.Card{}, fmt.Sprintf("specific_context is over %d characters", exchange.MaxContextRunes)
	case len(a.Rooms) < 1 || len(a.Rooms) > 3:
		return exchange.Card{}, fmt.Sprintf("there are %d rooms, not 1 to 3", len(a.Rooms))
	}
	var rooms []exchange.Room
	seen := map[string]bool{}
	for _, r := range a.Rooms {
		typ, key, ok := strings.Cut(strings.TrimSpace(r), ":")
		typ = strings.ToLower(strings.TrimSpace(typ))
		if !ok || !roomTypes[typ] {
			return exchange.Card{}, fmt.Sprintf("room %q is not file:, concept: or project:", r)
		}
		room, err := exchange.ParseRoom(typ + ":" + roomKey(key))
		if err != nil {
			return exchange.Card{}, fmt.Sprintf("room %q is not well formed", r)
		}
		if !seen[room.String()] {
			seen[room.String()] = true
			rooms = append(rooms, room)
		}
	}
	known := map[string]bool{}
	for _, f := range files {
		known[f] = true
		known[filepathBase(f)] = true
	}
	for _, f := range a.FilesTouched {
		f = strings.TrimPrefix(strings.TrimSpace(f), "./")
		if f != "" && !known[f] {
			return exchange.Card{}, fmt.Sprintf("file %q is not in the exchange", f)
		}
	}
	verbatim := ex.Render()
	for _, term := range checkedTerms(core + " " + ctx) {
		if !strings.Contains(verbatim, term) {
			return exchange.Card{}, fmt.Sprintf("%q does not occur in the exchange; copy values exactly", term)
		}
	}
	if want, got := language(ex.UserText()+" "+verbatimSample(verbatim)), language(core+" "+ctx); want != "" && got != "" && want != got {
		return exchange.Card{}, fmt.Sprintf("the card is in %s but the exchange is in %s", got, want)
	}
	return exchange.Card{Core: core, Context: ctx, Rooms: rooms, Files: files}, ""
}

func filepathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func verbatimSample(s string) string {
	if len(s) > 4000 {
		return strings.ToValidUTF8(s[:4000], "")
	}
	return s
}

// stripCodeFence unwraps ```json ... ``` that some models add despite the
// response format.
func stripCodeFence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") {
		return s
	}
	t = strings.TrimPrefix(t, "```")
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	}
	return strings.TrimSuffix(strings.TrimSpace(t), "```")
}

var (
	quotedRe = lazy.Regexp("`([^`]{2,120})`|\"([^\"]{2,120})\"|'([^'\\s][^']{0,118}[^'\\s])'")
	numberRe = lazy.Regexp(`\b\d+(?:[.:,]\d+)*\b`)
)

// checkedTerms lists what must be copied, not paraphrased: quoted strings,
// numbers and identifiers (camelCase, snake_case, dotted names, words with
// digits).
func checkedTerms(s string) []string {
	var out []string
	for _, m := range quotedRe().FindAllStringSubmatch(s, -1) {
		for _, g := range m[1:] {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	for _, n := range numberRe().FindAllString(s, -1) {
		out = append(out, strings.TrimRight(n, ".,:"))
	}
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, ".,;:!?()[]{}\"'`")
		if len(w) >= 3 && (isIdentifier(w) || hasDigit(w) && hasLetterRune(w)) {
			out = append(out, w)
		}
	}
	return out
}

// stop words of a few languages, for a cheap language check of Latin-script
// text.
var langStopWords = sync.OnceValue(func() map[string]map[string]bool {
	return map[string]map[string]bool{
		"English":    wordSet("the and is are was to of in that it for with this you not on be have"),
		"French":     wordSet("le la les des est et une un du que qui pour dans pas sur avec ce"),
		"Spanish":    wordSet("el la los las es y una un del que por para con no en se lo"),
		"German":     wordSet("der die das und ist nicht ein eine mit für auf den dem zu ich sie"),
		"Portuguese": wordSet("o a os as é e uma um do da que não para com em se"),
		"Italian":    wordSet("il lo la gli le è e una un del che non per con di sono"),
	}
})

// language guesses the language of s: the script for non-Latin text, the
// stop words for Latin text; "" when unsure.
func language(s string) string {
	counts := map[string]int{}
	letters := 0
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		switch {
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			counts["Chinese/Japanese"]++
		case unicode.Is(unicode.Hangul, r):
			counts["Korean"]++
		case unicode.Is(unicode.Cyrillic, r):
			counts["Cyrillic"]++
		case unicode.Is(unicode.Arabic, r):
			counts["Arabic"]++
		case unicode.Is(unicode.Greek, r):
			counts["Greek"]++
		case unicode.Is(unicode.Hebrew, r):
			counts["Hebrew"]++
		case unicode.Is(unicode.Devanagari, r):
			counts["Devanagari"]++
		case unicode.Is(unicode.Latin, r):
			counts["Latin"]++
		}
	}
	if letters < 20 {
		return ""
	}
	script, best := "", 0
	for k, n := range counts {
		if n > best || n == best && k < script {
			script, best = k, n
		}
	}
	// Code and identifiers are Latin in any language: a third of the letters
	// in another script is enough to call it that script.
	for k, n := range counts {
		if k != "Latin" && n*3 >= letters {
			return k
		}
	}
	if script != "Latin" {
		return script
	}
	hits := map[string]int{}
	total := 0
	for _, w := range strings.Fields(strings.ToLower(s)) {
		w = strings.Trim(w, ".,;:!?()\"'")
		for lang, set := range langStopWords() {
			if set[w] {
				hits[lang]++
				total++
			}
		}
	}
	lang, n := "", 0
	for l, c := range hits {
		if c > n || c == n && l < lang {
			lang, n = l, c
		}
	}
	if n < 3 || n*2 < total {
		return ""
	}
	return lang
}

// readCache returns the cached card of an exchange.
func (o *OpenAI) readCache(key string) (exchange.Card, bool) {
	if o.cfg.CacheDir == "" {
		return exchange.Card{}, false
	}
	data, err := os.ReadFile(filepath.Join(o.cfg.CacheDir, key+".json"))
	if err != nil {
		return exchange.Card{}, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.PromptVersion != PromptVersion || e.Model != o.cfg.Model || e.Core == "" {
		return exchange.Card{}, false // unreadable or stale: ask again
	}
	c := exchange.Card{Core: e.Core, Context: e.Context, Files: e.Files, Distiller: e.Distiller}
	for _, r := range e.Rooms {
		if room, err := exchange.ParseRoom(r); err == nil {
			c.Rooms = append(c.Rooms, room)
		}
	}
	return c, len(c.Rooms) > 0
}

// writeCache stores an entry atomically (temp file + rename), so a crash
// never leaves a half-written answer that a later run would trust.
func (o *OpenAI) writeCache(key string, e cacheEntry) error {
	if o.cfg.CacheDir == "" {
		return nil
	}
	if err := os.MkdirAll(o.cfg.CacheDir, 0o755); err != nil {
		return fmt.Errorf("create cache dir: %w", err)
	}
	data, err := json.MarshalIndent(e, "", " ")
	if err != nil {
		return fmt.Errorf("encode cache entry: %w", err)
	}
	tmp, err := os.CreateTemp(o.cfg.CacheDir, ".tmp-"+key[:8]+"-*")
	if err != nil {
		return fmt.Errorf("create cache file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write cache file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("close cache file: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(o.cfg.CacheDir, key+".json")); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("store cache file: %w", err)
	}
	return nil
}
