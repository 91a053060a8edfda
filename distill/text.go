package distill

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// injectedTags wrap text that tools, not people, put into a prompt: system
// reminders, slash-command plumbing, IDE state, and git mem's own context
// block. They are dropped before the prompt is read for its intent.
var injectedTags = []string{"git-mem-context", "system-reminder", "command-name", "command-message",
	"local-command-stdout", "local-command-stderr", "local-command-caveat", "user-prompt-submit-hook",
	"ide_opened_file", "ide_selection", "ide_diagnostics", "environment_context", "user_instructions",
	"additional_data", "attached_files", "project_layout", "rules", "cursor_commands"}

// keptTags wrap the user's own words: the tags go, the content stays.
var keptTags = []string{"command-args", "user_query", "user_request"}

// stripInjected removes injected blocks and unwraps kept ones.
func stripInjected(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	for _, tag := range injectedTags {
		s = removeBlocks(s, tag, false)
	}
	for _, tag := range keptTags {
		s = removeBlocks(s, tag, true)
	}
	return s
}

// removeBlocks drops <tag ...>...</tag> (or only the tags when keep is
// set). An unclosed tag loses just its opening line, so a stray "<rules"
// in prose cannot swallow the rest of the prompt.
func removeBlocks(s, tag string, keep bool) string {
	open, close := "<"+tag, "</"+tag+">"
	from := 0
	for guard := 0; guard < 100 && from < len(s); guard++ {
		i := strings.Index(s[from:], open)
		if i < 0 {
			return s
		}
		i += from
		rest := s[i+len(open):]
		if rest == "" || (rest[0] != '>' && rest[0] != ' ' && rest[0] != '\n' && rest[0] != '/') {
			from = i + len(open) // a longer tag name sharing the prefix
			continue
		}
		gt := strings.IndexByte(rest, '>')
		if gt < 0 {
			return s
		}
		body := rest[gt+1:]
		if strings.HasSuffix(rest[:gt], "/") {
			s = s[:i] + body
			from = i
			continue
		}
		j := strings.Index(body, close)
		switch {
		case j < 0 && !keep:
			if nl := strings.IndexByte(body, '\n'); nl >= 0 {
				body = body[nl+1:]
			} else {
				body = ""
			}
			s = s[:i] + body
		case j < 0:
			s = s[:i] + body
		case keep:
			s = s[:i] + body[:j] + body[j+len(close):]
		default:
			s = s[:i] + body[j+len(close):]
		}
		from = i
	}
	return s
}

// prompt is a user message split into the person's prose and what they
// pasted (fenced blocks and log-looking lines).
type prompt struct {
	prose  []string // lines of prose, in order
	pasted []string // fenced or log-like lines, in order
	fenced []string // first non-empty line of each fenced block
}

func parsePrompt(s string) prompt {
	var p prompt
	inFence := false
	firstInFence := false
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			firstInFence = inFence
			continue
		}
		if t == "" {
			continue
		}
		if inFence {
			if firstInFence {
				p.fenced = append(p.fenced, t)
				firstInFence = false
			}
			p.pasted = append(p.pasted, t)
			continue
		}
		if isLogLine(line) || errorScore(t) > 0 && errorStart(t) <= 2 && len(p.prose) > 0 {
			p.pasted = append(p.pasted, t)
			continue
		}
		p.prose = append(p.prose, t)
	}
	return p
}

// isLogLine tells pasted output (stack frames, compiler lines, tables,
// timestamps) from a person's sentences.
func isLogLine(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return false
	}
	if strings.HasPrefix(t, "at ") && strings.ContainsAny(t, "(:") || strings.HasPrefix(t, "|") ||
		strings.HasPrefix(t, "$ ") || strings.HasPrefix(t, "> ") && strings.Contains(t, "@") ||
		strings.HasPrefix(t, "PS ") && strings.Contains(t, ":\\") || strings.HasPrefix(t, "+ ") || strings.HasPrefix(t, "File \"") {
		return true
	}
	if errorScore(t) > 0 && (strings.Contains(t, "): ") || strings.Contains(t, ".cs(") || strings.Contains(t, ":\\")) {
		return true
	}
	letters, other, spaces := 0, 0, 0
	for _, r := range t {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == ' ':
			spaces++
		default:
			other++
		}
	}
	if letters == 0 {
		return true
	}
	// Mostly symbols and digits, or one very long token: output, not prose.
	if other > letters || spaces == 0 && len(t) > 60 {
		return true
	}
	// Leading timestamps and log levels.
	if len(t) > 8 && (t[0] >= '0' && t[0] <= '9') && strings.Count(t[:8], ":")+strings.Count(t[:8], "-") >= 2 {
		return true
	}
	return false
}

// unit is a sentence with where it stood: a list item or a heading.
type unit struct {
	text            string
	bullet, heading bool
}

// sentenceUnits splits text like sentences, remembering list items and
// headings.
func sentenceUnits(s string, max int) []unit {
	var out []unit
	for u := range units(s, max) {
		out = append(out, u)
	}
	return out
}

// units yields the first max of sentenceUnits one at a time, so a caller
// that has seen enough stops before the rest of a long reply is cut into
// lines and cleaned of markdown.
func units(s string, max int) iter.Seq[unit] {
	return func(yield func(unit) bool) {
		n := 0
		inFence := false
		for rest, more := s, true; more; {
			var line string
			line, rest, more = strings.Cut(rest, "\n")
			t := strings.TrimSpace(line)
			if strings.HasPrefix(t, "```") {
				inFence = !inFence
				continue
			}
			if inFence || t == "" || strings.HasPrefix(t, "|") {
				continue
			}
			heading := strings.HasPrefix(t, "#")
			bullet := strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "• ") ||
				len(t) > 2 && t[0] >= '0' && t[0] <= '9' && (t[1] == '.' || t[1] == ')')
			for _, snt := range splitSentences(t) {
				if c := cleanMarkdown(snt); c != "" {
					if !yield(unit{c, bullet, heading}) {
						return
					}
					if n++; n >= max {
						return
					}
				}
			}
		}
	}
}

// sentences splits text into sentences and lines, cleaned of markdown.
func sentences(s string, max int) []string {
	us := sentenceUnits(s, max)
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.text
	}
	return out
}

var abbreviations = []string{"e.g.", "i.e.", "etc.", "vs.", "Mr.", "Mrs.", "Dr.", "No.", "approx.", "cf."}

// splitSentences cuts a line after ". ", "! ", "? " unless the period ends
// an abbreviation or a number.
func splitSentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line)-1; i++ {
		c := line[i]
		if (c == '.' || c == '!' || c == '?') && line[i+1] == ' ' {
			word := line[start : i+1]
			if k := strings.LastIndexByte(word, ' '); k >= 0 {
				word = word[k+1:]
			}
			word = strings.TrimLeft(word, "([\"'")
			abbr := false
			for _, a := range abbreviations {
				if strings.EqualFold(word, a) {
					abbr = true
				}
			}
			if abbr {
				continue
			}
			out = append(out, strings.TrimSpace(line[start:i+1]))
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(line[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// cleanMarkdown strips markup but keeps words, identifiers, punctuation and
// emoji. A `code span` is copied byte for byte, backticks included, and a
// '*' goes only when it is emphasis (a pair around text: **bold**, *it*),
// so shell globs (<dir>/*.sh, name-*) survive.
func cleanMarkdown(s string) string {
	s = strings.TrimSpace(s)
	for {
		n := len(s)
		s = strings.TrimLeft(s, "#>-+• \t")
		if strings.HasPrefix(s, "* ") {
			s = s[2:] // a list item; other stars may open emphasis
		}
		if len(s) > 2 && s[0] >= '0' && s[0] <= '9' && (s[1] == '.' || s[1] == ')') && s[2] == ' ' {
			s = s[3:]
		}
		s = strings.TrimPrefix(s, "[x] ")
		s = strings.TrimPrefix(s, "[ ] ")
		if len(s) == n {
			break
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	drop := emphasis(s, '*')
	for k := range emphasis(s, '_') {
		drop[k] = true
	}
	for i := 0; i < len(s); {
		if s[i] == '`' {
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				b.WriteString(s[i : i+j+2])
				i += j + 2
				space = false
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case (r == '*' || r == '_') && drop[i-size]:
			continue
		case r == 0xFE0F || r == 0x200D:
			// variation selector and joiner: kept inside emoji only
			if b.Len() == 0 || space {
				continue
			}
		case unicode.IsSpace(r):
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// emphasis marks the runs of c ('*' or '_') in s (outside code spans) that
// open and close emphasis: an opening run follows the start, a space or an
// opening bracket and precedes text; its closing run, of the same length,
// follows text and precedes the end, a space or punctuation ('.' only for
// '*': __init__.py is a name). Every other '*' or '_' is text: a glob, a
// pointer, a multiplication, an identifier.
func emphasis(s string, c byte) map[int]bool {
	type run struct{ at, n int }
	var runs []run
	inCode := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '`':
			inCode = !inCode
		case s[i] == c && !inCode:
			j := i
			for j < len(s) && s[j] == c {
				j++
			}
			runs = append(runs, run{i, j - i})
			i = j - 1
		}
	}
	opens := func(r run) bool {
		before := r.at == 0 || strings.IndexByte(" \t([{\"'", s[r.at-1]) >= 0
		end := r.at + r.n
		return before && end < len(s) && s[end] != ' '
	}
	closes := func(r run) bool {
		end := r.at + r.n
		punct := " \t.,;:!?)]}\"'"
		if c == '_' {
			punct = " \t,;:!?)]}\"'"
		}
		after := end == len(s) || strings.IndexByte(punct, s[end]) >= 0
		return after && r.at > 0 && s[r.at-1] != ' '
	}
	drop := map[int]bool{}
	for i := 0; i < len(runs); i++ {
		if !opens(runs[i]) {
			continue
		}
		for j := i + 1; j < len(runs); j++ {
			if runs[j].n == runs[i].n && closes(runs[j]) {
				for _, r := range []run{runs[i], runs[j]} {
					for k := r.at; k < r.at+r.n; k++ {
						drop[k] = true
					}
				}
				i = j
				break
			}
		}
	}
	return drop
}

// fillerPrefixes open a message without saying anything.
var fillerPrefixes = []string{"you're absolutely right", "you are absolutely right", "you're right",
	"thank you", "thanks", "hi", "hey", "hello", "ok", "okay", "alright", "all right", "so", "great",
	"cool", "perfect", "awesome", "nice", "excellent", "sure", "yes", "yep", "yeah", "good", "wonderful",
	"fantastic", "amazing", "absolutely", "got it", "i see", "now", "@agent", "hmm", "well", "done",
	"for the code present", "claude", "please note"}

// bareFillers are stripped even without punctuation after them ("ok lets
// try again" -> "lets try again").
var bareFillers = map[string]bool{"@agent": true, "ok": true, "okay": true, "hi": true, "hey": true,
	"hello": true, "thanks": true, "great": true, "perfect": true, "alright": true, "claude": true}

// trimFiller removes greetings and interjections at the start of a sentence.
func trimFiller(s string) string {
	for guard := 0; guard < 6; guard++ {
		l := strings.ToLower(s)
		cut := 0
		for _, f := range fillerPrefixes {
			if !strings.HasPrefix(l, f) {
				continue
			}
			rest := s[len(f):]
			j, punct := 0, false
			for j < len(rest) && strings.IndexByte(",!.:;- ", rest[j]) >= 0 {
				punct = punct || rest[j] != ' '
				j++
			}
			if rest != "" && (j == 0 || !punct && !bareFillers[f]) {
				continue // "okaying", or "so the goal is"
			}
			if j < len(rest) && rest[j-1] != ' ' && isWordByte(rest[j]) {
				// A name: "hello.sh is now in scripts/", "ok-button"; in
				// "Ok .secrets is live" the filler ends at the space.
				k := strings.LastIndexByte(rest[:j], ' ')
				if k < 0 {
					continue
				}
				j = k + 1
			}
			cut = len(f) + j
			break
		}
		if cut == 0 {
			break
		}
		if cut >= len(s) {
			return "" // nothing but filler
		}
		s = s[cut:]
	}
	return strings.TrimSpace(s)
}

// clip cuts s to at most n runes at a word boundary, marking the cut.
func clip(s string, n int) string {
	n = max(n, 8)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	cut := n - 1
	for i := cut; i > n/2; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	out := string(r[:cut])
	if strings.Count(out, "`")%2 == 1 {
		// never cut inside a code span: end before it
		out = out[:strings.LastIndexByte(out, '`')]
	}
	return strings.TrimRight(out, " ,;:-—") + "…"
}

// pairTicks drops a backtick left without a pair (a typo, or a span cut
// by the sentence splitter), as Markdown shows it: literal, not the opening
// of a span. Left in, it swallowed the " — " join and the reply after it
// into one code span (3 of the 3,099 coding cards).
func pairTicks(s string) string {
	if strings.Count(s, "`")%2 == 0 {
		return s
	}
	i := strings.LastIndexByte(s, '`')
	return cleanSpaces(s[:i] + s[i+1:])
}

// wordCount is len(strings.Fields(s)), counted without the slice:
// summarySentence asks it of every sentence it weighs (docs/BENCHMARKS.md,
// session 25). A word is a run of runes that are not unicode.IsSpace (an
// invalid byte is U+FFFD, a word rune), as Fields splits.
func wordCount(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		var sp bool
		if c < utf8.RuneSelf {
			sp = asciiSpace(c)
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			sp = unicode.IsSpace(r)
			i += size
		}
		if !sp && !in {
			n++
		}
		in = !sp
	}
	return n
}

// firstWord is strings.Fields(s)[0] ("" when s has no word), without the
// slice of every word.
func firstWord(s string) string {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		var sp bool
		size := 1
		if c < utf8.RuneSelf {
			sp = asciiSpace(c)
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			sp = unicode.IsSpace(r)
		}
		switch {
		case !sp && start < 0:
			start = i
		case sp && start >= 0:
			return s[start:i]
		}
		i += size
	}
	if start < 0 {
		return ""
	}
	return s[start:]
}

// asciiSpace is unicode.IsSpace below 0x80.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// upperFirst starts a sentence with a capital, unless it starts with a
// command or an identifier, whose case is part of it ("go test ./...",
// "npm install", "parseConfig failed").
func upperFirst(s string) string {
	if looksLikeCode(s) {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsLower(r) || codeStart(s) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}

// commands are program names that never start an English sentence.
var commands = map[string]bool{"git": true, "npm": true, "npx": true, "pnpm": true, "yarn": true,
	"kubectl": true, "docker": true, "cargo": true, "pip": true, "pip3": true, "python3": true,
	"gh": true, "brew": true, "apt": true, "apt-get": true, "sudo": true, "curl": true, "wget": true,
	"helm": true, "terraform": true, "dotnet": true, "gradle": true, "mvn": true, "uv": true,
	"uvx": true, "deno": true, "bun": true, "rustc": true, "gcc": true, "ssh": true, "scp": true,
	"grep": true, "sed": true, "awk": true, "ls": true, "cd": true, "rm": true, "mkdir": true,
	"chmod": true, "pytest": true, "jest": true, "vitest": true, "tsc": true, "eslint": true,
	"pwd": true, "whoami": true, "cp": true, "mv": true, "ln": true, "du": true, "df": true, "ps": true,
	"npm.cmd": true, "tail": true, "vim": true, "nano": true, "tree": true, "env": true, "pnpx": true,
	"const": true, "def": true, "func": true, "fn": true, "chown": true, "tar": true, "unzip": true, "zsh": true, "bash": true}

// looksLikeCode says a line is code or a command, whose case is part of
// it: it opens with a code span, or has code punctuation ({ } ; => ==
// ( ) right after a word) before its first space-separated sentence ends
// ("import { z } from 'zod'", "console.log(x)").
func looksLikeCode(s string) bool {
	if strings.HasPrefix(s, "`") {
		return true
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return false
	}
	if len(f) == 1 && strings.ContainsAny(f[0], "(){};=<>") {
		return true
	}
	for _, w := range f[1:min(4, len(f))] {
		if w == "{" || w == "}" || w == "=>" || w == "==" || w == "=" || strings.HasPrefix(w, "{") || strings.HasSuffix(w, ";") {
			return true
		}
	}
	return false
}

// ambiguousCommands are program names that are also English words: they
// keep their case only before a flag, a path or an argument with '=' ("go
// test ./...", but "Go ahead and fix it").
var ambiguousCommands = map[string]bool{"go": true, "make": true, "node": true, "python": true,
	"cat": true, "find": true, "touch": true, "test": true, "run": true, "echo": true, "export": true}

func codeStart(s string) bool {
	f := strings.Fields(s)
	if len(f) == 0 {
		return false
	}
	w := strings.TrimRight(f[0], ":,")
	if commands[w] || isIdentifier(w) || strings.ContainsAny(w, "./_=$`") {
		return true
	}
	if ambiguousCommands[w] {
		for _, x := range f[1:min(3, len(f))] {
			if strings.HasPrefix(x, "-") || strings.ContainsAny(x, "./=") {
				return true
			}
		}
	}
	return false
}

// isWordByte: an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
