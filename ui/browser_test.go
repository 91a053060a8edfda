package ui_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/gitmem/git-mem/memory"
	"github.com/gitmem/git-mem/ui"
)

// chromium finds Debian's Chromium (nothing here downloads a browser). With
// CI=true a missing browser fails the test: CI installs it (.ci/run).
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("GIT_MEM_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium at /usr/bin/chromium: the browser tests need it on CI (apt-get install chromium)")
	}
	t.Skip("no Chromium at /usr/bin/chromium: browser tests skipped (apt-get install chromium, or set GIT_MEM_CHROMIUM)")
	return ""
}

// browserPage serves a fixture memory on a real loopback port and opens a
// headless Chromium tab on it. It records every JavaScript dialog (and
// dismisses it), uncaught exception and console error (a CSP violation is
// one) so the test can require that none happened.
type browserPage struct {
	ctx  context.Context
	view *memory.View
	srv  *ui.Server

	mu       sync.Mutex
	dialogs  []string
	problems []string
}

func openBrowser(t *testing.T) *browserPage {
	exe := chromium(t)
	m := fixtureMemory(t)
	ln, port, err := ui.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	v := memory.NewView(m)
	v.Loc = time.UTC
	srv := ui.New(v, port, testToken)
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close(); v.Close() })

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", exe, err)
	}
	p := &browserPage{ctx: ctx, view: v, srv: srv}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.dialogs = append(p.dialogs, ev.Message)
			p.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			p.problem("exception: " + ev.ExceptionDetails.Text + " " + describe(ev.ExceptionDetails))
		}
	}()
	entries := chromedp.Events(ctx, log.EntryAdded)
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if ev.Entry.Level == log.EntryLevelError {
				p.problem("console: " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	}()
	if _, err := chromedp.Call(ctx, log.Enable, struct{}{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL()), chromedp.WaitVisible("#q"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#results .card").length > 0`)); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	return p
}

func describe(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

func (p *browserPage) problem(s string) {
	p.mu.Lock()
	p.problems = append(p.problems, s)
	p.mu.Unlock()
}

func (p *browserPage) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, p *browserPage, js string) T {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// poll waits for a JavaScript condition, failing with what shows instead.
func poll(t *testing.T, p *browserPage, js, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js)); err != nil {
		main, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector('#main').innerText.slice(0, 400)`))
		t.Fatalf("%s: %v; the page shows: %q", what, err, main)
	}
}

// screenshot saves the view as PNG in $GIT_MEM_UI_SHOTS (docs/ui when the
// README's pictures are remade), else in the test's temp folder.
func (p *browserPage) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("GIT_MEM_UI_SHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	b, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func short(t *testing.T, v *memory.View, id string) string {
	t.Helper()
	e, _, err := v.Show(id)
	if err != nil {
		t.Fatal(err)
	}
	return e.Short
}

// TestBrowser drives the page in Chromium over the fixture memory: search as
// you type, open with the keyboard, expand a tool call, the hostile exchange
// as text, the timeline's bars, the palace's rooms, files and stats.
func TestBrowser(t *testing.T) {
	p := openBrowser(t)
	v := p.view

	// The token left the address bar for the cookie.
	if loc, _ := chromedp.Run(p.ctx, chromedp.Location()); strings.Contains(loc, "token") {
		t.Errorf("the token stays in the address: %s", loc)
	}

	// Search as you type; the expected card comes first.
	want := short(t, v, "ui-5")
	p.do(t, "press /", chromedp.KeyEvent("/"))
	if f := eval[string](t, p, `document.activeElement.id`); f != "q" {
		t.Errorf("/ focused %q, want the search box", f)
	}
	// The protocol sends the key's character apart from its keydown, so the
	// page's preventDefault cannot stop it as a person's browser does.
	p.do(t, "type a query", chromedp.Evaluate[chromedp.Void](`document.querySelector('#q').value = ''`),
		chromedp.SendKeys("#q", "websocket heartbeat reconnect"))
	poll(t, p, `(document.querySelector('#summary')||{}).textContent?.includes('results') && document.querySelector('#results .card')?.dataset.commit === "`+want+`"`,
		"the websocket exchange first")
	if h := eval[string](t, p, `location.hash`); !strings.Contains(h, "q=websocket") {
		t.Errorf("the address does not follow the query: %s", h)
	}
	p.screenshot(t, "search")

	// Arrows move, Enter opens.
	p.do(t, "move down", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowUp))
	if sel := eval[string](t, p, `[...document.querySelectorAll('#results .card.sel')].map(c => c.dataset.commit).join()`); sel != want {
		t.Errorf("after ↓ ↓ ↑ the selection is %q, want the first card %s", sel, want)
	}
	p.do(t, "open", chromedp.KeyEvent(kb.Enter))
	poll(t, p, `location.hash === "#/x/`+want+`" && document.querySelector('.exchange') !== null`, "Enter opens the first card")
	if cmd := eval[string](t, p, `document.querySelector('#show-cmd').textContent`); cmd != "git mem show "+want+" --verbatim" {
		t.Errorf("show command %q", cmd)
	}

	// A tool call: collapsed, then expanded by a click.
	if open := eval[bool](t, p, `document.querySelector('details.tool').open`); open {
		t.Error("tool calls start expanded")
	}
	p.do(t, "expand a tool call", chromedp.Click("details.tool summary"))
	poll(t, p, `document.querySelector('details.tool').open && document.querySelector('details.tool .tool-output').offsetHeight > 0`, "the tool call expands")
	if out := eval[string](t, p, `document.querySelector('details.tool .tool-output').textContent`); !strings.Contains(out, "func (c *Client) loop()") {
		t.Errorf("tool output %q", out)
	}

	// The long output and the code block of the billing session.
	p.do(t, "open ui-2", chromedp.Navigate(p.srv.URL()[:strings.Index(p.srv.URL(), "?")]+"#/x/"+short(t, v, "ui-2")))
	poll(t, p, `document.querySelectorAll('.turns .turn').length === 3`, "ui-2's three turns")
	p.do(t, "expand the test run", chromedp.Click("details.tool summary"))
	if n := eval[int](t, p, `document.querySelector('details.tool .tool-output').textContent.split('\n').length`); n != 121 {
		t.Errorf("the long output has %d lines, want 121", n)
	}
	// Neighbours one click away.
	p.do(t, "earlier", chromedp.Click("#prev"))
	poll(t, p, `location.hash === "#/x/`+short(t, v, "ui-1")+`"`, "← earlier goes to ui-1")
	poll(t, p, `document.querySelector('.turns pre.code code')?.textContent.includes('DEFAULT_CURRENCY')`, "the code block as <pre>")
	p.do(t, "expand the edit", chromedp.Click("details.tool:nth-of-type(2) summary"))
	poll(t, p, `document.querySelectorAll('details.tool[open]').length === 1`, "one tool call open")
	p.screenshot(t, "exchange")

	// Hostile text shows as text: no element made from it, no dialog.
	hostile := short(t, v, "ui-8")
	p.do(t, "open the hostile exchange", chromedp.Evaluate[chromedp.Void](`location.hash = "#/x/`+hostile+`"`))
	poll(t, p, `document.querySelectorAll('.turns .turn').length === 3`, "the hostile exchange")
	p.do(t, "expand", chromedp.Click("details.tool summary"))
	if n := eval[int](t, p, `document.querySelectorAll('#main script, #main img, #main iframe, #main [onerror]').length`); n != 0 {
		t.Errorf("%d elements were made from the exchange's text", n)
	}
	txt := eval[string](t, p, `document.querySelector('#main').textContent`)
	for _, s := range []string{"<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<iframe src=javascript:alert(2)></iframe>"} {
		if !strings.Contains(txt, s) {
			t.Errorf("%q does not show as text", s)
		}
	}
	p.do(t, "search for it", chromedp.Evaluate[chromedp.Void](`location.hash = "#/search?q=comment+preview+script"`))
	poll(t, p, `document.querySelector('#results .card')?.dataset.commit === "`+hostile+`"`, "the hostile card")
	if n := eval[int](t, p, `document.querySelectorAll('#main script, #main img, #main iframe').length`); n != 0 {
		t.Errorf("%d elements made from a card", n)
	}

	// Timeline: one bar per day with exchanges, each with its count.
	days, err := v.Timeline(memory.Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	p.do(t, "timeline", chromedp.Click(`#nav a[data-view="timeline"]`))
	poll(t, p, `document.querySelectorAll('svg.timeline g.bar').length > 0`, "the timeline's bars")
	bars := eval[[]string](t, p, `[...document.querySelectorAll('svg.timeline g.bar')].map(g => g.dataset.start + '=' + g.dataset.count)`)
	var wantBars []string
	for _, b := range days {
		wantBars = append(wantBars, b.Start.Format("2006-01-02")+"="+strconv.Itoa(b.Count))
	}
	if strings.Join(bars, " ") != strings.Join(wantBars, " ") {
		t.Errorf("bars %v, want %v", bars, wantBars)
	}
	p.do(t, "click the first bar", chromedp.Click(`svg.timeline g.bar rect`))
	poll(t, p, `document.querySelectorAll('#bar-list .card').length === `+strconv.Itoa(days[0].Count), "the first day's exchanges listed")
	p.screenshot(t, "timeline")
	p.do(t, "weeks", chromedp.Click(`.controls a[href*="week"]`))
	poll(t, p, `location.hash.includes('week') && document.querySelectorAll('svg.timeline g.bar').length === 2`, "two weeks")

	// Palace: every room drawn, a click lists its exchanges.
	pal, err := v.Palace(memory.Filter{}, 60)
	if err != nil {
		t.Fatal(err)
	}
	p.do(t, "palace", chromedp.Click(`#nav a[data-view="palace"]`))
	poll(t, p, `document.querySelectorAll('svg.palace g.room').length > 0`, "the palace's rooms")
	rooms := eval[[]string](t, p, `[...document.querySelectorAll('svg.palace g.room')].map(g => g.dataset.room)`)
	var wantRooms []string
	for _, r := range pal.Rooms {
		wantRooms = append(wantRooms, r.Room)
	}
	sort.Strings(rooms)
	sort.Strings(wantRooms)
	if strings.Join(rooms, " ") != strings.Join(wantRooms, " ") {
		t.Errorf("rooms %v, want %v", rooms, wantRooms)
	}
	if n := eval[int](t, p, `document.querySelectorAll('svg.palace line.link').length`); n != len(pal.Links) {
		t.Errorf("%d links drawn, want %d", n, len(pal.Links))
	}
	top := pal.Rooms[0]
	p.do(t, "open the busiest room", chromedp.Click(`svg.palace g.room[data-room="`+top.Room+`"] circle`))
	poll(t, p, `document.querySelectorAll('#room-list .card').length === `+strconv.Itoa(top.Count), "the room's exchanges listed")
	p.screenshot(t, "palace")

	// Files, then stats.
	p.do(t, "files", chromedp.Click(`#nav a[data-view="files"]`))
	poll(t, p, `document.querySelector('tr.file td.path')?.textContent === 'src/billing/export.ts'`, "the most touched file first")
	p.do(t, "open a file", chromedp.Click(`tr.file td.path`))
	poll(t, p, `document.querySelectorAll('#file-list .card').length === 2`, "the file's two exchanges")
	p.screenshot(t, "files")
	p.do(t, "stats", chromedp.Click(`#nav a[data-view="stats"]`))
	poll(t, p, `document.querySelector('#index-state') !== null`, "the stats")
	if s := eval[string](t, p, `document.querySelector('.bigs').textContent`); !strings.Contains(s, "12exchanges") {
		t.Errorf("stats show %q", s)
	}
	p.screenshot(t, "stats")

	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.dialogs) > 0 {
		t.Errorf("dialogs opened: %q", p.dialogs)
	}
	if len(p.problems) > 0 {
		t.Errorf("the page reported: %q", p.problems)
	}
}
