package distill

import (
	"path"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/gitmem/git-mem/exchange"
)

// Length budgets in runes. Core and context together land near 40–60 BPE
// tokens on coding exchanges, the size the paper's cards have; the hard
// limits of a commit message are exchange.MaxCoreRunes/MaxContextRunes.
const (
	maxAsk     = 110
	maxDone    = 90
	maxContext = 110
)

func heuristicCard(ex *exchange.Exchange) exchange.Card {
	card := exchange.Card{Distiller: HeuristicName}
	if ex == nil {
		card.Core = "Empty exchange: nothing was recorded."
		card.Rooms = []exchange.Room{{Type: "concept", Key: "empty"}}
		return card
	}
	card.Files = FilesTouched(ex)
	if isConversation(ex) {
		chatCard(ex, &card)
	} else {
		codingCard(ex, &card)
	}
	card.Core = clip(cleanSpaces(card.Core), exchange.MaxCoreRunes)
	card.Context = clip(cleanSpaces(card.Context), exchange.MaxContextRunes)
	if card.Core == "" {
		card.Core = "Exchange with no readable text."
	}
	if len(card.Rooms) == 0 {
		card.Rooms = []exchange.Room{{Type: "concept", Key: "untitled"}}
	}
	return card
}

// isConversation spots chat between people (LoCoMo and the like): turns
// carry a speaker and there are no tool calls.
func isConversation(ex *exchange.Exchange) bool {
	speaker := false
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleTool {
			return false
		}
		if s, ok := t.Extra["speaker"].(string); ok && s != "" {
			speaker = true
		}
	}
	return speaker
}

func codingCard(ex *exchange.Exchange, card *exchange.Card) {
	user := stripInjected(ex.UserText())
	p := parsePrompt(user)
	ask := pairTicks(askText(p))
	done := pairTicks(doneText(ex))
	switch {
	case ask != "" && done != "":
		card.Core = ask + " — " + done
	case ask != "":
		card.Core = ask
	case done != "":
		card.Core = done
	default:
		card.Core = honestCore(ex)
	}
	card.Context = contextText(ex, p, card.Core)
	card.Rooms = codingRooms(ex, card.Files, p)
}

// askText is the user's request in their own words: the first sentence or
// two of their prose, or the first line of what they pasted when they wrote
// no prose of their own.
func askText(p prompt) string {
	var parts []string
	n := 0
	for _, line := range p.prose {
		for _, s := range splitSentences(line) {
			s = trimFiller(cleanMarkdown(s))
			if s == "" || isBoilerplate(s) {
				continue
			}
			parts = append(parts, s)
			n += len(s)
			if enough(n, parts) {
				break
			}
		}
		if enough(n, parts) {
			break
		}
	}
	ask := strings.Join(parts, " ")
	// A pasted error or warning is the request when the prose only points at
	// it ("we get this error:", "fix this").
	if len(p.fenced) > 0 && (ask == "" || wordCount(ask) <= 8 || strings.HasSuffix(ask, ":")) {
		first := p.fenced[0] // code: as written
		if ask == "" {
			return clip(first, maxAsk)
		} else {
			ask = strings.TrimRight(ask, ":") + ": " + first
		}
	} else if ask == "" && len(p.pasted) > 0 {
		if e := errorLine(strings.Join(p.pasted, "\n"), nil); e != "" {
			ask = e
		} else {
			ask = p.pasted[0]
		}
		return clip(ask, maxAsk) // pasted text keeps its case
	}
	return clip(upperFirst(ask), maxAsk)
}

// enough says the ask has its first sentence or two; a sentence ending in
// ":" announces a list, so its first item is taken too.
func enough(n int, parts []string) bool {
	if len(parts) == 0 {
		return false
	}
	if strings.HasSuffix(parts[len(parts)-1], ":") && len(parts) < 3 {
		return false
	}
	return n >= 60 || len(parts) >= 2
}

// isBoilerplate drops the template sentences some editors wrap around a
// pasted error.
func isBoilerplate(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "how can i resolve this") || strings.HasPrefix(l, "if you propose a fix") ||
		l == "@agent continue: \"continue to iterate?\"" || strings.HasPrefix(l, "continue to iterate")
}

// planPrefixes open sentences that announce work rather than report it.
var planPrefixes = []string{"let me ", "now let me ", "i'll ", "i will ", "let's ", "now i'll ",
	"next, ", "first, ", "i need to ", "now i need ", "i'm going to ", "i am going to ", "i can see",
	"looking at ", "now let's ", "i see ", "i found ", "here's ", "here is ", "the user ", "based on ",
	"you're right", "you are right", "now i can see", "now i see", "i can now see", "i can see", "good question", "great question", "great catch", "good catch"}

// isPlan reports a sentence that announces work ("Let me check…").
func isPlan(s string) bool {
	l := strings.ToLower(s)
	for _, p := range planPrefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// outcomeWords mark a sentence that reports what was done.
var outcomeWords = []string{"fixed", "added", "updated", "created", "removed", "implemented",
	"refactored", "renamed", "moved", "changed", "resolved", "replaced", "now ", "successfully",
	"extracted", "deleted", "converted", "merged", "pushed", "committed", "installed", "configured",
	"passes", "passing", "works", "simplified", "introduced", "migrated", "documented", "wrote"}

// doneText reports what the agent did: its closing summary sentence, plus
// the files it edited.
func doneText(ex *exchange.Exchange) string {
	// The last reply usually reports the outcome; when it only announces
	// more work, an earlier reply that reports one is better.
	summary, bestScore, seen := "", 0, 0
	for i := len(ex.Turns) - 1; i >= 0 && seen < 4; i-- {
		t := ex.Turns[i]
		if t.Role != exchange.RoleAssistant || strings.TrimSpace(t.Text) == "" {
			continue
		}
		if th, _ := t.Extra["thinking"].(bool); th {
			continue
		}
		seen++
		// Only a sentence scoring above bestScore+seen-1 can win here.
		s, score := summarySentence(t.Text, bestScore+seen-1)
		score -= seen - 1
		if score > bestScore {
			summary, bestScore = s, score
		}
		if bestScore >= 6 {
			break
		}
	}
	edited := editedFiles(ex)
	if len(edited) > 0 {
		names := make([]string, 0, 2)
		seen := map[string]bool{}
		for _, f := range edited {
			b := path.Base(f)
			if !seen[b] && len(names) < 2 {
				seen[b] = true
				names = append(names, b)
			}
		}
		list := strings.Join(names, ", ")
		if extra := len(edited) - len(names); extra > 0 {
			list += " (+" + itoa(extra) + ")"
		}
		if summary == "" {
			return "Edited " + list + "."
		}
		return clip(summary, max(maxDone-len(list)-10, 40)) + " (edited " + list + ")"
	}
	return clip(summary, maxDone)
}

// maxSummaryScore is the most a reply's first sentence can score in
// summarySentence.
const maxSummaryScore = 9

// summarySentence picks the sentence of a reply that says what was done.
// Sentences are scored: reporting an outcome in the agent's own voice
// ("I've fixed…", "Added…", "X is now…") scores high; list items, headings,
// templates and announcements of work score low; earlier sentences win ties.
// Only a sentence scoring above floor (≥ 0) is picked; ("", floor) means
// none did. The first sentence with the highest score wins, as if every
// sentence were scored, but the scan stops once no later sentence can
// score higher: sentence i scores at most maxSummaryScore - i/8.
func summarySentence(text string, floor int) (string, int) {
	best, bestScore := "", floor
	if bestScore >= maxSummaryScore {
		return best, bestScore
	}
	i := -1
	for u := range units(text, 40) {
		if i++; bestScore >= maxSummaryScore-i/8 {
			break // neither this sentence nor a later one can score higher
		}
		s := trimFiller(u.text)
		l := strings.ToLower(s)
		if wordCount(s) < 4 || strings.HasSuffix(s, ":") && wordCount(s) < 8 || isPlan(s) ||
			strings.Contains(s, "YYYY") || strings.Contains(l, "lorem ipsum") {
			continue
		}
		score := 3 // + 3 for an outcome word + 3 for an opening: maxSummaryScore
		for _, w := range outcomeWords {
			if strings.Contains(l, w) {
				score += 3
				break
			}
		}
		for _, p := range []string{"i've ", "i have ", "i fixed", "i added", "i updated", "i created",
			"i removed", "i changed", "i implemented", "i refactored", "i moved", "i renamed", "the build ",
			"all tests", "fixed ", "added ", "updated ", "created ", "removed ", "implemented "} {
			if strings.HasPrefix(l, p) {
				score += 3
				break
			}
		}
		if u.bullet {
			score -= 2
		}
		if u.heading {
			score -= 3
		}
		if strings.Contains(s, ": ") && strings.Index(s, ": ") < 30 {
			score-- // "Label: detail" lines are list material
		}
		if strings.Contains(s, " --") || strings.Contains(s, " # ") || strings.Contains(s, "'#") {
			score -= 3 // a command line, not a sentence
		}
		if shouting(s) >= 2 {
			score -= 3 // rule files and banners quoted in the reply
		}
		if f := firstWord(l); f != "" && imperatives()[f] {
			score -= 2 // instructions to the user, not an outcome
		}
		score -= i / 8
		if score > bestScore {
			best, bestScore = upperFirst(strings.TrimRight(s, ":")), score
		}
	}
	return best, bestScore
}

var imperatives = sync.OnceValue(func() map[string]bool {
	return wordSet(`use run try make add create open check install set go see click navigate
ensure follow copy paste replace restart please consider verify start stop`)
})

// shouting counts all-caps words of four letters or more.
//
// Without a string per word (session 27: strings.Fields' slice, Trim's
// set of its cutset and ToUpper's copy of each word were a quarter of
// summarySentence in the coding add): the same words (FieldsSeq), the
// same trim (shoutTrim holds Trim's cutset, all ASCII), upperCased for
// strings.ToUpper(w) == w, the cheap tests first (they have no effects).
// TestShoutingIsBefore holds it to the former code.
func shouting(s string) int {
	n := 0
	for w := range strings.FieldsSeq(s) {
		for len(w) > 0 && shoutTrim[w[0]] {
			w = w[1:]
		}
		for len(w) > 0 && shoutTrim[w[len(w)-1]] {
			w = w[:len(w)-1]
		}
		if len(w) >= 4 && hasLetter(w) && !hasDigit(w) && !strings.ContainsAny(w, "_.") && upperCased(w) {
			n++
		}
	}
	return n
}

// shoutTrim is the set of the bytes shouting trims off a word's ends.
var shoutTrim = func() (t [256]bool) {
	for _, c := range []byte(".,;:!?()*\"'") {
		t[c] = true
	}
	return t
}()

// upperCased reports whether strings.ToUpper(s) == s, without the copy:
// whether every rune of s is its own unicode.ToUpper and no byte is
// invalid UTF-8 (ToUpper writes U+FFFD for it; a U+FFFD in s stays).
func upperCased(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unicode.ToUpper(r) != r {
			return false
		}
		i += size
	}
	return true
}

// contextText picks the most specific detail, copied verbatim: an error
// line (the prompt first, then tool output, then the replies), else the most
// specific sentence, else a command.
func contextText(ex *exchange.Exchange, p prompt, core string) string {
	lcore := strings.ToLower(core)
	inCore := func(s string) bool {
		s = strings.ToLower(strings.TrimRight(s, "…"))
		if len(s) > 40 {
			s = s[:40]
		}
		return strings.Contains(lcore, s)
	}
	skip := inCore
	if e := errorLine(strings.Join(p.pasted, "\n"), skip); e != "" {
		return e
	}
	if e := errorLine(strings.Join(p.prose, "\n"), skip); e != "" && wordCount(e) <= 30 {
		return e
	}
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleTool && t.Text != "" {
			if e := errorLine(t.Text, skip); e != "" {
				return e
			}
		}
	}
	best, bestScore := "", 2
	consider := func(text string, bonus int) {
		for _, s := range sentences(text, 30) {
			s = trimFiller(s)
			if len(s) < 12 || inCore(s) || isPlan(s) {
				continue
			}
			sc := specificity(s) + bonus
			if len(s) > 2*maxContext {
				sc -= 2
			}
			if sc > bestScore {
				best, bestScore = s, sc
			}
		}
	}
	consider(strings.Join(p.prose, "\n"), 1)
	for i := len(ex.Turns) - 1; i >= 0; i-- {
		if ex.Turns[i].Role == exchange.RoleAssistant {
			consider(ex.Turns[i].Text, 0)
			break
		}
	}
	if best != "" {
		return clip(best, maxContext)
	}
	if c := firstCommand(ex.Turns); c != "" {
		return c
	}
	// A salient sentence from the first reply that is not already the core.
	for _, t := range ex.Turns {
		if t.Role != exchange.RoleAssistant {
			continue
		}
		for _, s := range sentences(t.Text, 10) {
			s = trimFiller(s)
			if wordCount(s) >= 5 && !inCore(s) && !isPlan(s) {
				return clip(s, maxContext)
			}
		}
	}
	return ""
}

// honestCore describes an exchange with no prose: what kind of turns it has.
func honestCore(ex *exchange.Exchange) string {
	var tools []string
	seen := map[string]bool{}
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleTool && t.Name != "" && !seen[t.Name] {
			seen[t.Name] = true
			tools = append(tools, t.Name)
		}
	}
	if len(tools) > 0 {
		return "No prose in this exchange; tool calls: " + strings.Join(tools, ", ") + "."
	}
	return "Exchange with no readable text."
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
