package distill

import (
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/internal/lazy"
)

// errorRules pair a cheap substring cue with the regexp that finds the
// start of the specific part of an error line; the regexp runs only on lines
// holding the cue, so megabytes of tool output cost a few scans.
type errorRule struct {
	cues []string
	re   *regexp.Regexp
}

// errorRules are compiled on first use, not at every command's start-up.
var errorRules = sync.OnceValue(func() []errorRule {
	return []errorRule{
		{[]string{"rror"}, regexp.MustCompile(`\berror\[E\d{4}\]:|\berror [A-Z]{1,6}\d{2,6}\b|[A-Z][A-Za-z0-9]*Error(?::\s|$)|\b(?:Error|error|ERROR)[:!]\s*\S|\b[1-9]\d* errors?\b|\bError \(active\)`)},
		{[]string{"xception"}, regexp.MustCompile(`[A-Z][A-Za-z0-9]*Exception(?::\s|$)|\bUnhandled exception\b`)},
		{[]string{"arning "}, regexp.MustCompile(`\bwarning [A-Z]{1,6}\d{2,6}\b`)},
		{[]string{"panic", "fatal", "FATAL", "ERR"}, regexp.MustCompile(`\b(?:panic|fatal|FATAL|npm ERR!|ERR_[A-Z_]+)[:!]?\s*\S`)},
		{[]string{"FAIL"}, regexp.MustCompile(`--- FAIL: \S+|^\s*FAIL\s+\S+|\bFAILED\s+\S+`)},
		{[]string{"failed", "failing"}, regexp.MustCompile(`\b[1-9]\d* (?:failing|failed)\b|\bCommand failed\b|\bfailed with \d+ error`)},
		{[]string{"xit"}, regexp.MustCompile(`\b(?:[Ee]xit(?:ed)?(?: with)? (?:code|status)|exit_code|Exit Code)[:=]?\s*[1-9]\d*`)},
		{[]string{"not found", "Cannot find"}, regexp.MustCompile(`\bCannot find (?:module|name|namespace)\b|\bcommand not found\b|\bModule not found\b`)},
		{[]string{"✕", "✗"}, regexp.MustCompile(`^\s*[✕✗]\s+\pL`)},
		{[]string{"Unhandled"}, regexp.MustCompile(`\bUnhandled (?:rejection|promise)\b`)},
	}
})

// errorCues lists every cue of errorRules by its first two bytes (none
// is shorter): cueAt[p] for the pair p, and cuePairs[p>>3]&(1<<(p&7)) set
// for the pairs that have any. A pointer: hasErrorCue asks for it per
// line, and the struct by value was an 8 KiB copy each time (~0.05 CPU-s
// of the coding add; docs/BENCHMARKS.md, session 25).
var errorCues = sync.OnceValue(func() *errorCueTable {
	c := &errorCueTable{cueAt: map[uint16][]string{}}
	for _, r := range errorRules() {
		for _, cue := range r.cues {
			p := uint16(cue[0])<<8 | uint16(cue[1])
			c.cuePairs[p>>3] |= 1 << (p & 7)
			c.cueAt[p] = append(c.cueAt[p], cue)
		}
	}
	return c
})

// errorCueTable is errorCues' table.
type errorCueTable struct {
	cuePairs [1 << 13]byte
	cueAt    map[uint16][]string
}

// hasErrorCue reports whether line holds a cue of some errorRule: when it
// holds none, errorStart is -1 without asking each rule (errorScore asks
// of every line of every tool's output until one is an error: the 17
// strings.Contains of the cues and isCodeLine's checks were a sixth of the
// heuristic distiller's time on the coding corpus; docs/BENCHMARKS.md,
// session 21). One pass that stops only where a cue's first two bytes
// are.
func hasErrorCue(line string) bool {
	c := errorCues()
	for i := 0; i+1 < len(line); i++ {
		p := uint16(line[i])<<8 | uint16(line[i+1])
		if c.cuePairs[p>>3]&(1<<(p&7)) == 0 {
			continue
		}
		for _, cue := range c.cueAt[p] {
			if strings.HasPrefix(line[i:], cue) {
				return true
			}
		}
	}
	return false
}

// errorStart returns the offset where the error's specific part begins, or
// -1 when the line holds no error.
func errorStart(line string) int {
	best := -1
	rs := errorRules()
	for i := range rs {
		r := &rs[i]
		hit := false
		for _, c := range r.cues {
			if strings.Contains(line, c) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		if loc := r.re.FindStringIndex(line); loc != nil && (best < 0 || loc[0] < best) {
			best = loc[0]
		}
	}
	return best
}

// notErrorRe marks lines that mention errors but report success.
var notErrorRe = lazy.Regexp(`(?i)\b(?:0 (?:errors?|failed|failures|warnings?)|no errors|without errors|error handling|errors? (?:message|boundary|state|handler))\b`)

// errorScore is > 0 when the line reads like an error or a failure.
func errorScore(line string) int {
	if len(line) < 6 {
		return 0
	}
	if len(line) > 400 {
		line = line[:400]
	}
	if !hasErrorCue(line) {
		return 0 // errorStart would be -1
	}
	if isCodeLine(line) {
		return 0
	}
	if errorStart(line) < 0 || notErrorRe().MatchString(line) {
		return 0
	}
	return 1
}

// isCodeLine spots source code and diff lines that merely mention errors
// (console.error(...), throw new Error(...), "+ catch (err)").
func isCodeLine(line string) bool {
	t := strings.TrimSpace(line)
	if len(t) > 1 && (t[0] == '+' || t[0] == '-') && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	if strings.HasSuffix(t, ");") || strings.HasSuffix(t, "{") || strings.HasSuffix(t, ";") {
		return true
	}
	for _, c := range []string{"console.", "logger.", "log.Error", "throw ", "raise ", "new Error(", "catch (", "except ", "err != nil", "Error()", "=> "} {
		if strings.Contains(t, c) {
			return true
		}
	}
	return false
}

// errorLine returns the first error line of text, trimmed to its specific
// part (a long path prefix or trailing project reference is cut).
func errorLine(text string, skip func(string) bool) string {
	for len(text) > 0 {
		var line string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, ""
		}
		if len(line) > 2000 {
			line = line[:2000]
		}
		if errorScore(line) == 0 {
			continue
		}
		e := trimErrorLine(line)
		if e == "" || wordCount(e) < 2 && len(e) < 12 || skip != nil && skip(e) {
			continue
		}
		return e
	}
	return ""
}

func trimErrorLine(line string) string {
	t := strings.TrimSpace(line)
	if i := errorStart(t); i > 50 {
		t = strings.TrimSpace(t[i:])
	}
	// MSBuild appends the project path: "... [C:\dev\x\y.csproj]".
	if i := strings.LastIndex(t, " ["); i > 0 && strings.HasSuffix(t, "]") && strings.ContainsAny(t[i:], "/\\") {
		t = strings.TrimSpace(t[:i])
	}
	t = strings.TrimLeft(t, "│|>•* \t")
	if strings.HasPrefix(t, "- ") {
		t = t[2:]
	}
	return clip(cleanSpaces(t), maxContext)
}

// cleanSpaces collapses runs of white space to one space, except inside a
// `code span` of one line, which is copied byte for byte.
func cleanSpaces(s string) string {
	if !strings.Contains(s, "`") {
		return strings.Join(strings.Fields(s), " ")
	}
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '`')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(s[i+1:], '`')
		}
		if i < 0 || j < 0 || strings.ContainsAny(s[i:i+j+2], "\n\r") {
			b.WriteString(strings.Join(strings.Fields(s), " "))
			break
		}
		pre := strings.Join(strings.Fields(s[:i]), " ")
		b.WriteString(pre)
		if pre != "" && (s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\n') || pre == "" && i > 0 && b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i : i+j+2])
		s = s[i+j+2:]
		if s != "" && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n') {
			b.WriteByte(' ')
			s = strings.TrimLeft(s, " \t\r\n")
		}
	}
	return strings.TrimSpace(b.String())
}

// specificity scores how much a sentence pins down: identifiers, paths,
// flags, numbers and quoted values count; plain words do not.
func specificity(s string) int {
	score := 0
	if strings.Contains(s, "`") {
		score += 2 * min(strings.Count(s, "`")/2, 3)
	}
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, ".,;:!?()\"'`*")
		if len(w) < 2 {
			continue
		}
		switch {
		case strings.HasPrefix(w, "--") || strings.HasPrefix(w, "-") && len(w) > 2 && unicode.IsLetter(rune(w[1])):
			score += 2
		case hasDigit(w) && hasLetterRune(w):
			score += 2
		case hasDigit(w):
			score++
		case isIdentifier(w):
			score += 2
		case strings.ContainsAny(w, "/.") && hasLetterRune(w):
			score++
		}
	}
	return score
}

// isIdentifier matches camelCase, PascalCase with two humps, snake_case,
// SCREAMING_CASE and dotted.names.
func isIdentifier(w string) bool {
	if len(w) < 3 || !hasLetterRune(w) {
		return false
	}
	if strings.Contains(w, "_") && !strings.HasPrefix(w, "_") {
		return true
	}
	humps := 0
	for i := 1; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' && w[i-1] >= 'a' && w[i-1] <= 'z' {
			humps++
		}
	}
	if humps >= 1 {
		return true
	}
	if i := strings.IndexByte(w, '.'); i > 0 && i < len(w)-1 && w[i+1] != ' ' {
		return true
	}
	return false
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}

func hasLetterRune(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// trivialCommands say nothing about an exchange on their own.
var trivialCommands = map[string]bool{"ls": true, "pwd": true, "cd": true, "cat": true, "echo": true,
	"clear": true, "sleep": true, "head": true, "tail": true, "find": true, "grep": true, "which": true,
	"dir": true, "type": true, "ps": true, "true": true, "whoami": true}

// firstCommand returns the first non-trivial terminal command of the
// exchange, one line.
func firstCommand(ts []exchange.Turn) string {
	for _, t := range ts {
		if t.Role != exchange.RoleTool {
			continue
		}
		m, ok := t.Input.(map[string]any)
		if !ok {
			continue
		}
		c, _ := m["command"].(string)
		if c == "" {
			c, _ = m["cmd"].(string)
		}
		c = strings.TrimSpace(c)
		if i := strings.IndexByte(c, '\n'); i >= 0 {
			c = c[:i]
		}
		// "cd dir && real command" keeps the real command.
		for _, sep := range []string{" && ", "; "} {
			if i := strings.LastIndex(c, sep); i >= 0 && strings.HasPrefix(c, "cd ") {
				c = c[i+len(sep):]
			}
		}
		f := strings.Fields(c)
		if len(f) == 0 || trivialCommands[f[0]] && len(f) < 4 {
			continue
		}
		return clip(c, maxContext)
	}
	return ""
}
