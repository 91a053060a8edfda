package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/ui"
)

func decodeJSON[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

func TestHostCheck(t *testing.T) {
	s, _ := newServer(t, fixtureMemory(t))
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:48123", http.StatusOK},
		{"localhost:48123", http.StatusOK},
		{"evil.example:48123", http.StatusMisdirectedRequest}, // DNS rebinding
		{"127.0.0.1:9999", http.StatusMisdirectedRequest},
		{"127.0.0.1", http.StatusMisdirectedRequest},
		{"0.0.0.0:48123", http.StatusMisdirectedRequest},
		{"", http.StatusMisdirectedRequest},
	} {
		w := request(s, "GET", "/api/facets", func(r *http.Request) { r.Host = tc.host })
		if w.Code != tc.want {
			t.Errorf("Host %q: status %d, want %d", tc.host, w.Code, tc.want)
		}
	}
}

func TestToken(t *testing.T) {
	s, _ := newServer(t, fixtureMemory(t))
	noCookie := func(target string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Del("Cookie") }
	}
	for _, tc := range []struct {
		name, target string
		mod          func(*http.Request)
		want         int
	}{
		{"no token", "/", noCookie("/"), http.StatusUnauthorized},
		{"wrong token in address", "/?token=nope", noCookie(""), http.StatusUnauthorized},
		{"token in an API address is not enough", "/api/facets?token=" + testToken, noCookie(""), http.StatusUnauthorized},
		{"wrong cookie", "/api/facets", func(r *http.Request) {
			r.Header.Del("Cookie")
			r.AddCookie(&http.Cookie{Name: "gitmem_48123", Value: "nope"})
		}, http.StatusUnauthorized},
		{"cookie of another port", "/api/facets", func(r *http.Request) {
			r.Header.Del("Cookie")
			r.AddCookie(&http.Cookie{Name: "gitmem_1", Value: testToken})
		}, http.StatusUnauthorized},
		{"assets need it too", "/static/app.js", noCookie(""), http.StatusUnauthorized},
		{"cookie", "/api/facets", nil, http.StatusOK},
		{"token in the first address", "/?token=" + testToken, noCookie(""), http.StatusSeeOther},
	} {
		w := request(s, "GET", tc.target, tc.mod)
		if w.Code != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, w.Code, tc.want, w.Body)
		}
	}
	// The first address sets the cookie and sends the browser to the bare
	// address, so the token leaves the address bar.
	w := request(s, "GET", "/?token="+testToken, noCookie(""))
	if loc := w.Header().Get("Location"); loc != "/" {
		t.Errorf("redirect to %q, want /", loc)
	}
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Name != "gitmem_48123" || c[0].Value != testToken || !c[0].HttpOnly ||
		c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/" {
		t.Errorf("cookie %+v: want gitmem_48123=<token>, HttpOnly, SameSite=Strict, Path=/", c)
	}
}

func TestOriginCheck(t *testing.T) {
	s, _ := newServer(t, fixtureMemory(t))
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusForbidden},
		{"http://evil.example", http.StatusForbidden},
		{"http://127.0.0.1:9999", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"http://127.0.0.1:48123", http.StatusNotImplemented}, // forget is not there yet
		{"http://localhost:48123", http.StatusNotImplemented},
	} {
		w := request(s, "POST", "/api/forget", func(r *http.Request) {
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
		})
		if w.Code != tc.want {
			t.Errorf("POST with Origin %q: status %d, want %d", tc.origin, w.Code, tc.want)
		}
	}
	// Another site's page may not read the API, even with the cookie.
	if w := request(s, "GET", "/api/log", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }); w.Code != http.StatusForbidden {
		t.Errorf("cross-site GET: %d, want 403", w.Code)
	}
	if w := request(s, "GET", "/api/log", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-origin") }); w.Code != http.StatusOK {
		t.Errorf("same-origin GET: %d, want 200", w.Code)
	}
	// Any method but GET and HEAD is a change, even on a read endpoint.
	if w := request(s, "PUT", "/api/log", nil); w.Code != http.StatusForbidden {
		t.Errorf("PUT without Origin: %d, want 403", w.Code)
	}
}

func TestForgetHook(t *testing.T) {
	s, _ := newServer(t, fixtureMemory(t))
	var got string
	s.Forget = func(ref string) error { got = ref; return nil }
	e := decodeJSON[ui.ExchangeAnswer](t, request(s, "GET", "/api/exchange?ref=ui-3", nil).Body.Bytes()).Entry
	post := func(body string) int {
		r := request(s, "POST", "/api/forget", func(r *http.Request) {
			r.Header.Set("Origin", "http://127.0.0.1:48123")
			r.Body = http.NoBody
			if body != "" {
				r.Body = ioNopCloser(body)
			}
		})
		return r.Code
	}
	if c := post(`{"ref":"ui-3","confirm":"wrong"}`); c != http.StatusBadRequest || got != "" {
		t.Errorf("bad confirmation: %d, forgot %q", c, got)
	}
	if c := post(`{"ref":"ui-3","confirm":"` + e.Short + `"}`); c != http.StatusOK || got != e.Commit {
		t.Errorf("confirmed: %d, forgot %q, want %s", c, got, e.Commit)
	}
}

// The page's forget is the real one: the exchange leaves main, its objects
// are purged, and the log and search no longer show it.
func TestForgetFromThePage(t *testing.T) {
	m := fixtureMemory(t)
	s, _ := newServer(t, m)
	s.Forget = ui.Forgetter(m)
	e := decodeJSON[ui.ExchangeAnswer](t, request(s, "GET", "/api/exchange?ref=ui-3", nil).Body.Bytes()).Entry
	r := request(s, "POST", "/api/forget", func(r *http.Request) {
		r.Header.Set("Origin", "http://127.0.0.1:48123")
		r.Body = ioNopCloser(`{"ref":"` + e.Commit + `","confirm":"` + e.Short + `"}`)
	})
	if r.Code != http.StatusOK {
		t.Fatalf("forget: %d %s", r.Code, r.Body)
	}
	lg := decodeJSON[ui.LogAnswer](t, request(s, "GET", "/api/log", nil).Body.Bytes())
	for _, x := range lg.Entries {
		if x.Exchange == "ui-3" {
			t.Fatal("the log still shows the forgotten exchange")
		}
	}
	if lg.Total != 11 {
		t.Fatalf("log total %d after forgetting one of 12", lg.Total)
	}
	if err := exec.Command("git", "--git-dir", m.Repo.Dir(), "cat-file", "-e", e.Commit).Run(); err == nil {
		t.Fatal("the forgotten commit is still in the repo")
	}
}

func TestSecurityHeaders(t *testing.T) {
	s, _ := newServer(t, fixtureMemory(t))
	for _, tc := range []struct{ method, target string }{
		{"GET", "/"}, {"GET", "/static/app.js"}, {"GET", "/api/search?q=invoice"}, {"GET", "/api/nope"},
		{"OPTIONS", "/api/log"}, {"GET", "/?token=" + testToken},
	} {
		w := request(s, tc.method, tc.target, func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") })
		h := w.Header()
		if h.Get("Content-Security-Policy") != ui.CSP {
			t.Errorf("%s %s: CSP %q", tc.method, tc.target, h.Get("Content-Security-Policy"))
		}
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: no nosniff", tc.method, tc.target)
		}
		for k := range h {
			if strings.HasPrefix(strings.ToLower(k), "access-control-") {
				t.Errorf("%s %s: CORS header %s", tc.method, tc.target, k)
			}
		}
	}
	if !strings.Contains(ui.CSP, "script-src 'self';") || strings.Contains(ui.CSP, "unsafe") {
		t.Errorf("CSP %q must allow only the page's own script", ui.CSP)
	}
	w := request(s, "GET", "/static/app.js", nil)
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("app.js served as %q", ct)
	}
	// The page loads nothing from elsewhere and runs no inline script.
	page := request(s, "GET", "/", nil).Body.String()
	for _, bad := range []string{"http://", "https://", "<script>", "onclick=", "style="} {
		if strings.Contains(page, bad) {
			t.Errorf("index.html holds %q", bad)
		}
	}
}

// TestEscaping: an exchange's markup reaches the page only as JSON-escaped
// text (\u003cscript\u003e), and decodes back to exactly what was stored.
func TestEscaping(t *testing.T) {
	s, _ := newServer(t, fixtureMemory(t))
	for _, target := range []string{"/api/exchange?ref=ui-8", "/api/search?q=" + url.QueryEscape("preview comment box script alert"),
		"/api/log?project=web"} {
		w := request(s, "GET", target, nil)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", target, w.Code, w.Body)
		}
		body := w.Body.String()
		for _, raw := range []string{"<script>", "<img", "<iframe", "</script>"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s: raw %q in the answer", target, raw)
			}
		}
		if !strings.Contains(body, `\u003cscript\u003ealert(1)\u003c/script\u003e`) {
			t.Errorf("%s: escaped script missing: %.300s", target, body)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", target, ct)
		}
	}
	ans := decodeJSON[ui.ExchangeAnswer](t, request(s, "GET", "/api/exchange?ref=ui-8", nil).Body.Bytes())
	want := "Why does the preview show <script>alert(1)</script> and <img src=x onerror=alert(1)> literally in the comment box?"
	if ans.Turns[0].Text != want {
		t.Errorf("decoded text %q, want %q", ans.Turns[0].Text, want)
	}
}

func TestAPI(t *testing.T) {
	s, _ := newServer(t, fixtureMemory(t))
	for _, tc := range []struct {
		target string
		want   int
	}{
		{"/api/search", http.StatusBadRequest},                          // empty query
		{"/api/search?q=invoice&mode=nope", http.StatusBadRequest},      // unknown mode
		{"/api/search?q=invoice&k=abc", http.StatusBadRequest},          // k not a number
		{"/api/search?q=invoice&since=whenever", http.StatusBadRequest}, // bad time
		{"/api/log?n=-1", http.StatusBadRequest},
		{"/api/exchange?ref=nope", http.StatusNotFound},
		{"/api/exchange", http.StatusNotFound},
		{"/api/exchange?ref=ab", http.StatusBadRequest}, // a commit prefix too short (ambiguous prefixes are the same class)
		{"/api/timeline?bucket=month", http.StatusBadRequest},
		{"/api/palace?max=0", http.StatusBadRequest},
		{"/api/nope", http.StatusNotFound},
		{"/static/nope.js", http.StatusNotFound},
	} {
		w := request(s, "GET", tc.target, nil)
		if w.Code != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.target, w.Code, tc.want, w.Body)
		}
		if tc.want == http.StatusBadRequest {
			if e := decodeJSON[map[string]string](t, w.Body.Bytes()); e["error"] == "" || strings.Contains(e["error"], "\n") {
				t.Errorf("%s: error message %q, want one line", tc.target, e["error"])
			}
		}
	}

	get := func(target string) []byte {
		t.Helper()
		w := request(s, "GET", target, nil)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", target, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}

	sr := decodeJSON[ui.SearchAnswer](t, get("/api/search?q="+url.QueryEscape("websocket heartbeat reconnect backoff")))
	if len(sr.Results) == 0 || sr.Results[0].Exchange != "ui-5" {
		t.Fatalf("search: want ui-5 first, got %+v", sr.Results)
	}
	if r := sr.Results[0]; r.Short == "" || r.Project != "api" || len(r.Rooms) == 0 {
		t.Errorf("search result lacks card fields: %+v", r)
	}
	// The filters are search's: the project filter drops every api hit.
	sr = decodeJSON[ui.SearchAnswer](t, get("/api/search?q=websocket+heartbeat&project=billing"))
	for _, r := range sr.Results {
		if r.Project != "billing" {
			t.Errorf("project filter let %s (%s) through", r.Exchange, r.Project)
		}
	}

	lg := decodeJSON[ui.LogAnswer](t, get("/api/log"))
	if lg.Total != 12 || len(lg.Entries) != 12 || lg.Entries[0].Exchange != "ui-12" {
		t.Errorf("log: total %d, %d entries, first %+v", lg.Total, len(lg.Entries), lg.Entries[0])
	}
	lg = decodeJSON[ui.LogAnswer](t, get("/api/log?n=2&agent=codex&since=2026-03-03&until=2026-03-03T23:59:59Z"))
	if lg.Total != 3 || len(lg.Entries) != 2 {
		t.Errorf("filtered log: total %d, %d entries; want 3, 2", lg.Total, len(lg.Entries))
	}
	lg = decodeJSON[ui.LogAnswer](t, get("/api/log?file=client.go"))
	if lg.Total != 1 || lg.Entries[0].Exchange != "ui-5" {
		t.Errorf("file filter: %+v", lg)
	}

	ex := decodeJSON[ui.ExchangeAnswer](t, get("/api/exchange?ref=ui-2"))
	if ex.Entry.Exchange != "ui-2" || len(ex.Turns) != 3 || ex.Turns[1].Role != "tool" || ex.Turns[1].Name != "Bash" {
		t.Fatalf("exchange: %+v", ex)
	}
	if !strings.Contains(ex.Turns[1].Input, `"command": "go test ./billing/invoice/ -v"`) {
		t.Errorf("tool input not indented JSON: %q", ex.Turns[1].Input)
	}
	if ex.Show != "git mem show "+ex.Entry.Short+" --verbatim" {
		t.Errorf("show command %q", ex.Show)
	}
	var sess []string
	for _, e := range ex.Session {
		sess = append(sess, e.Exchange)
	}
	if !reflect.DeepEqual(sess, []string{"ui-1", "ui-2", "ui-3", "ui-4"}) {
		t.Errorf("session %v, want ui-1…ui-4 oldest first", sess)
	}
	prev := decodeJSON[ui.ExchangeAnswer](t, get("/api/exchange?ref="+ex.Prev)).Entry.Exchange
	next := decodeJSON[ui.ExchangeAnswer](t, get("/api/exchange?ref="+ex.Next)).Entry.Exchange
	if prev != "ui-1" || next != "ui-3" {
		t.Errorf("neighbours %s, %s; want ui-1, ui-3", prev, next)
	}
	// By the short commit id too, as `git mem show`.
	if e := decodeJSON[ui.ExchangeAnswer](t, get("/api/exchange?ref="+ex.Entry.Short)).Entry; e.Exchange != "ui-2" {
		t.Errorf("by short id: %s", e.Exchange)
	}

	tl := decodeJSON[ui.TimelineAnswer](t, get("/api/timeline"))
	var days []string
	var counts []int
	for _, b := range tl.Buckets {
		days = append(days, b.Start.Format("2006-01-02"))
		counts = append(counts, b.Count)
	}
	if tl.Bucket != "day" || !reflect.DeepEqual(days, []string{"2026-03-02", "2026-03-03", "2026-03-05", "2026-03-09"}) ||
		!reflect.DeepEqual(counts, []int{4, 3, 2, 3}) {
		t.Errorf("timeline: %s %v %v", tl.Bucket, days, counts)
	}
	if b := tl.Buckets[0]; b.Projects["billing"] != 4 || b.Agents["claude-code"] != 4 || !b.End.Equal(b.Start.AddDate(0, 0, 1).Add(-1)) {
		t.Errorf("first day: %+v", b)
	}
	tl = decodeJSON[ui.TimelineAnswer](t, get("/api/timeline?bucket=week"))
	if len(tl.Buckets) != 2 || tl.Buckets[0].Count != 9 || tl.Buckets[0].Start.Weekday().String() != "Monday" {
		t.Errorf("weeks: %+v", tl.Buckets)
	}

	p := decodeJSON[memory.Palace](t, get("/api/palace"))
	if len(p.Rooms) == 0 || p.TotalRooms != len(p.Rooms) {
		t.Fatalf("palace: %+v", p)
	}
	for i := 1; i < len(p.Rooms); i++ {
		if p.Rooms[i].Count > p.Rooms[i-1].Count {
			t.Errorf("rooms not busiest first: %+v", p.Rooms)
		}
	}
	if p2 := decodeJSON[memory.Palace](t, get("/api/palace?max=2")); len(p2.Rooms) != 2 || p2.TotalRooms != p.TotalRooms {
		t.Errorf("palace max=2: %d rooms of %d", len(p2.Rooms), p2.TotalRooms)
	}

	fl := decodeJSON[ui.FilesAnswer](t, get("/api/files"))
	if fl.Total == 0 || fl.Files[0].File != "src/billing/export.ts" || fl.Files[0].Count != 2 {
		t.Errorf("files: %+v", fl)
	}

	st := decodeJSON[ui.StatsAnswer](t, get("/api/stats"))
	if st.Stats.Exchanges != 12 || st.Stats.VerbatimTokens <= st.Stats.DistilledTokens || st.Status == nil || st.Status.Failed == nil {
		t.Errorf("stats: %+v %+v", st.Stats, st.Status)
	}

	fc := decodeJSON[ui.FacetsAnswer](t, get("/api/facets"))
	if fc.Total != 12 || fc.Projects["billing"] != 5 || fc.Agents["codex"] != 5 || len(fc.Modes) == 0 || fc.Forget {
		t.Errorf("facets: %+v", fc)
	}
}

// TestRoomLinks: two rooms of one exchange are linked, as often as they
// share exchanges.
func TestRoomLinks(t *testing.T) {
	s, _ := newServer(t, fixtureMemory(t))
	p := decodeJSON[memory.Palace](t, request(s, "GET", "/api/palace", nil).Body.Bytes())
	lg := decodeJSON[ui.LogAnswer](t, request(s, "GET", "/api/log?n=500", nil).Body.Bytes())
	want := map[[2]string]int{}
	for _, e := range lg.Entries {
		for i, a := range e.Rooms {
			for _, b := range e.Rooms[i+1:] {
				if b < a {
					a, b = b, a
				}
				want[[2]string{a, b}]++
			}
		}
	}
	got := map[[2]string]int{}
	for _, l := range p.Links {
		if l.A >= l.B {
			t.Errorf("link %s–%s not ordered", l.A, l.B)
		}
		got[[2]string{l.A, l.B}] = l.Count
	}
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("links %v, want %v", got, want)
	}
}

// TestNoticesNewCommits: a commit made by another process (a hook, add,
// sync) shows on the next request, in the log and in search, without a
// restart; the view reopens its index at the new head.
func TestNoticesNewCommits(t *testing.T) {
	m := fixtureMemory(t)
	s, v := newServer(t, m)
	if r := request(s, "GET", "/api/search?q=invoice", nil); r.Code != 200 {
		t.Fatal(r.Body)
	}
	// The aggregates are kept per head: asked once before the commit.
	if fc := decodeJSON[ui.FacetsAnswer](t, request(s, "GET", "/api/facets", nil).Body.Bytes()); fc.Total != 12 {
		t.Fatalf("facets before: %d", fc.Total)
	}
	request(s, "GET", "/api/timeline", nil)
	if st := decodeJSON[ui.StatsAnswer](t, request(s, "GET", "/api/stats", nil).Body.Bytes()); st.Stats.Exchanges != 12 {
		t.Fatalf("stats before: %d", st.Stats.Exchanges)
	}
	if !v.IndexOpen() {
		t.Error("the view does not keep the index open after a search")
	}
	other, err := memory.Open(m.Repo.Dir())
	if err != nil {
		t.Fatal(err)
	}
	ex := &exchange.Exchange{ID: "ui-new", Session: "s-new", Time: "2026-03-10T10:00:00Z", Project: "api", Agent: "codex",
		Turns: []exchange.Turn{{Role: "user", Text: "Rotate the zebrafish signing key."}, {Role: "assistant", Text: "Rotated the zebrafish key."}}}
	if _, err := other.Add(context.Background(), []*exchange.Exchange{ex}, memory.AddOptions{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	lg := decodeJSON[ui.LogAnswer](t, request(s, "GET", "/api/log", nil).Body.Bytes())
	if lg.Total != 13 || lg.Entries[0].Exchange != "ui-new" {
		t.Errorf("log after a new commit: total %d, first %s", lg.Total, lg.Entries[0].Exchange)
	}
	if fc := decodeJSON[ui.FacetsAnswer](t, request(s, "GET", "/api/facets", nil).Body.Bytes()); fc.Total != 13 || fc.Head != lg.Entries[0].Commit {
		t.Errorf("facets after a new commit: total %d, head %s", fc.Total, fc.Head)
	}
	if st := decodeJSON[ui.StatsAnswer](t, request(s, "GET", "/api/stats", nil).Body.Bytes()); st.Stats.Exchanges != 13 || st.Status.Head != fcHead(t, s) {
		t.Errorf("stats after a new commit: %d exchanges, status head %s", st.Stats.Exchanges, st.Status.Head)
	}
	tl := decodeJSON[ui.TimelineAnswer](t, request(s, "GET", "/api/timeline", nil).Body.Bytes())
	if last := tl.Buckets[len(tl.Buckets)-1]; len(tl.Buckets) != 5 || last.Start.Format("2006-01-02") != "2026-03-10" || last.Count != 1 {
		t.Errorf("timeline after a new commit: %+v", tl.Buckets)
	}
	sr := decodeJSON[ui.SearchAnswer](t, request(s, "GET", "/api/search?q=zebrafish", nil).Body.Bytes())
	if len(sr.Results) == 0 || sr.Results[0].Exchange != "ui-new" {
		t.Errorf("search after a new commit: %+v", sr.Results)
	}
	if !v.IndexOpen() {
		t.Error("the view did not reopen the index after catching up")
	}
	// Closing lets a writer in: the view held no writer lock.
	v.Close()
	if v.IndexOpen() {
		t.Error("Close left the index open")
	}
	if _, err := other.UpdateIndex(context.Background()); err != nil {
		t.Errorf("a writer after the view closed: %v", err)
	}
}

func TestBrowserCommand(t *testing.T) {
	const u = "http://127.0.0.1:1/?token=t"
	for _, tc := range []struct {
		env  string
		want [][]string
	}{
		{"", [][]string{{"xdg-open", u}}},
		{"firefox", [][]string{{"firefox", u}, {"xdg-open", u}}},
		{"chromium --new-window %s:lynx", [][]string{{"chromium", "--new-window", u}, {"lynx", u}, {"xdg-open", u}}},
		{" : ", [][]string{{"xdg-open", u}}},
	} {
		if got := ui.BrowserCommands(tc.env, u); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("BROWSER=%q: %v, want %v", tc.env, got, tc.want)
		}
	}
}

// TestRun: Run binds 127.0.0.1, hands over the address with the token,
// serves the page through it and stops when its context ends.
func TestRun(t *testing.T) {
	m := fixtureMemory(t)
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ui.Run(ctx, m, ui.Options{NoBrowser: true, Ready: func(u string) { urls <- u }}, io.Discard)
	}()
	var u string
	select {
	case u = <-urls:
	case err := <-done:
		t.Fatal(err)
	}
	pu, err := url.Parse(u)
	if err != nil || pu.Hostname() != "127.0.0.1" || pu.Port() == "" || len(pu.Query().Get("token")) != 64 {
		t.Fatalf("address %q: want http://127.0.0.1:<port>/?token=<64 hex>", u)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.Get(u) // the redirect drops the token, the cookie carries it
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Request.URL.RawQuery != "" {
		t.Errorf("first page: %d at %s", res.StatusCode, res.Request.URL)
	}
	res, err = c.Get("http://" + pu.Host + "/api/log")
	if err != nil {
		t.Fatal(err)
	}
	lg := decodeJSON[ui.LogAnswer](t, mustRead(t, res))
	if lg.Total != 12 {
		t.Errorf("log through the cookie: total %d", lg.Total)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its context ended: %v", err)
	}
}

func mustRead(t *testing.T, res *http.Response) []byte {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fcHead(t *testing.T, s http.Handler) string {
	return decodeJSON[ui.FacetsAnswer](t, request(s, "GET", "/api/facets", nil).Body.Bytes()).Head
}
