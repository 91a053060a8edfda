package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitmem/git-mem/exchange"
)

// Several agents (Gemini CLI's legacy chats, Cline, Continue, Copilot Chat,
// OpenCode) write a session as one JSON document, rewritten as it grows,
// not as JSON Lines. These helpers read such a document and give each
// element of its message array the line it starts on, so a bad message is
// reported as file:line like a bad JSON Lines record.

// maxDocBytes bounds a whole-document transcript read into memory.
const maxDocBytes = 256 << 20

// readDoc reads a JSON document transcript.
func readDoc(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDocBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocBytes {
		return nil, fmt.Errorf("over %d MiB: not read", maxDocBytes>>20)
	}
	return data, nil
}

// docElem is one element of a JSON array and the line it starts on.
type docElem struct {
	line int
	raw  json.RawMessage
}

// lineAt is the 1-based line of the first value byte at or after off.
func lineAt(data []byte, off int) int {
	off = max(off, 0)
	for off < len(data) && bytes.IndexByte([]byte(" \t\r\n,:"), data[off]) >= 0 {
		off++
	}
	off = min(off, len(data))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// docProblem reports a document that does not parse, at the line of the
// error. A document cut short is the agent rewriting it: said so.
func docProblem(name string, data []byte, err error) Problem {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return Problem{name, lineAt(data, int(se.Offset)-1), fmt.Sprintf("not JSON: %v; the file is skipped", se)}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return Problem{name, bytes.Count(data, []byte("\n")) + 1, "the document ends early (the agent may be rewriting it); the file is skipped"}
	}
	return Problem{name, 0, err.Error() + "; the file is skipped"}
}

// arrayAt returns the elements of the array under key in a top-level object
// (path names nested keys: "a", "b" is data.a.b), or of the top-level array
// when path is empty. A missing key gives no elements and no error.
func arrayAt(data []byte, path ...string) ([]docElem, error) {
	elems, err := arrayAtDec(data, path)
	if err != nil {
		// A decoder's syntax offsets count from where it resumed; a whole
		// parse gives the offset in the file.
		var v any
		if werr := json.Unmarshal(data, &v); werr != nil {
			return elems, werr
		}
	}
	return elems, err
}

func arrayAtDec(data []byte, path []string) ([]docElem, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	for _, key := range path {
		if err := expectDelim(dec, '{'); err != nil {
			return nil, err
		}
		found := false
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return nil, err
			}
			if k, _ := t.(string); k == key {
				found = true
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
		if !found {
			return nil, nil
		}
	}
	// The value may be null or another type: no elements.
	off := int(dec.InputOffset())
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		if len(path) == 0 {
			return nil, fmt.Errorf("line %d: the document is not a JSON array", lineAt(data, off))
		}
		return nil, nil
	}
	var out []docElem
	for dec.More() {
		off := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out, err
		}
		if len(raw) > exchange.MaxRecordBytes {
			raw = nil
		}
		out = append(out, docElem{line: lineAt(data, off), raw: raw})
	}
	return out, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", want, t)
	}
	return nil
}

// badElem reports a message of a document that has an unexpected shape.
func badElem(name string, e docElem, err error) Problem {
	if e.raw == nil {
		return Problem{name, e.line, fmt.Sprintf("message over %d MiB skipped", exchange.MaxRecordBytes>>20)}
	}
	return Problem{name, e.line, "unexpected message shape: " + err.Error() + "; skipped"}
}

// partsText renders a list of content parts the way most agents write them
// (strings, {"type":"text","text":…}, {"text":…}); other parts (images,
// files) become a short marker so the prompt still reads.
func partsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return validUTF8(s)
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		var one map[string]any
		if json.Unmarshal(raw, &one) == nil {
			parts = []json.RawMessage{raw}
		} else {
			return ""
		}
	}
	var out []string
	for _, p := range parts {
		if json.Unmarshal(p, &s) == nil {
			out = append(out, validUTF8(s))
			continue
		}
		var obj struct {
			Type       string          `json:"type"`
			Text       *string         `json:"text"`
			InlineData json.RawMessage `json:"inlineData"`
			ImageURL   json.RawMessage `json:"image_url"`
			Image      json.RawMessage `json:"image"`
		}
		if json.Unmarshal(p, &obj) != nil {
			continue
		}
		switch {
		case obj.Text != nil:
			out = append(out, validUTF8(*obj.Text))
		case obj.InlineData != nil || obj.ImageURL != nil || obj.Image != nil || obj.Type == "image" || obj.Type == "imageUrl":
			out = append(out, "[image]")
		}
	}
	return joinNonEmpty(out, "\n")
}

func joinNonEmpty(parts []string, sep string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

// openDoc reads a document transcript, decodes its top level into head
// (nil: no header) and returns the elements of the array at path. A
// document that does not parse is a problem in the result, not an error:
// then ok is false and the caller stops.
func openDoc(file, what string, head any, path ...string) (elems []docElem, res Result, ok bool, err error) {
	data, err := readDoc(file)
	if err != nil {
		return nil, res, false, fmt.Errorf("read %s %s: %w", what, file, err)
	}
	if head != nil {
		if err := json.Unmarshal(data, head); err != nil {
			res.Problems = append(res.Problems, docProblem(file, data, err))
			return nil, res, false, nil
		}
	}
	elems, err = arrayAt(data, path...)
	if err != nil {
		res.Problems = append(res.Problems, docProblem(file, data, err))
		return nil, res, false, nil
	}
	return elems, res, true, nil
}

// sessionOr is the session id a file names, else its base name.
func sessionOr(id, file string) string {
	if id != "" {
		return id
	}
	return strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
}

// fileURLPath turns a file:// URI (VS Code, Continue) into a path; other
// strings are returned as they are.
func fileURLPath(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme == "file" {
		return u.Path
	}
	return s
}
