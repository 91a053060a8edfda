package exchange

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gitmem/git-mem/internal/lazy"
)

// Room is a thematic place of the memory palace, written "type:key"
// (file:auth_middleware, concept:retry_timeout, project:billing).
type Room struct {
	Type string
	Key  string
}

func (r Room) String() string { return r.Type + ":" + r.Key }

var roomRe = lazy.Regexp(`^([a-z][a-z0-9_-]{0,15}):([a-z0-9][a-z0-9_.\-/]{0,63})$`)

// ParseRoom parses "type:key"; both parts must already be normalised
// (see NormalizeRoomKey).
func ParseRoom(s string) (Room, error) {
	m := roomRe().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Room{}, fmt.Errorf("room %q is not type:key in lower case (e.g. concept:retry_timeout)", s)
	}
	return Room{Type: m[1], Key: m[2]}, nil
}

// NormalizeRoomKey lower-cases a key and joins its words with "_" so that the
// same topic always lands in the same room.
func NormalizeRoomKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	var b strings.Builder
	lastSep := true
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '/', r == '-':
			b.WriteRune(r)
			lastSep = false
		default:
			if !lastSep {
				b.WriteByte('_')
				lastSep = true
			}
		}
	}
	out := strings.Trim(b.String(), "_./-")
	if len(out) > 64 {
		out = strings.TrimRight(out[:64], "_./-")
	}
	return out
}

// Card is the distilled form of an exchange: the routing index of the memory.
type Card struct {
	Core      string   // exchange_core: 1–2 sentences, what was done
	Context   string   // specific_context: the one distinguishing detail
	Rooms     []Room   // 1–3 thematic rooms
	Files     []string // files touched, found in the verbatim text
	Distiller string   // name/version of the distiller that wrote the card
}

// Trailers are the git trailers of a memory commit besides the card's own.
type Trailers struct {
	Exchange string
	Session  string
	Project  string
	Agent    string
	Redacted int // secrets replaced in this exchange
}

// Trailer keys, in the order they are written.
const (
	TrailerExchange  = "Exchange"
	TrailerSession   = "Session"
	TrailerProject   = "Project"
	TrailerAgent     = "Agent"
	TrailerRoom      = "Room"
	TrailerFile      = "File"
	TrailerDistiller = "Distiller"
	TrailerRedacted  = "Redacted"
)

// MaxCoreRunes and MaxContextRunes bound the card's text in a commit message.
const (
	MaxCoreRunes    = 400
	MaxContextRunes = 400
)

// oneLine makes a value safe for a trailer or a paragraph: no newlines, no
// runs of blanks, and no control characters (a NUL in a commit message
// fails `git fsck` and hosted remotes' receive checks, and git cuts the
// message there; the exchange's own text keeps them in its blob).
func oneLine(s string) string {
	if strings.IndexFunc(s, isControl) >= 0 {
		s = strings.Map(func(r rune) rune {
			if isControl(r) {
				return ' '
			}
			return r
		}, s)
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.Join(strings.Fields(s), " ")
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// paragraph keeps a body paragraph from ending the message early or being
// taken for the trailer block: no blank lines inside, and a text that looks
// like "Key: value" on every line gets no chance to be read as trailers
// because the real trailer block always follows it.
func paragraph(s string, max int) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > max {
		s = strings.TrimSpace(string(r[:max-1])) + "…"
	}
	return s
}

// FormatMessage writes the commit message of a memory commit: core, blank
// line, context, blank line, trailers (`git interpret-trailers --parse`
// returns them unchanged). Empty trailers are left out.
func FormatMessage(c Card, t Trailers) string {
	var b strings.Builder
	core := paragraph(c.Core, MaxCoreRunes)
	if core == "" {
		core = "(no summary)"
	}
	b.WriteString(core)
	b.WriteString("\n\n")
	if ctx := paragraph(c.Context, MaxContextRunes); ctx != "" {
		b.WriteString(ctx)
		b.WriteString("\n\n")
	}
	add := func(k, v string) {
		v = oneLine(v)
		if v != "" {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	add(TrailerExchange, t.Exchange)
	add(TrailerSession, t.Session)
	add(TrailerProject, t.Project)
	add(TrailerAgent, t.Agent)
	for _, r := range c.Rooms {
		add(TrailerRoom, r.String())
	}
	for _, f := range c.Files {
		add(TrailerFile, f)
	}
	add(TrailerDistiller, c.Distiller)
	if t.Redacted > 0 {
		add(TrailerRedacted, strconv.Itoa(t.Redacted))
	}
	return b.String()
}

// Message is a parsed memory commit message.
type Message struct {
	Card     Card
	Trailers Trailers
	// All holds every trailer in order, including ones this version does not know.
	All [][2]string
}

// trailerKV is the match of `^([A-Za-z][A-Za-z0-9-]*): (.*)$` of line, which holds no newline: the key
// (its first group), the value (its second, untrimmed) and whether it
// matched. The key's class holds neither ':' nor ' ', so the key is the
// longest run of key bytes from the start and ": " must follow it; `.`
// takes any other byte, valid UTF-8 or not. Without the regexp: every
// index update parses each commit's message twice per trailer line with
// it (~0.1 CPU-s of the coding add; docs/BENCHMARKS.md, session 25).
func trailerKV(line string) (key, value string, ok bool) {
	if len(line) == 0 || !isASCIILetter(line[0]) {
		return "", "", false
	}
	i := 1
	for i < len(line) && (isASCIILetter(line[i]) || '0' <= line[i] && line[i] <= '9' || line[i] == '-') {
		i++
	}
	if !strings.HasPrefix(line[i:], ": ") || strings.IndexByte(line, '\n') >= 0 {
		return "", "", false
	}
	return line[:i], line[i+2:], true
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// ParseMessage reads a commit message written by FormatMessage. Unknown
// trailers are kept in All.
func ParseMessage(msg string) Message {
	msg = strings.TrimRight(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	paras := strings.Split(msg, "\n\n")
	var m Message
	last := paras[len(paras)-1]
	body := paras
	if isTrailerBlock(last) && len(paras) > 1 {
		body = paras[:len(paras)-1]
		for _, line := range strings.Split(last, "\n") {
			k, v, ok := trailerKV(line)
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			m.All = append(m.All, [2]string{k, v})
			switch k {
			case TrailerExchange:
				m.Trailers.Exchange = v
			case TrailerSession:
				m.Trailers.Session = v
			case TrailerProject:
				m.Trailers.Project = v
			case TrailerAgent:
				m.Trailers.Agent = v
			case TrailerRoom:
				if r, err := ParseRoom(v); err == nil {
					m.Card.Rooms = append(m.Card.Rooms, r)
				}
			case TrailerFile:
				m.Card.Files = append(m.Card.Files, v)
			case TrailerDistiller:
				m.Card.Distiller = v
			case TrailerRedacted:
				m.Trailers.Redacted, _ = strconv.Atoi(v)
			}
		}
	}
	if len(body) > 0 {
		m.Card.Core = strings.TrimSpace(body[0])
	}
	if len(body) > 1 {
		m.Card.Context = strings.TrimSpace(strings.Join(body[1:], "\n\n"))
	}
	return m
}

func isTrailerBlock(p string) bool {
	for _, line := range strings.Split(p, "\n") {
		if _, _, ok := trailerKV(line); !ok {
			return false
		}
	}
	return true
}

// RoomStrings returns the rooms as "type:key", sorted and unique.
func RoomStrings(rs []Room) []string {
	out := make([]string, 0, len(rs))
	seen := map[string]bool{}
	for _, r := range rs {
		s := r.String()
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// OneLine is paragraph for commits that are not exchanges (pins, links):
// one line, no control characters, at most max runes.
func OneLine(s string, max int) string { return paragraph(s, max) }
