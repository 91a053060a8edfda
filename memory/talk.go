package memory

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/gitmem/git-mem/exchange"
)

// talk is what the indexer takes of an exchange's verbatim blob (docsOf):
// its rendering split into talk and tools' output, and its first and last
// words.
type talk struct {
	verbatim, output, head, tail string
}

// talkOfBlob reads a stored blob the way every indexer does: parsed, or,
// when it does not parse, the raw bytes as the verbatim text.
func talkOfBlob(blob []byte) talk {
	ex, err := exchange.Parse(blob)
	if err != nil {
		return talk{verbatim: string(blob)}
	}
	var t talk
	t.verbatim, t.output = ex.RenderSplit()
	t.head, t.tail = ex.HeadTail()
	return t
}

// talkOf is talkOfBlob(blob) taken from ex, whose canonical JSON blob is,
// without parsing it back: parsing the blobs an add had just written was
// 0.41 s of the 10 CPU-s add of the coding corpus (docs/BENCHMARKS.md,
// session 14). ok is false where that could differ, and the caller parses:
//
//   - the blob would not parse (over MaxRecordBytes, an exchange Validate
//     refuses, a tool input nested past what encoding/json decodes);
//   - a rendered string is not valid UTF-8: the blob holds U+FFFD (or the
//     escape \ufffd, inside a tool input) where ex holds the raw bytes;
//   - an Extra names a field of the exchange or of its turn (an
//     importer's exchange): Map writes one over the other;
//   - a tool input or an Extra holds a value the JSON decoder does not
//     make (an importer's float64, []byte, struct): a []byte speaker
//     comes back a string, and so is rendered; the rendering of what the
//     decoder makes is the only one known to be the same.
//
// Everything else round-trips exactly: Canonical writes valid UTF-8 strings
// as they are (JSON escapes decode back to the same bytes), numbers in
// their shortest form, which parses back to the same float64 and prints
// again the same, and map keys in one order whatever their order before.
// TestTalkOfIsBlobs holds it to talkOfBlob on the coding corpus and on
// exchanges built to differ.
func talkOf(ex *exchange.Exchange, blob []byte) (talk, bool) {
	if len(blob) > exchange.MaxRecordBytes || ex.Validate() != nil {
		return talk{}, false
	}
	for k, v := range ex.Extra {
		switch k {
		case "id", "session", "time", "project", "agent", "turns":
			return talk{}, false
		}
		if !decodedJSON(v, 0) {
			return talk{}, false
		}
	}
	for _, t := range ex.Turns {
		if !utf8.ValidString(t.Role) || !utf8.ValidString(t.Text) || !utf8.ValidString(t.Name) {
			return talk{}, false
		}
		for k, v := range t.Extra {
			switch k {
			case "role", "text", "name", "input":
				return talk{}, false
			}
			if !decodedJSON(v, 0) {
				return talk{}, false
			}
		}
		if !decodedJSON(t.Input, 0) {
			return talk{}, false
		}
	}
	var t talk
	t.verbatim, t.output = ex.RenderSplit()
	// Copies: the hand-off keeps them, and a turn's text would keep the
	// whole exchange in memory until it is indexed.
	head, tail := ex.HeadTail()
	t.head = strings.Clone(head)
	t.tail = t.head
	if tail != head {
		t.tail = strings.Clone(tail)
	}
	return t, true
}

// decodedJSON reports whether v is made only of what encoding/json decodes
// into (with UseNumber), with valid UTF-8 strings and keys, and nested
// well within the decoder's depth limit (10,000).
func decodedJSON(v any, depth int) bool {
	if depth > 1000 {
		return false
	}
	switch x := v.(type) {
	case nil, bool, json.Number:
		return true
	case string:
		return utf8.ValidString(x)
	case []any:
		for _, e := range x {
			if !decodedJSON(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !decodedJSON(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
