package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/search"
)

// Limits of what one answer carries: the page stays fast at 100k exchanges
// and a 64 MiB tool output does not freeze the browser (the page shows the
// `git mem show` command for the whole of it).
const (
	defaultK      = 20
	maxK          = 100
	defaultLog    = 50
	maxLog        = 500
	maxTurnBytes  = 256 << 10
	maxSession    = 200
	defaultRooms  = 60
	defaultFiles  = 200
	maxListParams = 50
)

// httpError answers {"error": msg} with the status.
func httpError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// writeJSON keeps encoding/json's HTML escaping on (< > & as \u003c…): an
// answer read as HTML by mistake still holds no markup.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"encode the answer"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail maps memory's errors to statuses: a query to change is 400, an
// exchange not found 404, an index another process is writing 503 (the
// page says to try again), anything else 500.
func fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, memory.ErrBadQuery), errors.Is(err, errBadParam),
		errors.Is(err, memory.ErrInvalid): // a too short or ambiguous commit prefix
		httpError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, memory.ErrNoSuchExchange):
		httpError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, search.ErrBusy):
		httpError(w, http.StatusServiceUnavailable, err.Error())
	default:
		httpError(w, http.StatusInternalServerError, err.Error())
	}
}

var errBadParam = errors.New("bad parameter")

// filterOf reads the FILTERS of `git mem search` from the query string:
// room and file repeat, since and until take what --since takes.
func filterOf(q url.Values) (memory.Filter, error) {
	f := memory.Filter{Rooms: nonEmpty(q["room"]), Files: nonEmpty(q["file"]),
		Project: q.Get("project"), Agent: q.Get("agent"), Session: q.Get("session")}
	if len(f.Rooms) > maxListParams || len(f.Files) > maxListParams {
		return f, fmt.Errorf("%w: too many room or file filters (at most %d)", errBadParam, maxListParams)
	}
	var err error
	if s := q.Get("since"); s != "" {
		if f.Since, err = memory.ParseTime(s, false); err != nil {
			return f, fmt.Errorf("%w: since: %v", errBadParam, err)
		}
	}
	if s := q.Get("until"); s != "" {
		if f.Until, err = memory.ParseTime(s, true); err != nil {
			return f, fmt.Errorf("%w: until: %v", errBadParam, err)
		}
	}
	return f, nil
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// intParam reads a positive integer parameter, def when absent, capped.
func intParam(q url.Values, name string, def, limit int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: %s must be a positive number", errBadParam, name)
	}
	return min(n, limit), nil
}

// SearchAnswer is GET /api/search.
type SearchAnswer struct {
	Results []memory.Result `json:"results"`
	Note    string          `json:"note,omitempty"`
	TookMS  float64         `json:"took_ms"`
}

func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		fail(w, err)
		return
	}
	k, err := intParam(q, "k", defaultK, maxK)
	if err != nil {
		fail(w, err)
		return
	}
	start := time.Now()
	// Not the request's context: the page drops a request at each key, and a
	// catch-up of the index cut short would be redone at the next one.
	ctx := context.WithoutCancel(r.Context())
	res, note, err := s.view.Search(ctx, memory.SearchQuery{Text: q.Get("q"), K: k, Mode: q.Get("mode"), Filter: f})
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, SearchAnswer{Results: res, Note: note,
		TookMS: float64(time.Since(start).Microseconds()) / 1000})
}

// LogAnswer is GET /api/log: the newest matching cards and how many match.
type LogAnswer struct {
	Entries []*memory.Entry `json:"entries"`
	Total   int             `json:"total"`
}

func (s *Server) apiLog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		fail(w, err)
		return
	}
	n, err := intParam(q, "n", defaultLog, maxLog)
	if err != nil {
		fail(w, err)
		return
	}
	list, total, err := s.view.Log(f, n)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, LogAnswer{Entries: list, Total: total})
}

// Turn is one turn as the page draws it: the tool's input as indented
// JSON, its text cut at maxTurnBytes (Truncated then says how long it was).
type Turn struct {
	Role      string `json:"role"`
	Name      string `json:"name,omitempty"`
	Speaker   string `json:"speaker,omitempty"`
	Input     string `json:"input,omitempty"`
	Text      string `json:"text"`
	Truncated int    `json:"truncated,omitempty"`
}

// ExchangeAnswer is GET /api/exchange?ref=.
type ExchangeAnswer struct {
	Entry   *memory.Entry   `json:"entry"`
	Turns   []Turn          `json:"turns"`
	Show    string          `json:"show"` // the command that prints it all
	Session []*memory.Entry `json:"session"`
	Prev    string          `json:"prev,omitempty"`
	Next    string          `json:"next,omitempty"`
}

func (s *Server) apiExchange(w http.ResponseWriter, r *http.Request) {
	e, blob, err := s.view.Show(r.URL.Query().Get("ref"))
	if err != nil {
		fail(w, err)
		return
	}
	ex, err := exchange.Parse(blob)
	if err != nil {
		fail(w, err)
		return
	}
	out := ExchangeAnswer{Entry: e, Turns: make([]Turn, 0, len(ex.Turns)),
		Show: "git mem show " + e.Short + " --verbatim", Session: []*memory.Entry{}}
	for _, t := range ex.Turns {
		out.Turns = append(out.Turns, turnOf(t))
	}
	sess, err := s.view.Session(e.Session)
	if err != nil {
		fail(w, err)
		return
	}
	at := -1
	for i, x := range sess {
		if x.Commit == e.Commit {
			at = i
			break
		}
	}
	if at >= 0 {
		if at > 0 {
			out.Prev = sess[at-1].Short
		}
		if at+1 < len(sess) {
			out.Next = sess[at+1].Short
		}
		lo := max(0, at-maxSession/2)
		hi := min(len(sess), lo+maxSession)
		out.Session = sess[lo:hi]
	}
	writeJSON(w, http.StatusOK, out)
}

func turnOf(t exchange.Turn) Turn {
	out := Turn{Role: t.Role, Name: t.Name, Text: t.Text}
	if sp, ok := t.Extra["speaker"].(string); ok {
		out.Speaker = sp
	}
	if t.Input != nil {
		c, err := exchange.Canonical(t.Input)
		if err == nil {
			var ind bytes.Buffer
			if json.Indent(&ind, c, "", "  ") == nil {
				c = ind.Bytes()
			}
			out.Input = string(c)
		}
	}
	if len(out.Text) > maxTurnBytes {
		out.Truncated = len(out.Text)
		cut := maxTurnBytes
		for cut > 0 && !utf8Start(out.Text[cut]) {
			cut--
		}
		out.Text = out.Text[:cut]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// TimelineAnswer is GET /api/timeline?bucket=day|week.
type TimelineAnswer struct {
	Bucket  string          `json:"bucket"`
	Buckets []memory.Bucket `json:"buckets"`
}

func (s *Server) apiTimeline(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		fail(w, err)
		return
	}
	bucket := q.Get("bucket")
	switch bucket {
	case "":
		bucket = "day"
	case "day", "week":
	default:
		fail(w, fmt.Errorf("%w: bucket must be day or week", errBadParam))
		return
	}
	bs, err := s.view.Timeline(f, bucket == "week")
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, TimelineAnswer{Bucket: bucket, Buckets: bs})
}

func (s *Server) apiPalace(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		fail(w, err)
		return
	}
	n, err := intParam(q, "max", defaultRooms, 500)
	if err != nil {
		fail(w, err)
		return
	}
	p, err := s.view.Palace(f, n)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// FilesAnswer is GET /api/files.
type FilesAnswer struct {
	Files []memory.FileCount `json:"files"`
	Total int                `json:"total"`
}

func (s *Server) apiFiles(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		fail(w, err)
		return
	}
	n, err := intParam(q, "n", defaultFiles, 5000)
	if err != nil {
		fail(w, err)
		return
	}
	files, total, err := s.view.Files(f, n)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, FilesAnswer{Files: files, Total: total})
}

// StatsAnswer is GET /api/stats: `git mem stats` and `git mem status`.
type StatsAnswer struct {
	Stats     *memory.Stats  `json:"stats"`
	Status    *memory.Status `json:"status"`
	IndexOpen bool           `json:"index_open"` // the page holds the index now
}

func (s *Server) apiStats(w http.ResponseWriter, r *http.Request) {
	m := s.view.Memory()
	st, err := s.view.Stats()
	if err != nil {
		fail(w, err)
		return
	}
	status, err := m.Status()
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, StatsAnswer{Stats: st, Status: status, IndexOpen: s.view.IndexOpen()})
}

// FacetsAnswer is GET /api/facets: what the filters and the page offer.
type FacetsAnswer struct {
	*memory.Facets
	Modes       []string `json:"modes"`
	DefaultMode string   `json:"default_mode"`
	Forget      bool     `json:"forget"` // POST /api/forget works
}

func (s *Server) apiFacets(w http.ResponseWriter, r *http.Request) {
	fc, err := s.view.Facets()
	if err != nil {
		fail(w, err)
		return
	}
	mode := s.view.Memory().Config.Search.Mode
	if mode == "" {
		mode = search.DefaultMode
	}
	writeJSON(w, http.StatusOK, FacetsAnswer{Facets: fc, Modes: search.Modes, DefaultMode: mode, Forget: s.Forget != nil})
}

// apiForget is POST /api/forget {"ref": "<commit>", "confirm": "<short>"}.
//
// Run sets Server.Forget to memory's forget; the page's "Forget…" button
// asks for the same confirmation as the command (the short commit id). A
// server without it answers 501 and the page shows no button.
func (s *Server) apiForget(w http.ResponseWriter, r *http.Request) {
	if s.Forget == nil {
		httpError(w, http.StatusNotImplemented, "forgetting from the page is not available yet")
		return
	}
	var in struct {
		Ref     string `json:"ref"`
		Confirm string `json:"confirm"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&in); err != nil {
		httpError(w, http.StatusBadRequest, "want {\"ref\": …, \"confirm\": …}")
		return
	}
	e, _, err := s.view.Show(in.Ref)
	if err != nil {
		fail(w, err)
		return
	}
	if in.Confirm != e.Short {
		httpError(w, http.StatusBadRequest, "confirm with the exchange's short commit id "+e.Short)
		return
	}
	if err := s.Forget(e.Commit); err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"forgotten": e.Commit})
}
