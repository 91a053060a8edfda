package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Newer VS Code builds save a chat as chatSessions/<sessionId>.jsonl, a
// log of mutations of the same serialised chat the .json files hold
// (microsoft/vscode src/vs/workbench/contrib/chat/common/model/
// objectMutationLog.ts and chatSessionOperationLog.ts). Each line is one
// entry:
//
//	{"kind":0,"v":<the whole chat>}             Initial: the first line, and again when the log is compacted
//	{"kind":1,"k":[path…],"v":<value>}          Set the value at path
//	{"kind":2,"k":[path…],"v":[items…],"i":n}   Push items to the array at path, after cutting it to n when i is set
//	{"kind":3,"k":[path…]}                      Delete the value at path
//
// A path is keys and array indexes from the top ("requests", 0,
// "response"). The log is replayed into the chat, whose requests are read
// as ReadCopilot reads a .json chat; in the log a request's isCanceled is
// always unset and its modelState {value} says whether it finished.
//
// A line that is not JSON, or whose path the chat does not hold, is
// reported as file:line and skipped; the lines after it still apply.

const (
	cpLogInitial = 0
	cpLogSet     = 1
	cpLogPush    = 2
	cpLogDelete  = 3
	// cpLogMaxPath bounds a mutation's path (the chat is a few levels
	// deep), so a crafted line cannot recurse without end.
	cpLogMaxPath = 64
)

type cpLogEntry struct {
	Kind *int            `json:"kind"`
	K    []any           `json:"k"`
	V    json.RawMessage `json:"v"`
	I    *int            `json:"i"`
}

// ReadCopilotLog reads a Copilot Chat mutation log (<sessionId>.jsonl).
func ReadCopilotLog(path string, opt Options) (Result, error) {
	var res Result
	f, err := os.Open(path)
	if err != nil {
		return res, fmt.Errorf("read copilot chat %s: %w", path, err)
	}
	defer f.Close()
	var state any
	// lines[i] is the log line that put request i in the chat: where a
	// request of the wrong shape is reported.
	var lines []int
	err = readLines(f, path, &res.Problems, func(l line) {
		var e cpLogEntry
		if err := json.Unmarshal(l.data, &e); err != nil {
			res.Problems = append(res.Problems, badLine(path, l, err))
			return
		}
		if e.Kind == nil {
			res.Problems = append(res.Problems, Problem{path, l.n, "a log entry without a kind; skipped"})
			return
		}
		var v any
		if len(e.V) > 0 {
			if v, err = decodeAny(e.V); err != nil {
				res.Problems = append(res.Problems, badLine(path, l, err))
				return
			}
		}
		if *e.Kind == cpLogInitial {
			if _, ok := v.(map[string]any); !ok {
				res.Problems = append(res.Problems, Problem{path, l.n, "the initial entry holds no chat; skipped"})
				return
			}
			state = v
			reqs, _ := v.(map[string]any)["requests"].([]any)
			lines = cpLines(nil, 0, len(reqs), l.n)
			return
		}
		if state == nil {
			res.Problems = append(res.Problems, Problem{path, l.n, "a change before the log's initial entry; skipped"})
			return
		}
		if len(e.K) == 0 || len(e.K) > cpLogMaxPath {
			res.Problems = append(res.Problems, Problem{path, l.n, fmt.Sprintf("a change with a path of %d keys; skipped", len(e.K))})
			return
		}
		var next any
		switch *e.Kind {
		case cpLogSet:
			next, err = cpSet(state, e.K, v, false)
		case cpLogDelete:
			next, err = cpSet(state, e.K, nil, true)
		case cpLogPush:
			items, ok := v.([]any)
			if v != nil && !ok {
				err = errors.New("pushes a value that is not a list")
				break
			}
			next, err = cpPush(state, e.K, items, e.I)
		default:
			err = fmt.Errorf("unknown kind %d", *e.Kind)
		}
		if err != nil {
			res.Problems = append(res.Problems, Problem{path, l.n, "log entry: " + err.Error() + "; skipped"})
			return
		}
		state = next
		// Keep the request lines in step with the requests array.
		if k0, _ := e.K[0].(string); k0 == "requests" {
			reqs, _ := state.(map[string]any)["requests"].([]any)
			switch {
			case len(e.K) == 1 && *e.Kind == cpLogPush:
				keep := len(lines)
				if e.I != nil {
					keep = min(max(*e.I, 0), keep)
				}
				lines = cpLines(lines, min(keep, len(reqs)), len(reqs), l.n)
			case len(e.K) == 1: // the whole list set anew
				lines = cpLines(nil, 0, len(reqs), l.n)
			default:
				lines = cpLines(lines, min(len(lines), len(reqs)), len(reqs), l.n)
			}
		}
	})
	if err != nil {
		return res, fmt.Errorf("read copilot chat %s: %w", path, err)
	}
	chat, _ := state.(map[string]any)
	if chat == nil {
		return res, nil
	}
	var head cpHead
	head.SessionID, _ = chat["sessionId"].(string)
	if n, ok := chat["creationDate"].(json.Number); ok {
		head.CreationDate, _ = n.Int64()
	}
	reqs, _ := chat["requests"].([]any)
	elems := make([]docElem, 0, len(reqs))
	for i, r := range reqs {
		raw, err := json.Marshal(r)
		if err != nil {
			continue
		}
		ln := 1
		if i < len(lines) {
			ln = lines[i]
		}
		elems = append(elems, docElem{line: ln, raw: raw})
	}
	res.Exchanges = copilotExchanges(path, head, elems, opt, &res)
	return res, nil
}

// cpLines cuts lines to keep entries and fills it up to n with line.
func cpLines(lines []int, keep, n, line int) []int {
	lines = lines[:keep]
	for len(lines) < n {
		lines = append(lines, line)
	}
	return lines
}

// cpIndex is a path element as an array index.
func cpIndex(k any) (int, bool) {
	switch k := k.(type) {
	case float64:
		if k >= 0 && k == float64(int(k)) {
			return int(k), true
		}
	case string:
		if n, err := strconv.Atoi(k); err == nil && n >= 0 {
			return n, true
		}
	}
	return 0, false
}

// cpSet returns cur with the value at path set to v (or deleted).
func cpSet(cur any, path []any, v any, del bool) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	switch c := cur.(type) {
	case map[string]any:
		key, ok := path[0].(string)
		if !ok {
			return nil, fmt.Errorf("key %v of an object is not a name", path[0])
		}
		if len(path) == 1 {
			if del {
				delete(c, key)
			} else {
				c[key] = v
			}
			return c, nil
		}
		child, ok := c[key]
		if !ok {
			return nil, fmt.Errorf("no %q in the chat", key)
		}
		next, err := cpSet(child, path[1:], v, del)
		if err != nil {
			return nil, err
		}
		c[key] = next
		return c, nil
	case []any:
		i, ok := cpIndex(path[0])
		if !ok || i > len(c) || i == len(c) && len(path) > 1 {
			return nil, fmt.Errorf("index %v out of a list of %d", path[0], len(c))
		}
		if len(path) == 1 {
			if i == len(c) {
				// JavaScript's arr[length] = v appends.
				if !del {
					c = append(c, v)
				}
				return c, nil
			}
			if del {
				c[i] = nil
			} else {
				c[i] = v
			}
			return c, nil
		}
		next, err := cpSet(c[i], path[1:], v, del)
		if err != nil {
			return nil, err
		}
		c[i] = next
		return c, nil
	}
	return nil, fmt.Errorf("path goes through a value that is neither object nor list")
}

// cpGet is the value at path, and whether it is there.
func cpGet(cur any, path []any) (any, bool) {
	for _, k := range path {
		switch c := cur.(type) {
		case map[string]any:
			key, _ := k.(string)
			v, ok := c[key]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := cpIndex(k)
			if !ok || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// cpPush appends items to the list at path, first cutting it to cut items
// when cut is set (a missing list is an empty one, as in the log's writer).
func cpPush(cur any, path []any, items []any, cut *int) (any, error) {
	v, _ := cpGet(cur, path)
	arr, ok := v.([]any)
	if v != nil && !ok {
		return nil, errors.New("pushes to a value that is not a list")
	}
	if cut != nil {
		if *cut < 0 {
			return nil, fmt.Errorf("cut to %d items", *cut)
		}
		if *cut < len(arr) {
			arr = arr[:*cut:*cut]
		}
	}
	arr = append(arr, items...)
	return cpSet(cur, path, arr, false)
}

// isCopilotLogHead says whether a file starts as a Copilot Chat log.
func isCopilotLogHead(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF"))
	return bytes.HasPrefix(head, []byte(`{"kind":0,"v":{`)) && bytes.Contains(head[:min(len(head), 4096)], []byte(`"sessionId"`))
}
