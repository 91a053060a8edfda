package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine is the longest message line the server reads (the SDK's own cap).
const MaxLine = mcp.DefaultMaxLineLength

// StdioTransport is Transport over the process's stdin and stdout.
func StdioTransport() mcp.Transport { return Transport(os.Stdin, os.Stdout) }

// Transport is the SDK's newline-delimited JSON-RPC transport over in and
// out, with one difference: a line that is not a JSON-RPC message (not JSON,
// not a request, response or notification, a batch, longer than
// MaxLine) is answered with a JSON-RPC error (-32700 parse error or -32600
// invalid request, "id" null unless the line names one) and skipped. The
// SDK's own stream decoder ends the whole session on such a line.
func Transport(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go filterLines(in, pw, w, MaxLine)
	// The SDK's own cap is off: filterLines caps each line, and the SDK's
	// counts the bytes its decoder reads ahead, so a line near the cap
	// followed by another could end the session.
	return &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1}
}

// lockedWriter serialises whole writes: the SDK writes each message (or
// batch) with one Write call, and filterLines writes its errors the same
// way, so lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// filterLines copies the valid message lines of in to pw and answers the
// others on out. It closes pw at the end of in (or with its read error), and
// stops when the SDK closes the pipe's reading end.
func filterLines(in io.Reader, pw *io.PipeWriter, out io.Writer, max int) {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		line = line[:0]
		tooLong := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if !tooLong {
				if len(line)+len(chunk) > max+1 {
					tooLong, line = true, line[:0]
				} else {
					line = append(line, chunk...)
				}
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if tooLong {
			writeError(out, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("message longer than %d bytes: skipped", max))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if code, why := check(msg); code != 0 {
				writeError(out, idOf(msg), code, why)
			} else if _, werr := pw.Write(append(msg, '\n')); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// check says why a line is not a message (a code and a reason), or 0.
// Batches are refused: MCP dropped them in 2025-06-18, and the SDK ends the
// session on one.
func check(line []byte) (int, string) {
	if !json.Valid(line) {
		return jsonrpc.CodeParseError, "parse error: the line is not JSON"
	}
	switch line[0] {
	case '[':
		return jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported"
	case '{':
	default:
		return jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC object"
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		why := err.Error()
		if len(why) > 200 {
			why = strings.ToValidUTF8(why[:200], "") + "…"
		}
		return jsonrpc.CodeInvalidRequest, "invalid request: " + why
	}
	return 0, ""
}

// idOf is the line's "id" when it is a string or a number, else nil (null).
func idOf(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	if m.ID[0] == '"' {
		return m.ID
	}
	if _, err := strconv.ParseInt(string(m.ID), 10, 64); err == nil {
		return m.ID
	}
	return nil
}

func writeError(out io.Writer, id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	_, _ = out.Write(append(b, '\n'))
}
