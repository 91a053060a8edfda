// Package exchange holds the domain types every part of git mem shares: an
// exchange (one user message and the agent's whole reply), its turns, and the
// distilled card written as a commit message. It imports nothing of the project.
package exchange

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Turn roles. Any other role is an input error.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleSystem    = "system"
)

// MaxRecordBytes bounds one input record. Larger records are refused with a
// clear message rather than risking memory exhaustion in the pipeline.
const MaxRecordBytes = 64 << 20

// Turn is one message of an exchange. Tool turns carry the call's name, its
// input (any JSON) and, in Text, what the model saw back.
type Turn struct {
	Role  string
	Text  string
	Name  string
	Input any // decoded JSON (json.Number for numbers); nil when absent
	// Extra keeps fields this version does not know, so the verbatim blob
	// loses nothing.
	Extra map[string]any
}

// Exchange is one user message plus the agent's whole reply.
type Exchange struct {
	ID      string // the input's own stable id; empty means "content hash"
	Session string
	Time    string // RFC 3339 as given; empty means "now" at commit time
	Project string
	Agent   string
	Turns   []Turn
	Extra   map[string]any
}

var knownTop = map[string]bool{"id": true, "session": true, "time": true, "project": true, "agent": true, "turns": true}
var knownTurn = map[string]bool{"role": true, "text": true, "name": true, "input": true}

// Parse decodes one JSON record of the plain exchange format and validates it.
func Parse(data []byte) (*Exchange, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("invalid UTF-8")
	}
	if len(data) > MaxRecordBytes {
		return nil, fmt.Errorf("record is %d bytes, over the %d MiB limit: split the exchange", len(data), MaxRecordBytes>>20)
	}
	ex, ok := parseFast(data)
	if !ok {
		var err error
		if ex, err = parseMap(data); err != nil {
			return nil, err
		}
	}
	return ex, ex.Validate()
}

// parseMap is Parse's decoding the general way: encoding/json into a map
// of any, then FromMap. Parse takes it for what parseFast declines.
func parseMap(data []byte) (*Exchange, error) {
	// Read from data itself: a string copy of it was a sixth of Parse's
	// time in `git mem add` (the decoder copies what it reads anyway, and
	// nothing decoded refers to data).
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not JSON: %s", jsonErr(err))
	}
	if dec.More() {
		return nil, errors.New("not JSON: more than one value on the line")
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return FromMap(obj)
}

func jsonErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (byte %d)", se, se.Offset)
	}
	return err.Error()
}

// FromMap builds an Exchange from a decoded JSON object, keeping unknown fields.
func FromMap(obj map[string]any) (*Exchange, error) {
	ex := &Exchange{}
	var err error
	str := func(k string) string {
		v, ok := obj[k]
		if !ok || v == nil || err != nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			err = fmt.Errorf("field %q must be a string", k)
		}
		return s
	}
	ex.ID, ex.Session, ex.Time = str("id"), str("session"), str("time")
	ex.Project, ex.Agent = str("project"), str("agent")
	if err != nil {
		return nil, err
	}
	rawTurns, ok := obj["turns"]
	if !ok || rawTurns == nil {
		return nil, errors.New(`no "turns": an exchange needs at least one user turn`)
	}
	list, ok := rawTurns.([]any)
	if !ok {
		return nil, errors.New(`"turns" must be an array`)
	}
	for i, rt := range list {
		m, ok := rt.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("turn %d is not an object", i+1)
		}
		t := Turn{}
		for k, v := range m {
			switch k {
			case "role", "text", "name":
				s, ok := v.(string)
				if !ok && v != nil {
					return nil, fmt.Errorf("turn %d: field %q must be a string", i+1, k)
				}
				*t.stringField(k) = s
			case "input":
				t.Input = v
			default:
				if t.Extra == nil {
					t.Extra = map[string]any{}
				}
				t.Extra[k] = v
			}
		}
		ex.Turns = append(ex.Turns, t)
	}
	for k, v := range obj {
		if !knownTop[k] {
			if ex.Extra == nil {
				ex.Extra = map[string]any{}
			}
			ex.Extra[k] = v
		}
	}
	return ex, nil
}

// stringField is the string field of ex that a record's name holds, nil
// for none: one list for FromMap and parseFast.
func (ex *Exchange) stringField(name string) *string {
	switch name {
	case "id":
		return &ex.ID
	case "session":
		return &ex.Session
	case "time":
		return &ex.Time
	case "project":
		return &ex.Project
	case "agent":
		return &ex.Agent
	}
	return nil
}

// stringField is Exchange.stringField for a turn's fields.
func (t *Turn) stringField(name string) *string {
	switch name {
	case "role":
		return &t.Role
	case "text":
		return &t.Text
	case "name":
		return &t.Name
	}
	return nil
}

// Validate reports the first problem that makes the exchange unstorable.
func (ex *Exchange) Validate() error {
	if err := CheckID(ex.ID); err != nil {
		return err
	}
	if len(ex.Turns) == 0 {
		return errors.New(`no turns: an exchange needs at least one user turn`)
	}
	hasUser := false
	for i, t := range ex.Turns {
		switch t.Role {
		case RoleUser, RoleAssistant, RoleSystem:
			if strings.TrimSpace(t.Text) == "" && t.Role == RoleUser {
				return fmt.Errorf("turn %d: empty text in a user turn", i+1)
			}
		case RoleTool:
		case "":
			return fmt.Errorf("turn %d: missing role (use user, assistant, tool or system)", i+1)
		default:
			return fmt.Errorf("turn %d: unknown role %q (use user, assistant, tool or system)", i+1, t.Role)
		}
		if t.Role == RoleUser {
			hasUser = true
		}
	}
	if !hasUser {
		return errors.New("no user turn: an exchange starts with what the user asked")
	}
	allEmpty := true
	for _, t := range ex.Turns {
		if strings.TrimSpace(t.Text) != "" || t.Input != nil {
			allEmpty = false
		}
	}
	if allEmpty {
		return errors.New("empty text in every turn")
	}
	for i, t := range ex.Turns {
		if err := checkNumbers(t.Input); err != nil {
			return fmt.Errorf("turn %d: input: %v", i+1, err)
		}
		if err := checkNumbers(anyMap(t.Extra)); err != nil {
			return fmt.Errorf("turn %d: %v", i+1, err)
		}
	}
	if err := checkNumbers(anyMap(ex.Extra)); err != nil {
		return err
	}
	if ex.Time != "" {
		if _, err := ParseTime(ex.Time); err != nil {
			return fmt.Errorf("field \"time\": %q is not RFC 3339 (e.g. 2026-03-01T10:00:00Z)", ex.Time)
		}
	}
	return nil
}

// CheckID refuses an id that the Exchange: trailer cannot carry exactly:
// the trailer folds whitespace and a commit message cannot hold control
// characters, so "   " or "x  y" would be stored under one id and found
// under another (the blob path hashes the raw id). Such ids are refused, not
// normalised, so that two runs never disagree on what an id became. The
// empty id means "content hash".
func CheckID(id string) error {
	if id == "" {
		return nil
	}
	if !utf8.ValidString(id) {
		return errors.New(`field "id" is not valid UTF-8`)
	}
	if strings.Join(strings.Fields(id), " ") != id {
		return fmt.Errorf(`field "id": %q has leading, trailing or repeated whitespace, which a commit trailer cannot keep: use an id without it (or none, for a content hash)`, id)
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf(`field "id": %q holds a control character: use printable characters only`, id)
		}
	}
	return nil
}

// ParseTime accepts RFC 3339 with or without fractional seconds.
func ParseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}

// When returns the exchange's own time, or fallback when it has none.
func (ex *Exchange) When(fallback time.Time) time.Time {
	if t, err := ParseTime(ex.Time); err == nil {
		return t
	}
	return fallback
}

// Map returns the exchange as a JSON-ready object (typed fields plus unknown ones).
func (ex *Exchange) Map() map[string]any {
	m := make(map[string]any, len(ex.Extra)+6)
	for k, v := range ex.Extra {
		m[k] = v
	}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("id", ex.ID)
	set("session", ex.Session)
	set("time", ex.Time)
	set("project", ex.Project)
	set("agent", ex.Agent)
	turns := make([]any, len(ex.Turns))
	for i, t := range ex.Turns {
		tm := make(map[string]any, len(t.Extra)+4)
		for k, v := range t.Extra {
			tm[k] = v
		}
		tm["role"] = t.Role
		if t.Text != "" || t.Role != RoleTool {
			tm["text"] = t.Text
		}
		if t.Name != "" {
			tm["name"] = t.Name
		}
		if t.Input != nil {
			tm["input"] = t.Input
		}
		turns[i] = tm
	}
	m["turns"] = turns
	return m
}

// Canonical returns the exchange as canonical JSON (see Canonical).
func (ex *Exchange) Canonical() []byte {
	// The buffer sized for the texts first: grown by doubling, a blob of
	// the coding corpus was copied and cleared several times over (~0.04
	// CPU-s of the coding add; docs/BENCHMARKS.md, session 25).
	var b bytes.Buffer
	b.Grow(ex.sizeHint())
	if err := writeCanonical(&b, ex.Map()); err != nil {
		// Map only holds values produced by the JSON decoder or strings.
		panic(fmt.Sprintf("canonical JSON of an exchange: %v", err))
	}
	return b.Bytes()
}

// sizeHint is about the bytes of ex's canonical JSON: its strings, an
// eighth more for escapes, and the names and punctuation around them
// (tool inputs and unknown fields not counted: the buffer grows for them).
func (ex *Exchange) sizeHint() int {
	n := len(ex.ID) + len(ex.Session) + len(ex.Time) + len(ex.Project) + len(ex.Agent) + 96
	for i := range ex.Turns {
		t := &ex.Turns[i]
		n += len(t.Role) + len(t.Text) + len(t.Name) + 40
	}
	return n + n/8
}

// UserText is the concatenated text of the user turns.
func (ex *Exchange) UserText() string {
	var b strings.Builder
	for _, t := range ex.Turns {
		if t.Role == RoleUser {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func anyMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// checkNumbers rejects numbers that have no finite float64 value (1e400):
// canonical JSON could not write them.
func checkNumbers(v any) error {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("number %s is out of range", x)
		}
	case []any:
		for _, e := range x {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range x {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}
