// Package ui is `git mem ui`: a local web page over the memory, served on
// loopback only. It reads through the same memory APIs as the CLI (a
// long-lived memory.View); its assets are embedded, it loads nothing from
// the network, and every request must carry the random token.
package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"

	"github.com/gitmem/git-mem/memory"
)

//go:embed assets
var assetFS embed.FS

// CSP allows only the page's own script, style and API: no inline script,
// no eval, no plugin, no frame, no form posting anywhere.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Server serves one memory to one person's browser.
type Server struct {
	view  *memory.View
	token string
	port  int
	mux   *http.ServeMux
	// Forget, when set, is called by POST /api/forget; the forget command
	// does not exist yet, so it is nil and the endpoint answers 501.
	Forget func(ref string) error
}

// NewToken returns 32 random bytes in hex.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make the page's token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// New serves v on the given loopback port with the given token.
func New(v *memory.View, port int, token string) *Server {
	s := &Server{view: v, token: token, port: port, mux: http.NewServeMux()}
	s.routes()
	return s
}

// Listen binds 127.0.0.1 at port (0 = a free one). No other address can be
// asked for: the page serves a person's whole history.
func Listen(port int) (net.Listener, int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, 0, fmt.Errorf("listen on 127.0.0.1:%d: %w", port, err)
	}
	return ln, ln.Addr().(*net.TCPAddr).Port, nil
}

// URL is the address to open: it carries the token once; the page then
// keeps it in a cookie and drops it from the address bar.
func (s *Server) URL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/?token=%s", s.port, s.token)
}

// cookieName holds the port: cookies are shared by every port of a host,
// and two pages on two memories must not overwrite each other's token.
func (s *Server) cookieName() string { return "gitmem_" + strconv.Itoa(s.port) }

func (s *Server) routes() {
	static, _ := fs.Sub(assetFS, "assets")
	files := http.FileServer(http.FS(static))
	s.mux.HandleFunc("GET /{$}", s.index)
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	s.mux.HandleFunc("GET /api/search", s.apiSearch)
	s.mux.HandleFunc("GET /api/log", s.apiLog)
	s.mux.HandleFunc("GET /api/exchange", s.apiExchange)
	s.mux.HandleFunc("GET /api/timeline", s.apiTimeline)
	s.mux.HandleFunc("GET /api/palace", s.apiPalace)
	s.mux.HandleFunc("GET /api/files", s.apiFiles)
	s.mux.HandleFunc("GET /api/stats", s.apiStats)
	s.mux.HandleFunc("GET /api/facets", s.apiFacets)
	s.mux.HandleFunc("POST /api/forget", s.apiForget)
}

// ServeHTTP checks, in order, the Host (DNS rebinding), the Origin of
// anything that is not a read, where a read comes from, and the token, then sets the headers every
// answer carries. It never sends CORS headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if !s.hostOK(r.Host) {
		httpError(w, http.StatusMisdirectedRequest, "this page answers only at 127.0.0.1:"+strconv.Itoa(s.port)+" or localhost:"+strconv.Itoa(s.port))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if !s.originOK(r.Header.Get("Origin")) {
			httpError(w, http.StatusForbidden, "a change must come from this page (Origin missing or foreign)")
			return
		}
	}
	// Browsers say where a request comes from: another site may link to
	// the page, never fetch or embed from it (the cookie, SameSite=Strict,
	// would not go along anyway).
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.URL.Path != "/" {
		httpError(w, http.StatusForbidden, "requests from other sites are refused")
		return
	}
	ok, answered := s.authorise(w, r)
	if answered {
		return
	}
	if !ok {
		httpError(w, http.StatusUnauthorized, "open the address `git mem ui` printed (it carries the token)")
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) hostOK(host string) bool {
	p := strconv.Itoa(s.port)
	return host == "127.0.0.1:"+p || host == "localhost:"+p
}

func (s *Server) originOK(origin string) bool {
	p := strconv.Itoa(s.port)
	return origin == "http://127.0.0.1:"+p || origin == "http://localhost:"+p
}

// authorise accepts the cookie, or the token in the first page's address:
// then it sets the cookie and redirects to the bare address (answered), so
// the token leaves the address bar and the history.
func (s *Server) authorise(w http.ResponseWriter, r *http.Request) (ok, answered bool) {
	if c, err := r.Cookie(s.cookieName()); err == nil && s.tokenOK(c.Value) {
		return true, false
	}
	if r.Method != http.MethodGet || r.URL.Path != "/" || !s.tokenOK(r.URL.Query().Get("token")) {
		return false, false
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.token, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return true, true
}

func (s *Server) tokenOK(t string) bool {
	return t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	b, err := assetFS.ReadFile("assets/index.html")
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}
