package embed

import (
	"slices"
	"strings"
	"sync"
)

// American maps a lower-case British spelling to the American one that code,
// libraries and most agents write ("colour" → "color", "initialise" →
// "initialize", "cancelled" → "canceled"), so a person who writes British
// English finds the exchange that says colorSystem or initialize(). Words it
// does not know come back unchanged. It runs before stemming, where the two
// spellings would stem apart ("initialis" against "initi").
func American(w string) string {
	if len(w) < 4 {
		return w
	}
	if a, ok := britishWords[w]; ok {
		return a
	}
	for _, r := range britishRules()[w[0]] {
		if !strings.HasPrefix(w, r.stem) {
			continue
		}
		if tail, ok := strings.CutPrefix(w[len(r.stem):], r.from); ok && slices.Contains(r.tails, tail) {
			return r.stem + r.to + tail
		}
	}
	return w
}

// ending is a British ending (from), its American form (to) and the
// inflections that may follow it.
type ending struct {
	from, to string
	tails    []string
}

type britishRule struct {
	stem string
	ending
}

var (
	ourTails = []string{"", "s", "ed", "ing", "ful", "less", "ite", "ites", "able", "ably", "ings", "hood", "hoods", "ly"}
	iseTails = []string{"e", "es", "ed", "ing", "er", "ers", "ation", "ations", "able"}
	yseTails = []string{"e", "es", "ed", "ing", "er", "ers"}
	llTails  = []string{"ed", "ing", "er", "ers"}
	treTails = []string{"", "s"}
)

// britishRules are stems whose British inflections differ from the
// American ones only in their ending (-our/-or, -ise/-ize, -yse/-yze,
// -lled/-led, -tre/-ter). The stems are listed: the endings alone also
// occur in words that are the same in both ("hour", "promise", "raise").
// They are grouped by first letter.
var britishRules = sync.OnceValue(func() map[byte][]britishRule {
	rs := map[byte][]britishRule{}
	add := func(e ending, stems ...string) {
		for _, s := range stems {
			rs[s[0]] = append(rs[s[0]], britishRule{stem: s, ending: e})
		}
	}
	add(ending{"our", "or", ourTails},
		"col", "behavi", "fav", "flav", "hon", "hum", "lab", "neighb", "rum", "harb", "arm",
		"vap", "od", "sav", "vig", "parl", "endeav", "splend", "clam", "rig", "tum")
	add(ending{"is", "iz", iseTails},
		"initial", "serial", "deserial", "optim", "organ", "recogn", "custom", "final",
		"minim", "maxim", "synchron", "author", "visual", "sanit", "token", "summar", "categor",
		"priorit", "util", "real", "emphas", "apolog", "special", "local", "memo", "memor",
		"parametr", "parameter", "standard", "character", "modern", "stabil", "capital", "central",
		"general", "global", "internal", "neutral", "personal", "rational", "critic", "symbol",
		"vector", "harmon", "econom", "ideal", "trivial", "polar", "monet", "virtual",
		"material", "legal", "normal", "random", "anonym", "fertil", "steril", "victim", "lexical",
		"canonical", "templat", "conceptual", "contextual",
		"hypothes", "jeopard", "item", "mobil", "modular", "patron", "penal", "plagiar",
		"popular", "public", "regular", "scrutin", "stigmat", "subsid", "theor", "vocal")
	add(ending{"ys", "yz", yseTails}, "anal", "paral", "catal", "dial")
	add(ending{"ll", "l", llTails},
		"cance", "labe", "mode", "trave", "signa", "fue", "leve", "tota", "marsha", "channe",
		"tunne", "counse", "dia", "equa", "funne", "peda", "quarre", "riva", "shove", "spira")
	add(ending{"tre", "ter", treTails}, "cen", "thea", "me", "li", "fib", "calib", "somb", "spec")
	return rs
})

// britishWords are the spellings no ending rule covers.
var britishWords = map[string]string{
	"grey": "gray", "greys": "grays", "catalogue": "catalog", "catalogues": "catalogs",
	"dialogue": "dialog", "dialogues": "dialogs", "programme": "program", "programmes": "programs",
	"artefact": "artifact", "artefacts": "artifacts", "judgement": "judgment", "judgements": "judgments",
	"licence": "license", "licences": "licenses", "defence": "defense", "offence": "offense",
	"cheque": "check", "cheques": "checks", "mould": "mold", "tyre": "tire", "tyres": "tires",
	"aluminium": "aluminum", "learnt": "learned", "spelt": "spelled", "whilst": "while",
	"analogue": "analog", "travellers": "travelers", "traveller": "traveler",
	"fulfil": "fulfill", "fulfils": "fulfills", "enrol": "enroll", "enrols": "enrolls",
	"manoeuvre": "maneuver", "plough": "plow", "sceptical": "skeptical", "ageing": "aging",
	"favourite": "favorite", "favourites": "favorites", "centred": "centered",
}
