package distill

import (
	"path"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/gitmem/git-mem/exchange"
)

// roomKey normalises a term so the same topic lands in the same room across
// exchanges and spellings: AuthMiddleware, auth-middleware and
// auth_middleware all give "auth_middleware".
func roomKey(s string) string {
	var b strings.Builder
	rs := []rune(s)
	// Split camel case only in real compound identifiers (two humps or
	// more): AppDataBatchManager -> app_data_batch_manager, while brand
	// names keep one word whatever their case (GitHub, github -> github).
	humps := 0
	for i := 1; i < len(rs); i++ {
		if unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i-1]) {
			humps++
		}
	}
	for i, r := range rs {
		if humps >= 2 && i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) ||
			i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])) {
			b.WriteByte('_')
		}
		switch r {
		case '-', '.', '/', ' ':
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	return exchange.NormalizeRoomKey(b.String())
}

// genericBases are file names that say little alone: the room takes the
// nearest meaningful directory in front (chat/route.ts -> chat_route).
var genericBases = map[string]bool{"index": true, "route": true, "page": true, "layout": true,
	"main": true, "mod": true, "lib": true, "utils": true, "util": true, "types": true, "init": true,
	"__init__": true, "app": true, "server": true, "client": true, "config": true, "settings": true,
	"test": true, "tests": true, "spec": true, "styles": true, "style": true, "globals": true,
	"default": true, "handler": true, "handlers": true, "helpers": true, "common": true,
	"constants": true, "models": true, "schema": true, "setup": true, "api": true, "middleware": true,
	"loading": true, "error": true, "not-found": true, "program": true, "startup": true}

var genericDirs = map[string]bool{"src": true, "app": true, "lib": true, "pages": true,
	"components": true, "api": true, "internal": true, "pkg": true, "cmd": true, "test": true,
	"tests": true, "source": true, "public": true, ".": true, "": true, "scripts": true}

// fileRoomKey is the key of a file room: the base name without extension.
func fileRoomKey(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	base := path.Base(p)
	if i := strings.IndexByte(base[1:], '.'); i >= 0 {
		base = base[:i+1]
	}
	key := roomKey(base)
	if genericBases[strings.ToLower(base)] {
		dir := path.Dir(p)
		for dir != "." && dir != "/" && dir != "" {
			d := path.Base(dir)
			if !genericDirs[strings.ToLower(d)] && !strings.ContainsAny(d, "[(") {
				if k := roomKey(d + "_" + base); k != "" {
					return k
				}
			}
			dir = path.Dir(dir)
		}
	}
	return key
}

func makeRoom(typ, key string) (exchange.Room, bool) {
	r, err := exchange.ParseRoom(typ + ":" + key)
	return r, err == nil
}

// codingRooms: the project, the main file, and the most salient concept.
func codingRooms(ex *exchange.Exchange, files []string, p prompt) []exchange.Room {
	var rooms []exchange.Room
	taken := map[string]bool{}
	add := func(typ, key string) {
		if r, ok := makeRoom(typ, key); ok && !taken[r.Key] && (typ == "project" || !idLike(r.Key)) {
			taken[r.Key] = true
			rooms = append(rooms, r)
		}
	}
	if ex.Project != "" {
		add("project", roomKey(ex.Project))
	}
	// The main file: the first one edited, else the first one named; a
	// key of one letter says nothing.
	for _, f := range append(editedFiles(ex), files...) {
		if k := fileRoomKey(f); len(k) >= 2 {
			add("file", k)
			break
		}
	}
	// The concept: one topic of a fixed list (topics), scored by its words
	// in the prompt (×3), the replies and the tools' queries. An open
	// vocabulary gave a room per exchange (1,823 rooms for 3,099 coding
	// exchanges, 1,071 used once, user ids and hashes among them); a
	// palace is useful only when its rooms repeat.
	score := map[string]float64{}
	topics := topicOf()
	count := func(s string, w float64) {
		for word := range topicWords(strings.ToLower(s)) {
			if t, ok := topics[trimDotsDashes(word)]; ok {
				score[t] += w
			}
		}
	}
	count(strings.Join(p.prose, "\n"), 3)
	n := 0
	for _, t := range ex.Turns {
		switch t.Role {
		case exchange.RoleAssistant:
			if n < 4000 {
				txt := t.Text
				if len(txt) > 2000 {
					txt = txt[:2000]
				}
				count(txt, 1)
				n += len(txt)
			}
		case exchange.RoleTool:
			if m, ok := t.Input.(map[string]any); ok {
				if q, ok := m["query"].(string); ok {
					count(q, 2)
				}
			}
		}
	}
	best, bestScore := "", 3.0 // a topic needs more than one passing word
	for _, t := range topicNames() {
		if score[t] > bestScore {
			best, bestScore = t, score[t]
		}
	}
	if best != "" {
		add("concept", best)
	}
	return rooms
}

// topics are the concept rooms of coding exchanges and the words that
// call them. The list is what the coding corpus is about (its README:
// build errors and tests, refactoring, CI, deployment, databases, the dev
// environment, git, design) and what any developer's memory holds.
var topics = []struct {
	name  string
	words string
}{
	{"testing", "testing unittest pytest jest vitest assertion assert mock mocks fixture fixtures coverage"},
	{"e2e", "e2e playwright cypress selenium puppeteer headless"},
	{"build", "build builds compile compiler compilation msbuild tsc webpack vite bundle bundler csproj sln linker"},
	{"ci", "ci workflow workflows actions pipeline pipelines github-actions yaml runner"},
	{"deployment", "deploy deployed deployment deployments railway vercel heroku netlify production staging hosting"},
	{"database", "database db sql postgres postgresql supabase prisma sqlite mysql query queries table tables schema rls"},
	{"migration", "migration migrations migrate"},
	{"git", "git rebase squash cherry-pick stash gitignore"},
	{"auth", "auth authentication login logout signin signup oauth password jwt"},
	{"ui", "ui ux css tailwind styling layout button modal"},
	{"api", "api endpoint endpoints route routes rest graphql http"},
	{"dependencies", "dependency dependencies package packages npm pnpm yarn nuget pip install upgrade version versions"},
	{"config", "config configuration env environment settings variable variables dotenv"},
	{"docker", "docker container containers dockerfile compose image kubernetes"},
	{"refactoring", "refactor refactoring rename cleanup extract duplicate duplication simplify"},
	{"lint", "lint linter eslint warning warnings analyzer analyzers ca1822 stylecop format formatting prettier"},
	{"performance", "performance slow fast speed latency memory cache caching optimize optimise"},
	{"docs", "documentation readme changelog"},
	{"types", "type types typescript typing generic generics interface interfaces nullable"},
	{"errors", "exception exceptions crash crashes stack traceback panic"},
	{"security", "secret secrets key keys leak credential credentials redact vulnerability"},
	{"ai", "llm openai langchain langsmith embedding embeddings gpt"},
	{"cli", "cli shell bash zsh powershell flag flags argv"},
	{"planning", "planning architecture roadmap requirements"},
	{"data", "json csv parse parsing parser serialize serialization data"},
	{"graphics", "canvas draw drawing sketch p5 shader color colors animation svg"},
	{"async", "async await promise promises thread threads concurrency concurrent race"},
	{"logging", "logging logger tracing"},
}

// topicTables: the topic names in list order (ties go to the earlier topic), and the topic
// of each word.
var topicTables = sync.OnceValues(func() ([]string, map[string]string) {
	var names []string
	of := map[string]string{}
	for _, t := range topics {
		names = append(names, t.name)
		for _, w := range strings.Fields(t.words) {
			if _, dup := of[w]; !dup {
				of[w] = t.name
			}
		}
	}
	return names, of
})

// topicNames and topicOf read topicTables, built on first use rather than
// at every command's start-up (0.3 ms of `git mem version`).
func topicNames() []string       { n, _ := topicTables(); return n }
func topicOf() map[string]string { _, o := topicTables(); return o }

// topicWords is strings.FieldsFuncSeq(s, f) with f(r) = !unicode.IsLetter(r)
// && !unicode.IsDigit(r) && r != '-' && r != '.', codingRooms' words, with
// f of an ASCII byte from a table (session 27: a call of f at every byte
// was a third of codingRooms in the coding add): the same fields, as
// FieldsFuncSeq cuts them (an invalid byte is U+FFFD, which f keeps out).
// TestTopicWordsIsFieldsFunc holds it to FieldsFuncSeq.
func topicWords(s string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		for i := 0; i < len(s); {
			size := 1
			var sep bool
			if c := s[i]; c < utf8.RuneSelf {
				sep = !topicByte[c]
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				sep = !unicode.IsLetter(r) && !unicode.IsDigit(r)
			}
			if sep {
				if start >= 0 {
					if !yield(s[start:i]) {
						return
					}
					start = -1
				}
			} else if start < 0 {
				start = i
			}
			i += size
		}
		if start >= 0 {
			yield(s[start:])
		}
	}
}

// topicByte[c]: the ASCII byte c is in a word of topicWords (a letter, a
// digit, '-' or '.', as unicode.IsLetter and IsDigit say of ASCII).
var topicByte = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.'
	}
	return t
}()

// trimDotsDashes is strings.Trim(w, ".-").
func trimDotsDashes(w string) string {
	for len(w) > 0 && (w[0] == '.' || w[0] == '-') {
		w = w[1:]
	}
	for len(w) > 0 && (w[len(w)-1] == '.' || w[len(w)-1] == '-') {
		w = w[:len(w)-1]
	}
	return w
}

// chatCard is the card of a conversation between people: the user turn as
// the core and the most informative sentence of the reply as the context,
// with speakers named, so names, numbers, dates and nouns survive.
func chatCard(ex *exchange.Exchange, card *exchange.Card) {
	var user, reply []exchange.Turn
	for _, t := range ex.Turns {
		switch t.Role {
		case exchange.RoleUser:
			user = append(user, t)
		case exchange.RoleAssistant:
			reply = append(reply, t)
		}
	}
	var core []string
	for _, t := range user {
		if s := cleanSpaces(t.Text); s != "" {
			core = append(core, speakerOf(t)+s)
		}
	}
	card.Core = strings.Join(core, " ")
	// The speakers' names are in every exchange of a conversation: they
	// neither make a sentence informative nor name a room.
	speakers := map[string]bool{}
	for _, t := range ex.Turns {
		if sp, ok := t.Extra["speaker"].(string); ok {
			for _, w := range strings.Fields(sp) {
				speakers[strings.ToLower(w)] = true
				speakers[roomKey(w)] = true
			}
		}
	}
	best, bestScore := "", -1
	for _, t := range reply {
		for _, s := range splitSentences(cleanSpaces(t.Text)) {
			if sc := infoScore(s, speakers); sc > bestScore {
				best, bestScore = speakerOf(t)+s, sc
			}
		}
	}
	card.Context = clip(best, maxContext)
	tc := newTermCounter(speakers)
	for _, t := range ex.Turns {
		tc.text(t.Text, 1)
	}
	for _, k := range tc.best(2, 1) {
		if r, ok := makeRoom("concept", k); ok {
			card.Rooms = append(card.Rooms, r)
		}
	}
	if ex.Project != "" {
		if r, ok := makeRoom("project", roomKey(ex.Project)); ok {
			card.Rooms = append([]exchange.Room{r}, card.Rooms...)
		}
	}
	if len(card.Rooms) > 3 {
		card.Rooms = card.Rooms[:3]
	}
}

func speakerOf(t exchange.Turn) string {
	if s, ok := t.Extra["speaker"].(string); ok && s != "" {
		return s + ": "
	}
	return ""
}

// infoScore favours sentences with names, numbers and long words; a bare
// question or an interjection says little.
func infoScore(s string, skip map[string]bool) int {
	score := 0
	words := strings.Fields(s)
	for i, w := range words {
		w = strings.Trim(w, ".,;:!?()\"'")
		if w == "" || skip[strings.ToLower(w)] {
			continue
		}
		r := []rune(w)
		switch {
		case hasDigit(w):
			score += 3
		case i > 0 && unicode.IsUpper(r[0]) && !stopWords()[strings.ToLower(w)]:
			score += 3
		case len(r) >= 6 && !stopWords()[strings.ToLower(w)]:
			score++
		}
	}
	if strings.HasSuffix(s, "?") {
		score /= 2
	}
	if len(words) < 4 {
		score -= 2
	}
	return score
}

// termCounter scores candidate concept terms: identifiers and repeated
// content words and word pairs, weighted by where they occur.
type termCounter struct {
	score map[string]float64
	count map[string]int
	ident map[string]bool
	skip  map[string]bool
	keys  map[string]string // word -> room key, memoised
}

func newTermCounter(skip map[string]bool) *termCounter {
	return &termCounter{score: map[string]float64{}, count: map[string]int{}, ident: map[string]bool{}, skip: skip, keys: map[string]string{}}
}

func (tc *termCounter) bump(k string, w float64) {
	tc.score[k] += w
	tc.count[k]++
}

// text adds the words of s with weight w.
func (tc *termCounter) text(s string, w float64) {
	prev := ""
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		word := strings.Trim(s[start:end], "._-")
		start = -1
		if len(word) < 3 || len(word) > 40 {
			prev = ""
			return
		}
		lw := word
		if hasUpperASCII(word) {
			lw = strings.ToLower(word)
		}
		if dot := strings.LastIndexByte(lw, '.'); dot > 0 && knownExt[lw[dot+1:]] {
			prev = "" // a file name: it has its own room type
			return
		}
		if strings.Contains(lw, ".") {
			for _, seg := range strings.Split(lw, ".") {
				if len(seg) < 2 {
					prev = "" // e.g, i.e, v1.2
					return
				}
			}
		}
		if strings.HasSuffix(lw, "ly") && len(lw) > 5 && !isIdentifier(word) && lw != "assembly" {
			prev = "" // adverbs: manually, correctly
			return
		}
		if len(word) < 3 || len(word) > 40 || stopWords()[lw] || genericWords()[lw] || !hasLetterRune(word) ||
			hasDigit(word) && !isIdentifier(word) {
			prev = ""
			return
		}
		k, ok := tc.keys[word]
		if !ok {
			k = roomKey(word)
			tc.keys[word] = k
		}
		if k == "" || tc.skip[k] {
			prev = ""
			return
		}
		weight := w
		if isIdentifier(word) || hasInnerUpper(word) {
			weight *= 2
			tc.ident[k] = true
		}
		if len(word) < 4 && !isIdentifier(word) && strings.ToUpper(word) != word {
			weight *= 0.5
		}
		tc.bump(k, weight)
		if prev != "" && !strings.Contains(k, "_") && !strings.Contains(prev, "_") {
			tc.bump(prev+"_"+k, weight*0.9)
		}
		prev = k
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		isWord := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
			(c == '-' || c == '.') && start >= 0 && i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '\n'
		if c >= 0x80 {
			isWord = false
		}
		if isWord {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
		if c != ' ' {
			prev = "" // pairs do not cross punctuation
		}
	}
	flush(len(s))
}

// best returns up to n keys seen at least minCount times, highest score
// first, ties broken by key so the result is deterministic. A pair wins over
// its words when it occurs as often.
func (tc *termCounter) best(n, minCount int) []string {
	type kv struct {
		k string
		s float64
	}
	var all []kv
	for k, s := range tc.score {
		if tc.count[k] < minCount {
			continue
		}
		if strings.Contains(k, "_") && !strings.Contains(k, "__") {
			s *= 1.2
		}
		all = append(all, kv{k, s})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].s != all[j].s {
			return all[i].s > all[j].s
		}
		return all[i].k < all[j].k
	})
	var out []string
	for _, e := range all {
		if len(out) == n {
			break
		}
		if !strings.Contains(e.k, "_") && tc.count[e.k] < 3 && !tc.ident[e.k] && minCount > 1 {
			continue // a plain word must recur to name a room
		}
		dup := false
		for _, o := range out {
			if strings.Contains(o, e.k) || strings.Contains(e.k, o) {
				dup = true
			}
		}
		if !dup {
			out = append(out, e.k)
		}
	}
	return out
}

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func hasUpperASCII(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' {
			return true
		}
	}
	return false
}

func hasInnerUpper(w string) bool {
	for i := 1; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' {
			return true
		}
	}
	return false
}

// stopWords are English function words.
var stopWords = sync.OnceValue(func() map[string]bool {
	return wordSet(`a about above after again against all also am an and any are aren't as at be
because been before being below between both but by can can't cannot could couldn't did didn't do does
doesn't doing don't down during each few for from further had hadn't has hasn't have haven't having he
her here hers herself him himself his how i if in into is isn't it it's its itself just let's me more
most mustn't my myself no nor not now of off on once only or other ought our ours ourselves out over own
same shan't she should shouldn't so some such than that that's the their theirs them themselves then
there there's these they this those through to too under until up very was wasn't we were weren't what
when where which while who whom why will with won't would wouldn't you your yours yourself yourselves
im ive dont cant wont didnt doesnt isnt thats lets youre theyre yes yeah ok okay hey hi hello thanks
thank please really actually maybe still even much many well back get got go going gone one two three
like just also way lot lots thing things something anything everything nothing someone anyone everyone
into onto upon via per etc able around across along already always another because become becomes
every however instead later least less let made make makes making might must never new next often
quite rather said say says see seem seems since sure take takes tell than though thus together toward
us use used uses using want wants was went whether within without yet you'd you'll you've i'd i'll i'm
we'll we're we've oh wow haha yep nope gonna wanna kinda sorta hmm`)
})

// genericWords are too common in coding chats to name a room.
var genericWords = sync.OnceValue(func() map[string]bool {
	return wordSet(`file files code function functions method methods class classes error errors
issue issues test tests testing fix fixed fixes fixing update updated updates updating change changes
changed need needs needed check checking checked run running runs ran add added adding work working works
worked help value values data type types name names project projects app application implementation
implement implemented create created creating build building builds command commands output input
result results example examples current following approach problem problems solution step steps look
looking done good great perfect right correct correctly properly line lines true false null return const
var string number int void public private static async await import export default first last time
times part section case cases based version new old now then here there help system user users
message messages text content question answer response request way start started end ended
place places point set sets get gets put show shows shown display open close call calls called handle
handles handled support supports supported current currently existing exist exists still better best
simple simply clean cleanup specific specifically proper properly instead approach approaches option
options details detail info information note notes summary successfully success failed fail fails
failing error's issue's let's lets i'll we'll it'll that'll you'll there's here's what's agent try
again continue continued please thanks ok okay yes good nice great awesome perfect excellent
edit edited edits editing read reading reads write writing writes wrote written remove removed delete
deleted move moved rename renamed replace replaced replacing keep kept make sure ensure ensured
now also actually really basically everything something anything nothing all any each every some
following follows above below within without before after during while since until across
logic feature features functionality behavior behaviour level levels usage used uses using use
same different similar other others another both either neither one two three four five first second
third many much more most less least few several various multiple single whole entire full all
todo todos task tasks item items list lists plan plans next previous latest recent recently
improve improved improvement improvements enhance enhanced update updated add let see look found
find finds finding search searched looks seems seem appear appears think thought know knew understand
mean means meant want wanted like liked would could should might must shall will can may
correct incorrect wrong right true false yes no not none null undefined nil empty missing
unknown invalid valid expecting expected expect expects anonymous standard domain pattern patterns available unavailable possible impossible needed required optional
important critical major minor small large big huge tiny quick quickly slow slowly fast easy hard
able unable make made makes making take takes taking took give gives giving gave keep keeps
way ways thing things stuff lot bit kind sort type types form forms part parts piece pieces
go going goes gone went come comes coming came put puts putting say says said tell tells told
ask asks asked answer answers answered explain explains explained describe describes described
review reviewed verify verified confirm confirmed validate validated test tested tests
cursor copilot claude assistant model tool tools call calls mcp chat prompt prompts
variable variables instance instances path paths setting settings log logs logging browser medium
directory directories folder folders repo repository branch branches commit commits server servers
client clients service services component components module modules package packages config
configuration configurations environment script scripts database table tables query queries api
endpoint endpoints route routes page pages button buttons field fields property properties
parameter parameters argument arguments object objects array arrays map key keys id ids status
state event events process option flag flags format model models schema interface interfaces struct
library framework dependency dependencies docs documentation readme markdown comment comments warning
warnings exception exceptions bug bugs debug debugging console terminal shell script
method's class's works fine error-free local remote main master default dev development production
prod staging run-time runtime compile compiled compiler build-time lint linter linting format
formatting style styles test's issue-free approach update's changes commit's push pushed pull
install installed installing setup configure configured deploy deployed deployment deployments
happy amazing awesome beautiful wonderful glad excited love loved lovely fun pic picture photo image
day days life feel feeling felt sounds sound beats getting super totally definitely glad hope hoping
moments moment stuff cool nice thanks yeah wow tough kind really pretty lot`)
})

// idLike says whether a room key is an id rather than a topic: a hash or
// a UID (hex runs of 7 or more with a digit), a long number, or a token
// mixing letters and digits (user, build and deployment ids). Such keys
// name one exchange, not a place to come back to.
func idLike(key string) bool {
	for _, seg := range strings.FieldsFunc(key, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		digits, letters, hex := 0, 0, true
		for _, r := range seg {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case unicode.IsLetter(r):
				letters++
				if !(r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
					hex = false
				}
			default:
				hex = false
			}
		}
		switch {
		case hex && digits > 0 && len(seg) >= 7:
			return true
		case letters == 0 && digits >= 4:
			return true
		case digits >= 2 && letters >= 2 && len(seg) >= 6:
			return true
		case len(seg) >= 20:
			return true
		}
	}
	return false
}
